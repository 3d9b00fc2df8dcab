"""Pods through tessera-bridge vs the same work as plain Tessera jobs (issue 18).

One real Tessera cluster (munged, tessera-ctld, NODES tessera-noded declaring CPUS CPUs each) with
the tests' Kubernetes control plane (tests/bridge/k8s_harness.py) and tessera-bridge in front:

1. latency: REPS times, one pod (`sleep 5`, 1 CPU) created with kubectl -> the time until a
   watch (`kubectl get pods -w`, started beforehand) sees it Running; beside it the same job
   submitted with tbatch -> the time until `tqueue` shows it RUNNING (polled every 50 ms). Both
   clocks start before the command (kubectl / tbatch) is run.
2. throughput: 1,000 pods in 100 groups of 10 (Kueue's pod-group labels, 1 CPU each, /bin/true)
   created at once (`kubectl create -f` of one list) -> all Succeeded: wall time, the bridge's CPU
   time (its own and its children's: `munge -n` per call) and its peak memory (VmHWM), ctld's
   CPU time; beside it the same work as plain Tessera jobs: 100 `tbatch -n10 --wrap 'trun
   /bin/true'` (what the bridge submits for a group) and 1,000 `tbatch --wrap /bin/true`.

Prints each part's figures as a JSON line as soon as it is measured. Run by bench/bridge/run.
Figures: bench/RESULTS.md, "Kubernetes bridge (issue 18)". What it found on the way (session 6):
the plain `tbatch -n10 --wrap 'trun /bin/true'` jobs that stayed RUNNING were a noded deadlock
(two steps' tasks holding each other's cgroup gate pipes, fixed in noded/task_set.cc); the pods
part stopped with partly bound groups filling the virtual node (the bridge now gives pods that
hold nothing in Tessera back to allocatable) and, once past that, left a few gang pods Running
after their job ended (status updates sent out of order; fixed in the provider).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
sys.path.insert(0, os.path.join(ROOT, "tests", "bridge"))

from harness import BIN, Cluster, ensure_user, wait_for  # noqa: E402
import k8s_harness  # noqa: E402
from k8s_harness import ControlPlane  # noqa: E402
from test_bridge import Bridge, node_ready  # noqa: E402

USER = "tessera-alice"
NS = "bench"
HZ = os.sysconf("SC_CLK_TCK")


def cpu_of(pid):
    """(own user+sys, children's user+sys) seconds of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ut, st, cut, cst = (int(x) for x in fields[11:15])
    return (ut + st) / HZ, (cut + cst) / HZ


def mem_of(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024  # MiB
    return 0.0


def pod(name, command, labels=None, annotations=None, cpu="1"):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels or {},
                         "annotations": annotations or {}},
            "spec": {"restartPolicy": "Never", "automountServiceAccountToken": False,
                     "nodeSelector": {"tessera.io/partition": "debug"},
                     "tolerations": [{"key": "virtual-kubelet.io/provider", "operator": "Equal",
                                      "value": "tessera", "effect": "NoSchedule"}],
                     "containers": [{"name": "main", "image": "host", "command": command,
                                     "resources": {"requests": {"cpu": cpu, "memory": "16Mi"}}}]}}


class PhaseWatch:
    """`kubectl get pods -w` in the background: the first time each pod is seen in each phase."""

    def __init__(self, cp):
        self.seen = {}
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            [k8s_harness.KUBECTL, f"--kubeconfig={cp.admin_kubeconfig}", "get", "pods", "-n", NS,
             "-w", "-o", "jsonpath={.metadata.name} {.status.phase}{\"\\n\"}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            f = line.split()
            if len(f) == 2:
                with self.lock:
                    self.seen.setdefault((f[0], f[1]), time.time())

    def when(self, name, phase):
        with self.lock:
            return self.seen.get((name, phase))

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def count_phases(cp):
    out = cp.kubectl(["get", "pods", "-n", NS, "-o",
                      "jsonpath={range .items[*]}{.status.phase}{\"\\n\"}{end}"], timeout=120).stdout
    counts = {}
    for ph in out.split():
        counts[ph] = counts.get(ph, 0) + 1
    return counts


def tessera_active(cluster):
    out = cluster.run(["tqueue", "-h", "-o", "%i"], check=False).stdout
    return len(out.split())


def run_plain(cluster, work, label, argv_list):
    """Submits every job (tbatch, as USER) and waits for the queue to be empty."""
    ctld = cluster.procs["ctld"].pid
    c0, t0 = cpu_of(ctld), time.time()
    for argv in argv_list:
        cluster.run(["tbatch", "--parsable", "-o", "/dev/null", *argv], user=USER, cwd=work)
    t_sub = time.time() - t0
    wait_for(lambda: tessera_active(cluster) == 0, timeout=3600, interval=1, what=f"{label} to end")
    wall = time.time() - t0
    c1 = cpu_of(ctld)
    return {"what": label, "submit_s": round(t_sub, 1), "wall_s": round(wall, 1),
            "ctld_cpu_s": round(sum(c1) - sum(c0), 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--cpus", type=int, default=25)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--groups", type=int, default=100)
    ap.add_argument("--group-size", type=int, default=10)
    ap.add_argument("--skip", default="", help="comma list of: latency,pods,plain-gangs,plain-jobs")
    ap.add_argument("--kube-api-qps", type=int, default=0,
                    help="the bridge's --kube-api-qps (burst twice it); 0 = the bridge's default")
    ap.add_argument("--node-status-period", default="",
                    help="the bridge's --node-status-period (e.g. 2s); empty = the bridge's default")
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    k8s_bin = os.environ["TESSERA_K8S_BIN"]
    ensure_user(USER)
    result = {"load_start": os.getloadavg(), "nodes": a.nodes, "cpus_per_node": a.cpus}
    cluster = Cluster(nodes=a.nodes, node_extra=f"CPUs={a.cpus} RealMemory=65536").start()
    cp = bridge = None
    try:
        cp = ControlPlane(cluster.dir, k8s_bin).start()
        work = cluster.user_dir(USER)
        mapping = os.path.join(cluster.dir, "etc", "bridge-mapping.yaml")
        with open(mapping, "w") as f:
            f.write(f"namespaces:\n  {NS}:\n    user: {USER}\n    workdir: {work}\n")
        cp.kubectl(["create", "namespace", NS])
        wait_for(lambda: cp.kubectl(["get", "serviceaccount", "default", "-n", NS],
                                    check=False).returncode == 0, timeout=60, what="service account")
        qps = [f"--kube-api-qps={a.kube_api_qps}", f"--kube-api-burst={2 * a.kube_api_qps}"] \
            if a.kube_api_qps else []
        result["kube_api_qps"] = a.kube_api_qps or "default"
        if a.node_status_period:
            qps.append(f"--node-status-period={a.node_status_period}")
        bridge = Bridge(cluster, cp, mapping, ["--max-pods=5000", *qps]).start()
        wait_for(lambda: node_ready(cp), timeout=120, interval=0.5, what="the virtual node Ready")
        watch = PhaseWatch(cp)
        time.sleep(1)

        def show(key):
            print(json.dumps({key: result[key]}), flush=True)

        if "latency" not in skip:
            k8s, plain = [], []
            for i in range(a.reps):
                name = f"lat-{i}"
                t0 = time.time()
                cp.kubectl(["create", "-f", "-"], input=json.dumps(pod(name, ["/bin/sleep", "5"])))
                wait_for(lambda: watch.when(name, "Running"), timeout=120, interval=0.02,
                         what=f"{name} Running")
                k8s.append(watch.when(name, "Running") - t0)
                t0 = time.time()
                jid = cluster.submit(["-c1", "-o", "/dev/null", "--wrap", "sleep 5"], user=USER, cwd=work)
                wait_for(lambda: cluster.run(["tqueue", "-h", "-j", str(jid), "-o", "%T"],
                                             check=False).stdout.strip() == "RUNNING",
                         timeout=120, interval=0.05, what=f"job {jid} RUNNING")
                plain.append(time.time() - t0)
            result["latency"] = {
                "pod_running_s": {"median": round(statistics.median(k8s), 2), "min": round(min(k8s), 2),
                                  "max": round(max(k8s), 2)},
                "tbatch_running_s": {"median": round(statistics.median(plain), 2),
                                     "min": round(min(plain), 2), "max": round(max(plain), 2)}}
            show("latency")
            wait_for(lambda: tessera_active(cluster) == 0, timeout=120, interval=1, what="latency jobs to end")
            cp.kubectl(["delete", "pods", "--all", "-n", NS, "--wait=true"], timeout=300)

        if "pods" not in skip:
            items = []
            for g in range(a.groups):
                for m in range(a.group_size):
                    items.append(pod(f"g{g:03d}-{m}", ["/bin/true"],
                                     labels={"kueue.x-k8s.io/pod-group-name": f"g{g:03d}"},
                                     annotations={"kueue.x-k8s.io/pod-group-total-count": str(a.group_size)}))
            n = len(items)
            path = os.path.join(tempfile.mkdtemp(), "pods.json")
            with open(path, "w") as f:
                json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
            bpid, ctld = bridge.proc.pid, cluster.procs["ctld"].pid
            b0, c0, t0 = cpu_of(bpid), cpu_of(ctld), time.time()
            cp.kubectl(["create", "-f", path], timeout=1800)
            t_create = time.time() - t0
            peak_rss = 0.0
            while True:
                counts = count_phases(cp)
                peak_rss = max(peak_rss, mem_of(bpid, "VmRSS"))
                if counts.get("Succeeded", 0) + counts.get("Failed", 0) >= n:
                    break
                if time.time() - t0 > 3600:
                    raise AssertionError(f"pods not done after an hour: {counts}")
                time.sleep(2)
            wall = time.time() - t0
            b1, c1 = cpu_of(bpid), cpu_of(ctld)
            result["pods"] = {
                "what": f"{n} pods in {a.groups} groups of {a.group_size} through the bridge",
                "create_s": round(t_create, 1), "wall_s": round(wall, 1), "phases": counts,
                "bridge_cpu_s": round(b1[0] - b0[0], 1),
                "bridge_children_cpu_s": round(b1[1] - b0[1], 1),
                "bridge_peak_rss_mib": round(max(peak_rss, mem_of(bpid, "VmHWM")), 1),
                "ctld_cpu_s": round(sum(c1) - sum(c0), 1)}
            jobs = cluster.run(["tacct", "-n", "-X", "-P", "-S", "now-1hours", "-o", "JobName"]).stdout.split()
            result["pods"]["gang_jobs"] = sum(1 for j in jobs if j.startswith("podgroup-g"))
            show("pods")

        if "plain-gangs" not in skip:
            result["plain_gangs"] = run_plain(
                cluster, work, f"{a.groups} tbatch -n{a.group_size} jobs (trun /bin/true)",
                [[f"-n{a.group_size}", "-c1", "--wrap", f"{BIN}/trun /bin/true"]
                 for _ in range(a.groups)])
            show("plain_gangs")
        if "plain-jobs" not in skip:
            n = a.groups * a.group_size
            result["plain_jobs"] = run_plain(cluster, work, f"{n} tbatch jobs (/bin/true)",
                                             [["-c1", "--wrap", "/bin/true"] for _ in range(n)])
            show("plain_jobs")
        watch.stop()
    finally:
        if bridge:
            bridge.stop()
        if cp:
            cp.stop()
        cluster.stop()
    result["load_end"] = os.getloadavg()
    print(json.dumps({"load": [result["load_start"], result["load_end"]]}))


if __name__ == "__main__":
    main()

"""End-to-end tests of tessera-bridge: a real Kubernetes control plane (etcd, kube-apiserver,
kube-scheduler, kube-controller-manager) in front of a real Tessera dev cluster (munged,
tessera-ctld, two tessera-noded), with the bridge between them. Pods are created with kubectl,
scheduled by kube-scheduler onto the partition's virtual node, and run as Tessera jobs.

Run with tests/bridge/run (builds what is missing, then pytest). Needs TESSERA_K8S_BIN (the
directory tests/bridge/k8s-binaries.sh prints) and $TESSERA_BUILD_DIR/bin/tessera-bridge.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import BIN, Cluster, ensure_user, free_ports, wait_for  # noqa: E402
from k8s_harness import ControlPlane  # noqa: E402

K8S_BIN = os.environ.get("TESSERA_K8S_BIN", "")
USER = "tessera-alice"
NODE = "tessera-debug"  # the harness cluster's partition is "debug"

pytestmark = pytest.mark.skipif(
    not (K8S_BIN and os.path.exists(f"{K8S_BIN}/kube-apiserver")
         and os.path.exists(f"{BIN}/tessera-bridge")),
    reason="needs TESSERA_K8S_BIN (tests/bridge/k8s-binaries.sh) and tessera-bridge "
           "(scripts/build-bridge); tests/bridge/run does both")


class Bridge:
    def __init__(self, cluster, cp, mapping, extra_args=()):
        self.cluster, self.cp, self.mapping = cluster, cp, mapping
        self.extra_args = list(extra_args)
        self.port = free_ports(1)[0]
        self.proc = None
        self.log = os.path.join(cluster.dir, "bridge.log")

    def start(self):
        p = self.cp.pki
        argv = [f"{BIN}/tessera-bridge", f"--ctld=127.0.0.1:{self.cluster.ctld_port}",
                f"--munge-socket={self.cluster.munge_socket}", f"--mapping={self.mapping}",
                f"--kubeconfig={self.cp.bridge_kubeconfig}", f"--listen=127.0.0.1:{self.port}",
                f"--tls-cert={p}/bridge-serving.crt", f"--tls-key={p}/bridge-serving.key",
                f"--client-ca={p}/ca.crt", "--node-ip=127.0.0.1", *self.extra_args]
        self.proc = subprocess.Popen(argv, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT,
                                     start_new_session=True)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_tail(self, n=40):
        with open(self.log, errors="replace") as f:
            return "".join(f.readlines()[-n:])


@pytest.fixture(scope="module")
def env():
    ensure_user(USER)
    cluster = Cluster(nodes=2).start()
    cp = bridge = None
    try:
        cp = ControlPlane(cluster.dir, K8S_BIN).start()
        work = cluster.user_dir(USER)
        mapping = os.path.join(cluster.dir, "etc", "bridge-mapping.yaml")
        with open(mapping, "w") as f:
            f.write(f"namespaces:\n  team-a:\n    user: {USER}\n    workdir: {work}\n")
        for ns in ("team-a", "team-x"):
            cp.kubectl(["create", "namespace", ns])
            wait_for(lambda: cp.kubectl(["get", "serviceaccount", "default", "-n", ns],
                                        check=False).returncode == 0,
                     timeout=60, what=f"the default service account of {ns}")
        bridge = Bridge(cluster, cp, mapping).start()
        wait_for(lambda: node_ready(cp), timeout=90, interval=0.5,
                 what=f"virtual node {NODE} Ready and untainted")
        yield cluster, cp, bridge
    except Exception:
        if bridge:
            print("bridge log:\n" + bridge.log_tail())
        if cp:
            for k in cp.procs:
                print(f"{k} log:\n" + cp.log_tail(k, 10))
        raise
    finally:
        if bridge:
            bridge.stop()
        if cp:
            cp.stop()
        cluster.stop()


def node_ready(cp):
    r = cp.kubectl(["get", "node", NODE, "-o", "json"], check=False)
    if r.returncode != 0:
        return False
    n = json.loads(r.stdout)
    ready = [c for c in n["status"].get("conditions", []) if c["type"] == "Ready"]
    taints = {t["key"] for t in n["spec"].get("taints", [])}
    return ready and ready[0]["status"] == "True" and "node.kubernetes.io/not-ready" not in taints


def pod_manifest(name, script, ns="team-a", deadline=None):
    spec = {
        "restartPolicy": "Never", "automountServiceAccountToken": False,
        "nodeSelector": {"tessera.io/partition": "debug"},
        "tolerations": [{"key": "virtual-kubelet.io/provider", "operator": "Equal",
                         "value": "tessera", "effect": "NoSchedule"}],
        "containers": [{"name": "main", "image": "host", "command": ["/bin/sh", "-c", script],
                        "env": [{"name": "GREETING", "value": "hello"}],
                        "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}],
    }
    if deadline:
        spec["activeDeadlineSeconds"] = deadline
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": ns}, "spec": spec})


def pod(cp, name, ns="team-a"):
    r = cp.kubectl(["get", "pod", name, "-n", ns, "-o", "json"], check=False)
    return json.loads(r.stdout) if r.returncode == 0 else None


def wait_phase(cp, name, phases, ns="team-a", timeout=90):
    def done():
        p = pod(cp, name, ns)
        return p if p and p["status"].get("phase") in phases else None
    return wait_for(done, timeout=timeout, interval=0.5, what=f"pod {ns}/{name} in {phases}")


def job_id(p):
    cid = p["status"]["containerStatuses"][0].get("containerID", "")
    m = re.match(r"tessera://(\d+)$", cid)
    assert m, f"pod status carries no Tessera job: {cid!r}"
    return int(m.group(1))


def terminated(p):
    return p["status"]["containerStatuses"][0]["state"]["terminated"]


def test_virtual_node_has_partition_capacity_taint_and_lease(env):
    cluster, cp, _ = env
    n = cp.get_json("node", NODE)
    cap, alloc = n["status"]["capacity"], n["status"]["allocatable"]
    # The harness partition: two nodes of 2 CPUs and 2048 MiB each.
    assert cap["cpu"] == "4" and cap["memory"] == "4Gi", cap
    assert alloc["cpu"] == "4", alloc
    assert {"key": "virtual-kubelet.io/provider", "value": "tessera", "effect": "NoSchedule"} in \
        n["spec"]["taints"]
    ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["reason"] == "TesseraReady" and "2 usable nodes" in ready["message"]
    assert {c["type"] for c in n["status"]["conditions"]} >= {"MemoryPressure", "DiskPressure",
                                                              "PIDPressure"}
    lease = cp.get_json("lease", NODE, "-n", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == NODE


def test_pod_succeeds_with_exit_code_and_logs(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("ok", 'echo "$GREETING from $KUBERNETES_POD_NAME as $(id -un)"; exit 0',
                          deadline=120))
    p = wait_phase(cp, "ok", ("Succeeded", "Failed"))
    assert p["status"]["phase"] == "Succeeded", p["status"]
    assert terminated(p)["exitCode"] == 0
    jid = job_id(p)
    st, code = cluster.wait_state(jid, "COMPLETED")
    assert code.startswith("0")
    # The job runs as the namespace's user, with the pod's deadline as its time limit.
    out = cluster.run(["tacct", "-n", "-X", "-P", "-j", str(jid), "-o", "User,Timelimit"]).stdout
    user, limit = out.strip().split("|")
    assert user == USER and limit in ("00:02:00", "2:00"), out
    logs = cp.kubectl(["logs", "ok", "-n", "team-a"]).stdout
    assert logs.strip() == f"hello from ok as {USER}", logs


def test_failing_pod_fails_with_its_code(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("bad", "echo failing; exit 3"))
    p = wait_phase(cp, "bad", ("Succeeded", "Failed"))
    assert p["status"]["phase"] == "Failed", p["status"]
    assert terminated(p)["exitCode"] == 3
    st, _ = cluster.wait_state(job_id(p), "FAILED")


def test_logs_tail(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("lines", "for i in 1 2 3 4 5; do echo line$i; done"))
    wait_phase(cp, "lines", ("Succeeded",))
    logs = cp.kubectl(["logs", "lines", "-n", "team-a", "--tail=2"]).stdout
    assert logs.split() == ["line4", "line5"], logs


def test_deleting_a_pod_cancels_its_job(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("sleeper", "sleep 300"))
    p = wait_phase(cp, "sleeper", ("Running",))
    jid = job_id(p)
    cluster.wait_state(jid, "RUNNING")
    cp.kubectl(["delete", "pod", "sleeper", "-n", "team-a", "--wait=true", "--timeout=60s"],
               timeout=90)
    cluster.wait_state(jid, "CANCELLED")
    assert pod(cp, "sleeper") is None


def test_unmapped_namespace_is_refused(env):
    cluster, cp, _ = env
    before = cluster.run(["tacct", "-n", "-X", "-P", "-o", "JobID"]).stdout.split()
    cp.apply(pod_manifest("intruder", "id", ns="team-x"))
    p = wait_phase(cp, "intruder", ("Failed", "Succeeded"), ns="team-x")
    assert p["status"]["phase"] == "Failed"
    assert 'namespace "team-x" is not mapped' in p["status"].get("message", ""), p["status"]
    after = cluster.run(["tacct", "-n", "-X", "-P", "-o", "JobID"]).stdout.split()
    assert after == before, "a job was submitted for an unmapped namespace"


def test_bridge_restart_keeps_the_pod_job_mapping(env):
    cluster, cp, bridge = env
    cp.apply(pod_manifest("survivor", "sleep 12; echo survived"))
    p = wait_phase(cp, "survivor", ("Running",))
    jid = job_id(p)
    bridge.stop()
    bridge.start()
    # The restarted bridge adopts the job (the pod UID is in the job) instead of submitting again.
    p = wait_phase(cp, "survivor", ("Succeeded", "Failed"), timeout=120)
    assert p["status"]["phase"] == "Succeeded", p["status"]
    assert job_id(p) == jid
    names = cluster.run(["tacct", "-n", "-X", "-P", "-o", "JobName"]).stdout.split()
    assert names.count("survivor") == 1, names
    assert "adopted Tessera job %d" % jid in bridge.log_tail(200)

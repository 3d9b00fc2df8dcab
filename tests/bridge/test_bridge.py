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
                f"--client-ca={p}/ca.crt", "--node-ip=127.0.0.1", f"--trun={BIN}/trun",
                f"--tessera-conf={self.cluster.conf}", *self.extra_args]
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


# Each node of the test cluster has one simulated GPU (no hardware is needed: stepd hands out
# its UUID as on a real node).
GRES = "".join(f"NodeName=it{i} Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes\n"
               for i in (1, 2))


@pytest.fixture(scope="module")
def env():
    ensure_user(USER)
    cluster = Cluster(nodes=2, node_extra="Gres=gpu:h100:1", gres=GRES).start()
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


def pod_manifest(name, script, ns="team-a", deadline=None, labels=None, annotations=None,
                 group=None, gpus=0, cpu="1"):
    spec = {
        "restartPolicy": "Never", "automountServiceAccountToken": False,
        "nodeSelector": {"tessera.io/partition": "debug"},
        "tolerations": [{"key": "virtual-kubelet.io/provider", "operator": "Equal",
                         "value": "tessera", "effect": "NoSchedule"}],
        "containers": [{"name": "main", "image": "host", "command": ["/bin/sh", "-c", script],
                        "env": [{"name": "GREETING", "value": "hello"}],
                        "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}],
    }
    if deadline:
        spec["activeDeadlineSeconds"] = deadline
    if gpus:  # an extended resource: its limit is its request
        spec["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": str(gpus)}
    if group:  # Kubernetes' own PodGroup (GenericWorkload)
        spec["schedulingGroup"] = {"podGroupName": group}
    meta = {"name": name, "namespace": ns, "labels": labels or {}, "annotations": annotations or {}}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


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
    assert cap["cpu"] == "4" and cap["memory"] == "4Gi" and cap["nvidia.com/gpu"] == "2", cap
    assert alloc["cpu"] == "4" and alloc["nvidia.com/gpu"] == "2", alloc
    assert {"key": "virtual-kubelet.io/provider", "value": "tessera", "effect": "NoSchedule"} in \
        n["spec"]["taints"]
    ready = [c for c in n["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["reason"] == "TesseraReady" and "2 usable nodes" in ready["message"]
    assert {c["type"] for c in n["status"]["conditions"]} >= {"MemoryPressure", "DiskPressure",
                                                              "PIDPressure"}
    lease = cp.get_json("lease", NODE, "-n", "kube-node-lease")
    assert lease["spec"]["holderIdentity"] == NODE
    # The lease is renewed (the library renews it every quarter of its duration).
    first = lease["spec"]["renewTime"]
    wait_for(lambda: cp.get_json("lease", NODE, "-n", "kube-node-lease")["spec"]["renewTime"] != first,
             timeout=60, interval=1, what="the node lease to be renewed")


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


def test_logs_follow_streams_until_the_job_ends(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("ticker", "for i in 1 2 3 4 5 6; do echo tick$i; sleep 1; done"))
    wait_phase(cp, "ticker", ("Running",))
    # -f while the job runs (6 s): kubectl returns once the job has ended, with every line
    # (without following, it would stop at the lines written so far).
    r = cp.kubectl(["logs", "-f", "ticker", "-n", "team-a"], timeout=90)
    assert r.stdout.split() == [f"tick{i}" for i in range(1, 7)], r.stdout


def test_gpu_pod_sees_its_gpu(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("gpu", 'echo "cvd=$CUDA_VISIBLE_DEVICES"', gpus=1))
    p = wait_phase(cp, "gpu", ("Succeeded", "Failed"))
    assert p["status"]["phase"] == "Succeeded", p["status"]
    out = cp.kubectl(["logs", "gpu", "-n", "team-a"]).stdout.strip()
    assert re.fullmatch(r"cvd=GPU-[0-9a-f-]+", out), out
    tres = cluster.run(["tacct", "-n", "-X", "-P", "-j", str(job_id(p)), "-o", "AllocTRES"]).stdout
    assert "gres/gpu=1" in tres, tres


def test_job_cancelled_in_tessera_ends_its_pod(env):
    cluster, cp, _ = env
    cp.apply(pod_manifest("cancelled", "sleep 300"))
    p = wait_phase(cp, "cancelled", ("Running",))
    jid = job_id(p)
    cluster.run(["tcancel", str(jid)])
    p = wait_phase(cp, "cancelled", ("Succeeded", "Failed"), timeout=60)
    assert p["status"]["phase"] == "Failed" and p["status"]["reason"] == "CANCELLED", p["status"]


def test_ctld_restart_is_survived(env):
    cluster, cp, bridge = env
    cp.apply(pod_manifest("through", "sleep 10; echo done"))
    p = wait_phase(cp, "through", ("Running",))
    jid = job_id(p)
    cluster.kill("ctld")
    time.sleep(2)
    cluster.start_ctld()
    p = wait_phase(cp, "through", ("Succeeded", "Failed"), timeout=120)
    assert p["status"]["phase"] == "Succeeded" and job_id(p) == jid, p["status"]
    assert cp.kubectl(["logs", "through", "-n", "team-a"]).stdout.strip() == "done"
    # The node is Ready again with Tessera's answer.
    try:
        # (noded re-registers with the new ctld on its own backoff; the bridge re-reads every 10 s)
        wait_for(lambda: node_ready(cp), timeout=120, interval=1,
                 what="the node Ready after ctld's restart")
    except AssertionError:
        n = cp.get_json("node", NODE)
        raise AssertionError(f"node not Ready: {n['status']['conditions']} {n['spec'].get('taints')}\n"
                             + cluster.run(["tinfo", "-N"]).stdout)


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


def allocatable_cpus(cp):
    return int(cp.get_json("node", NODE)["status"]["allocatable"]["cpu"])


def test_capacity_drops_while_tessera_runs_other_jobs(env):
    cluster, cp, _ = env
    work = cluster.user_dir(USER)
    job = cluster.submit(["-c2", "-o", "/dev/null", "--wrap", "sleep 120"], user=USER, cwd=work)
    try:
        cluster.wait_state(job, "RUNNING")
        wait_for(lambda: allocatable_cpus(cp) == 2, timeout=40, interval=1,
                 what="allocatable cpu 2 while a plain job holds 2 of 4")
        assert int(cp.get_json("node", NODE)["status"]["capacity"]["cpu"]) == 4
    finally:
        cluster.run(["tcancel", str(job)])
    wait_for(lambda: allocatable_cpus(cp) == 4, timeout=40, interval=1,
             what="allocatable cpu back to 4")


def group_pods(cp, names, script, **kw):
    for n in names:
        cp.apply(pod_manifest(n, script, **kw))


def test_pod_group_of_4_starts_together_and_not_while_3_fit(env):
    """Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1, gang minCount 4): while a plain
    Tessera job holds 1 of the 4 CPUs, none of the 4 pods starts; once it ends, all 4 start at
    once in one gang job, and each pod ends with its own output. The pods ask for half a CPU,
    so kube-scheduler binds all 4 to the node (allocatable 3 while the plain job runs) and the
    decision is Tessera's: each task is a whole core, 4 do not fit in 3."""
    cluster, cp, _ = env
    work = cluster.user_dir(USER)
    blocker = cluster.submit(["-c1", "-o", "/dev/null", "--wrap", "sleep 300"], user=USER, cwd=work)
    cluster.wait_state(blocker, "RUNNING")
    cp.apply(json.dumps({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                         "metadata": {"name": "train4", "namespace": "team-a"},
                         "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}))
    names = [f"train4-{i}" for i in range(4)]
    group_pods(cp, names, "sleep 3; echo member $KUBERNETES_POD_NAME", group="train4", cpu="500m")
    # Only 3 CPUs are free: nothing of the group may run; once the gang job is submitted, every
    # pod is Pending with Tessera's reason in its tessera.io/JobScheduled condition.
    def reasons():
        out = []
        for n in names:
            st = (pod(cp, n) or {}).get("status", {})
            assert st.get("phase") not in ("Running", "Succeeded"), st
            out += [c.get("reason") for c in st.get("conditions", [])
                    if c["type"] == "tessera.io/JobScheduled"]
        return out
    wait_for(lambda: reasons() == ["Resources"] * 4, timeout=40, interval=0.5,
             what="every pod of the group Pending with Tessera's reason Resources")
    end = time.time() + 8
    while time.time() < end:
        assert reasons() == ["Resources"] * 4
        time.sleep(0.5)
    cluster.run(["tcancel", str(blocker)])
    jobs = set()
    for n in names:
        p = wait_phase(cp, n, ("Running", "Succeeded"), timeout=120)
        jobs.add(job_id(p))
    assert len(jobs) == 1, f"the group ran as jobs {jobs}, want one gang job"
    (gang,) = jobs
    out = cluster.run(["tacct", "-n", "-X", "-P", "-j", str(gang), "-o", "JobName,NTasks,State"]).stdout
    assert out.split("|")[:2] == ["podgroup-train4", "4"], out
    for n in names:
        p = wait_phase(cp, n, ("Succeeded", "Failed"), timeout=120)
        assert p["status"]["phase"] == "Succeeded", p["status"]
        assert cp.kubectl(["logs", n, "-n", "team-a"]).stdout.strip() == f"member {n}"


@pytest.mark.parametrize("style", ["kueue", "kubeflow", "volcano"])
def test_labelled_pod_group_is_one_gang_job(env, style):
    """The pod-group labels Kueue sets, the scheduler-plugins label Kubeflow's trainers set
    (with a scheduler-plugins PodGroup), and Volcano's annotation (with a Volcano PodGroup)."""
    cluster, cp, _ = env
    g = f"pg-{style}"
    labels, annotations = {}, {}
    if style == "kueue":
        labels = {"kueue.x-k8s.io/pod-group-name": g}
        annotations = {"kueue.x-k8s.io/pod-group-total-count": "2"}
    elif style == "kubeflow":
        labels = {"scheduling.x-k8s.io/pod-group": g, "training.kubeflow.org/job-name": g,
                  "training.kubeflow.org/replica-type": "worker"}
        cp.apply(json.dumps({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
                             "metadata": {"name": g, "namespace": "team-a"},
                             "spec": {"minMember": 2}}))
    else:
        annotations = {"scheduling.k8s.io/group-name": g}
        cp.apply(json.dumps({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                             "metadata": {"name": g, "namespace": "team-a"},
                             "spec": {"minMember": 2}}))
    names = [f"{g}-0", f"{g}-1"]
    cp.apply(pod_manifest(names[0], "echo $KUBERNETES_POD_NAME", labels=labels, annotations=annotations))
    # One member alone waits for its group: no job.
    time.sleep(3)
    p = pod(cp, names[0])
    assert p["status"].get("phase") == "Pending", p["status"]
    cond = [c for c in p["status"].get("conditions", []) if c["type"] == "tessera.io/JobScheduled"]
    assert cond and cond[0]["reason"] == "PodGroupWaiting", p["status"]
    cp.apply(pod_manifest(names[1], "echo $KUBERNETES_POD_NAME", labels=labels, annotations=annotations))
    ps = [wait_phase(cp, n, ("Succeeded", "Failed"), timeout=90) for n in names]
    assert [p["status"]["phase"] for p in ps] == ["Succeeded", "Succeeded"], [p["status"] for p in ps]
    assert job_id(ps[0]) == job_id(ps[1])

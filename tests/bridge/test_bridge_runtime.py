"""The bridge's container runtimes (issue 18): multi-container pods (init containers first, each
container's own exit code and log), the podman runtime (a local image run rootless as the mapped
user inside the job's cgroup), kubectl exec (in the job's cgroup as the user, with stdin and a
tty; inside the container for podman), GPU pods on simulated GPUs (nvidia.com/gpu and a MIG
profile).

Two levels, as for the bridge's other tests:
- the provider against a real Tessera cluster (munged, tessera-ctld, tessera-noded), no
  Kubernetes: runs the Go test binary scripts/build-bridge test builds;
- through a real Kubernetes control plane (kubectl apply / exec / logs), when TESSERA_K8S_BIN
  holds the binaries (tests/bridge/run).
The podman parts need podman, runc and busybox-static (tests/bridge/install-oci-deps) and build
their image with tests/bridge/oci-image.sh.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import BIN, Cluster, ensure_user, wait_for  # noqa: E402

TEST_BIN = os.path.join(BIN, "tessera-bridge-provider.test")
RUNTIME_TEST_BIN = os.path.join(BIN, "tessera-bridge-runtime.test")
USER = "tessera-alice"
IMAGE = "localhost/tessera-busybox:1"
K8S_BIN = os.environ.get("TESSERA_K8S_BIN", "")
# crun refuses hosts with cgroup v1 and v2 mounted side by side; runc runs there.
OCI_RUNTIME = "runc" if shutil.which("runc") else ""

needs_provider = pytest.mark.skipif(not os.path.exists(TEST_BIN),
                                    reason="needs scripts/build-bridge test")


def podman_ready():
    return shutil.which("podman") and os.path.exists("/bin/busybox")


@pytest.fixture(scope="module")
def image():
    """The test image in the user's rootless store, or None without podman."""
    ensure_user(USER)
    if not podman_ready():
        return None
    subprocess.run([os.path.join(HERE, "oci-image.sh"), USER, IMAGE], check=True,
                   capture_output=True, text=True)
    return IMAGE


def run_go(cluster, test, image, extra_env=None):
    env = dict(os.environ, TESSERA_BRIDGE_E2E_CTLD=f"127.0.0.1:{cluster.ctld_port}",
               TESSERA_BRIDGE_E2E_MUNGE=cluster.munge_socket, TESSERA_BRIDGE_E2E_USER=USER,
               TESSERA_BRIDGE_E2E_WORKDIR=cluster.user_dir(USER),
               TESSERA_BRIDGE_E2E_IMAGE=image or "", TESSERA_BRIDGE_E2E_OCI_RUNTIME=OCI_RUNTIME,
               **(extra_env or {}))
    p = subprocess.run([TEST_BIN, "-test.run", f"^{test}$", "-test.v"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and f"--- PASS: {test}" in p.stdout, p.stdout + p.stderr
    return p.stdout


def test_podman_script_for_real_in_a_job_cgroup(image):
    """The runtime package's own podman test (no ctld): the script of a pod with an init
    container and two containers runs as the user in a job_<id> cgroup, exec goes into one."""
    if not os.path.exists(RUNTIME_TEST_BIN):
        pytest.skip("needs scripts/build-bridge test")
    if not image:
        pytest.skip("podman or busybox-static missing (tests/bridge/install-oci-deps)")
    env = dict(os.environ, TESSERA_BRIDGE_PODMAN_USER=USER, TESSERA_BRIDGE_PODMAN_IMAGE=image,
               TESSERA_BRIDGE_PODMAN_RUNTIME=OCI_RUNTIME)
    test = "TestPodmanScriptForRealInAJobCgroup"
    p = subprocess.run([RUNTIME_TEST_BIN, "-test.run", f"^{test}$", "-test.v"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and f"--- PASS: {test}" in p.stdout, p.stdout + p.stderr


@pytest.fixture(scope="module")
def cluster(image):
    c = Cluster(nodes=2).start()
    yield c
    c.stop()


@needs_provider
@pytest.mark.parametrize("test", ["TestE2EMultiContainerPodRunsInitFirstAndReportsEachExitCode",
                                  "TestE2EEndedInitContainerIsTerminatedWhileThePodRuns",
                                  "TestE2EExecRunsInTheJobsCgroupAsTheUser"])
def test_host_runtime(cluster, test):
    run_go(cluster, test, None)


@needs_provider
@pytest.mark.parametrize("test", ["TestE2EPodmanPodRunsItsImageAsTheUserInTheJobsCgroup",
                                  "TestE2EExecInPodmanContainer"])
def test_podman_runtime(cluster, image, test):
    if not image:
        pytest.skip("podman or busybox-static missing (tests/bridge/install-oci-deps)")
    out = run_go(cluster, test, image)
    assert "SKIP" not in out, out


# One node with two simulated H100s, GPU 1 in MIG mode (as tests/integration/test_gpu_mig.py).
GRES = ("NodeName=it1 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes\n"
        "NodeName=it1 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes MigEnabled=yes "
        "MigLayout=3g.40gb@0,1g.10gb@4,1g.10gb@5\n")


@needs_provider
def test_gpu_pods_see_their_gpu_and_mig_instance(image):
    c = Cluster(nodes=1, node_extra="Gres=gpu:h100:2", gres=GRES).start()
    try:
        run_go(c, "TestE2EGPUPodSeesItsGPUAndMIGProfileMapsToMIG", image,
               {"TESSERA_BRIDGE_E2E_GPUS": "1"})
    finally:
        c.stop()


# ---- through Kubernetes ---------------------------------------------------------------------
k8s = pytest.mark.skipif(
    not (K8S_BIN and os.path.exists(f"{K8S_BIN}/kube-apiserver")
         and os.path.exists(f"{BIN}/tessera-bridge")),
    reason="needs TESSERA_K8S_BIN (tests/bridge/k8s-binaries.sh) and tessera-bridge")


@pytest.fixture(scope="module")
def kenv(image):
    from k8s_harness import ControlPlane
    from test_bridge import Bridge, node_ready
    cluster = Cluster(nodes=2).start()
    cp = bridge = None
    try:
        cp = ControlPlane(cluster.dir, K8S_BIN).start()
        work = cluster.user_dir(USER)
        mapping = os.path.join(cluster.dir, "etc", "bridge-mapping.yaml")
        with open(mapping, "w") as f:
            f.write(f"namespaces:\n  team-a:\n    user: {USER}\n    workdir: {work}\n"
                    f"  team-p:\n    user: {USER}\n    workdir: {work}\n    runtime: podman\n")
        for ns in ("team-a", "team-p"):
            cp.kubectl(["create", "namespace", ns])
            wait_for(lambda ns=ns: cp.kubectl(["get", "serviceaccount", "default", "-n", ns],
                                              check=False).returncode == 0,
                     timeout=60, what=f"the default service account of {ns}")
        extra = [f"--podman-runtime={OCI_RUNTIME}"] if OCI_RUNTIME else []
        bridge = Bridge(cluster, cp, mapping, extra).start()
        wait_for(lambda: node_ready(cp), timeout=90, interval=0.5, what="the virtual node Ready")
        yield cluster, cp, bridge
    except Exception:
        if bridge:
            print("bridge log:\n" + bridge.log_tail())
        raise
    finally:
        if bridge:
            bridge.stop()
        if cp:
            cp.stop()
        cluster.stop()


def manifest(name, ns, containers, init=()):
    spec = {"restartPolicy": "Never", "automountServiceAccountToken": False,
            "nodeSelector": {"tessera.io/partition": "debug"},
            "tolerations": [{"key": "virtual-kubelet.io/provider", "operator": "Equal",
                             "value": "tessera", "effect": "NoSchedule"}],
            "containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": ns}, "spec": spec})


def container(name, script, image="host"):
    c = {"name": name, "image": image, "command": ["/bin/sh", "-c", script],
         "env": [{"name": "GREETING", "value": "hello"}],
         "resources": {"requests": {"cpu": "500m", "memory": "32Mi"}}}
    if image != "host":
        c["imagePullPolicy"] = "Never"
        # podman itself (conmon, the runtime) runs inside the job's memory limit: 32 MiB is too
        # little (the job ends OUT_OF_MEMORY as podman starts).
        c["resources"]["requests"]["memory"] = "256Mi"
    return c


def wait_phase(cp, name, ns, phases, timeout=120):
    def done():
        r = cp.kubectl(["get", "pod", name, "-n", ns, "-o", "json"], check=False)
        p = json.loads(r.stdout) if r.returncode == 0 else None
        return p if p and p["status"].get("phase") in phases else None
    return wait_for(done, timeout=timeout, interval=0.5, what=f"pod {ns}/{name} in {phases}")


@k8s
def test_k8s_multi_container_pod(kenv):
    _, cp, _ = kenv
    cp.apply(manifest("multi", "team-a",
                      [container("main", "test -f ready && echo main $GREETING"),
                       container("side", "test -f ready && echo side; exit 5")],
                      init=[container("prep", "sleep 1; touch ready; echo prepared")]))
    p = wait_phase(cp, "multi", "team-a", ("Succeeded", "Failed"))
    assert p["status"]["phase"] == "Failed", p["status"]
    codes = {c["name"]: c["state"]["terminated"]["exitCode"]
             for c in p["status"]["containerStatuses"] + p["status"]["initContainerStatuses"]}
    assert codes == {"prep": 0, "main": 0, "side": 5}, codes
    for c, want in (("prep", "prepared"), ("main", "main hello"), ("side", "side")):
        assert cp.kubectl(["logs", "multi", "-n", "team-a", "-c", c]).stdout.strip() == want


@k8s
def test_k8s_exec_host_runtime(kenv):
    cluster, cp, _ = kenv
    cp.apply(manifest("execme", "team-a", [container("main", "sleep 120")]))
    wait_phase(cp, "execme", "team-a", ("Running",))

    def try_exec():
        r = cp.kubectl(["exec", "-i", "execme", "-n", "team-a", "--", "/bin/sh", "-c",
                        'read l; echo "$l $(id -un) $GREETING"; grep -c job_ /proc/self/cgroup; '
                        "exit 6"], check=False, input="typed\n")
        return r if r.returncode != 1 or "runs on" not in r.stderr else None
    r = wait_for(try_exec, timeout=30, interval=0.5, what="exec into the running job")
    assert r.returncode == 6, (r.returncode, r.stdout, r.stderr)
    lines = r.stdout.split("\n")
    assert lines[0] == f"typed {USER} hello" and int(lines[1]) >= 1, r.stdout
    cp.kubectl(["delete", "pod", "execme", "-n", "team-a", "--wait=true", "--timeout=60s"],
               timeout=90)


@k8s
def test_k8s_podman_pod_runs_its_image(kenv, image):
    if not image:
        pytest.skip("podman or busybox-static missing")
    _, cp, _ = kenv
    cp.apply(manifest("oci", "team-p",
                      [container("main", 'echo "uid=$(id -u) $GREETING"; ls /bin/busybox; '
                                 "sleep 20; exit 4", image=image)]))
    p = wait_phase(cp, "oci", "team-p", ("Running", "Succeeded", "Failed"))
    assert p["status"]["phase"] == "Running", p["status"]
    tries = []

    def exec_once():
        r = cp.kubectl(["exec", "oci", "-n", "team-p", "--", "cat", "/etc/hostname"], check=False)
        tries.append((r.returncode, r.stderr.strip()[-300:]))
        return r if r.returncode == 0 else None
    try:
        r = wait_for(exec_once, timeout=30, interval=0.5, what="exec into the podman container")
    except AssertionError:
        st = cp.get_json("pod", "oci", "-n", "team-p")["status"]
        raise AssertionError(f"kubectl exec never succeeded; tries: {tries[:3]} {tries[-2:]}; {st}")
    assert r.stdout.strip(), r
    p = wait_phase(cp, "oci", "team-p", ("Succeeded", "Failed"))
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 4, p["status"]
    uid = int(subprocess.run(["id", "-u", USER], capture_output=True, text=True).stdout)
    logs = cp.kubectl(["logs", "oci", "-n", "team-p"]).stdout
    assert logs.split("\n")[:2] == [f"uid={uid} hello", "/bin/busybox"], logs

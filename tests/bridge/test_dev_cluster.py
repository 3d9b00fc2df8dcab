"""`scripts/dev-cluster up --with-k8s` end to end, as a newcomer runs it (issue 18): the dev
cluster, the Kubernetes control plane and tessera-bridge come up under a fresh run directory;
a pod applied with kubectl runs as a Tessera job and Succeeds; `kubectl logs` shows its output;
`scripts/dev-cluster down` leaves no process of that run directory behind.

The dev cluster listens on etc/demo/tessera.conf's fixed ports (ctld 16817, nodes 17001-17004,
metrics 19417, 19001-19004): the test fails, naming them, when another dev cluster holds them.
Run by tests/bridge/run (TESSERA_K8S_BIN, tessera-bridge built).
"""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
K8S_BIN = os.environ.get("TESSERA_K8S_BIN", "")
PORTS = (16817, 17001, 17002, 17003, 17004, 19417, 19001, 19002, 19003, 19004)

pytestmark = pytest.mark.skipif(
    not (K8S_BIN and os.path.exists(f"{K8S_BIN}/kube-apiserver")),
    reason="needs TESSERA_K8S_BIN (tests/bridge/k8s-binaries.sh); tests/bridge/run sets it")

POD = """apiVersion: v1
kind: Pod
metadata: {name: newcomer}
spec:
  restartPolicy: Never
  nodeSelector: {tessera.io/partition: cpu}
  tolerations:
  - {key: virtual-kubelet.io/provider, operator: Equal, value: tessera, effect: NoSchedule}
  containers:
  - name: main
    image: host
    command: ["/bin/sh", "-c", "echo newcomer-pod-ran as $(id -un) in job $SLURM_JOB_ID"]
    resources: {requests: {cpu: "1", memory: 32Mi}}
"""


def port_taken(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def processes_of(run):
    """pid -> command line of every process whose command line names the run directory."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if run in cmd and int(pid) != os.getpid():
            out[int(pid)] = cmd
    return out


@pytest.fixture
def run_dir():
    taken = [p for p in PORTS if port_taken(p)]
    assert not taken, f"ports {taken} of etc/demo/tessera.conf are in use (another dev cluster?)"
    d = tempfile.mkdtemp(prefix="tessera-devk8s-")
    os.chmod(d, 0o755)
    env = dict(os.environ, TESSERA_RUN_DIR=d)
    yield d, env
    subprocess.run([f"{ROOT}/scripts/dev-cluster", "down"], env=env, capture_output=True)
    if os.environ.get("TESSERA_KEEP_TEST_DIRS") != "1":
        shutil.rmtree(d, ignore_errors=True)


def test_dev_cluster_with_k8s_runs_a_pod_and_down_stops_everything(run_dir):
    run, env = run_dir
    up = subprocess.run([f"{ROOT}/scripts/dev-cluster", "up", "--with-k8s"], env=env,
                        capture_output=True, text=True, timeout=1800)
    assert up.returncode == 0, up.stdout[-4000:] + up.stderr[-4000:]
    # What `up` printed: its own example pod ran, and how to reach kubectl.
    assert "hello from hello-k8s" in up.stdout, up.stdout[-3000:]
    assert f"export KUBECONFIG={run}/k8s/admin.kubeconfig PATH={K8S_BIN}:$PATH" in up.stdout
    # The newcomer's steps, with what `up` told them to export.
    kenv = dict(os.environ, KUBECONFIG=f"{run}/k8s/admin.kubeconfig",
                PATH=f"{K8S_BIN}:{os.environ['PATH']}")

    def kubectl(*args, check=True):
        p = subprocess.run(["kubectl", *args], env=kenv, capture_output=True, text=True,
                           timeout=120, input=POD if "-f" in args else None)
        assert not check or p.returncode == 0, f"kubectl {args}: {p.stdout}{p.stderr}"
        return p

    kubectl("apply", "-f", "-")
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/newcomer", "--timeout=180s")
    logs = kubectl("logs", "newcomer").stdout
    assert "newcomer-pod-ran as tessera-demo in job " in logs, logs
    job = logs.split()[-1]
    acct = subprocess.run([f"{env.get('TESSERA_BUILD_DIR', ROOT + '/build')}/bin/tacct", "-n",
                           "-X", "-P", "-j", job, "-o", "JobName,State"], capture_output=True,
                          text=True, env=dict(os.environ, TESSERA_CONF=f"{run}/etc/tessera.conf"))
    assert acct.stdout.strip() == "newcomer|COMPLETED", acct.stdout + acct.stderr
    assert processes_of(run), "nothing of the run directory was running"

    down = subprocess.run([f"{ROOT}/scripts/dev-cluster", "down"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert down.returncode == 0, down.stdout + down.stderr
    deadline = time.time() + 10
    while processes_of(run) and time.time() < deadline:
        time.sleep(0.2)
    assert processes_of(run) == {}
    left = [p for p in PORTS if port_taken(p)]
    assert left == [], f"ports still listening after down: {left}"
    status = subprocess.run([f"{ROOT}/scripts/dev-cluster", "status"], env=env,
                            capture_output=True, text=True)
    assert "running" not in status.stdout, status.stdout

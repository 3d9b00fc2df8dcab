"""The bridge's provider against a real Tessera cluster (munged, tessera-ctld, two
tessera-noded), without Kubernetes: pods given to the provider run as jobs through ctld's public
gRPC API with munge credentials; status, exit codes, logs, deletion -> cancel, restart adoption,
capacity. Runs the Go test binary scripts/build-bridge test builds
($TESSERA_BUILD_DIR/bin/tessera-bridge-provider.test)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import BIN, Cluster, ensure_user  # noqa: E402

TEST_BIN = os.path.join(BIN, "tessera-bridge-provider.test")
USER = "tessera-alice"

pytestmark = pytest.mark.skipif(not os.path.exists(TEST_BIN),
                                reason="needs scripts/build-bridge test")


@pytest.fixture
def cluster():
    ensure_user(USER)
    c = Cluster(nodes=2).start()
    yield c
    c.stop()


@pytest.mark.parametrize("test", ["TestE2EPodLifecycleAgainstCtld", "TestE2EBridgeRestartAdoptsJobs",
                                  "TestE2ENodeCapacityFollowsTessera",
                                  "TestE2EPendingPodCarriesTesseraReason",
                                  # issue 18: pod groups as gang jobs, WatchJobs events
                                  "TestE2EPodGroupStartsTogether",
                                  "TestE2EPodGroupMemberDeletionEndsTheGang",
                                  "TestE2EPodGroupRestartAdopts", "TestE2ERequeueIsAPodEvent"])
def test_provider_against_ctld(cluster, test):
    env = dict(os.environ, TESSERA_BRIDGE_E2E_CTLD=f"127.0.0.1:{cluster.ctld_port}",
               TESSERA_BRIDGE_E2E_MUNGE=cluster.munge_socket, TESSERA_BRIDGE_E2E_USER=USER,
               TESSERA_BRIDGE_E2E_WORKDIR=cluster.user_dir(USER),
               TESSERA_BRIDGE_E2E_TRUN=f"{BIN}/trun", TESSERA_BRIDGE_E2E_CONF=cluster.conf)
    p = subprocess.run([TEST_BIN, "-test.run", f"^{test}$", "-test.v"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and f"--- PASS: {test}" in p.stdout, p.stdout + p.stderr


def test_bridge_follows_jobs_across_a_ctld_restart(cluster, tmp_path):
    """The bridge follows jobs through ctld's WatchJobs stream; ctld restarts while a pod runs:
    the bridge reconnects (from the last event seen) and the pod still ends Succeeded."""
    import time
    from harness import wait_for
    marker = str(tmp_path / "running")
    env = dict(os.environ, TESSERA_BRIDGE_E2E_CTLD=f"127.0.0.1:{cluster.ctld_port}",
               TESSERA_BRIDGE_E2E_MUNGE=cluster.munge_socket, TESSERA_BRIDGE_E2E_USER=USER,
               TESSERA_BRIDGE_E2E_WORKDIR=cluster.user_dir(USER),
               TESSERA_BRIDGE_E2E_RESTART_MARKER=marker)
    test = "TestE2ESurvivesCtldRestart"
    p = subprocess.Popen([TEST_BIN, "-test.run", f"^{test}$", "-test.v"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: os.path.exists(marker) or p.poll() is not None, timeout=120,
                 what="the pod to run")
        assert os.path.exists(marker), p.communicate()[0]
        cluster.kill("ctld")
        time.sleep(1)
        cluster.start_ctld()
        out = p.communicate(timeout=120)[0]
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0 and f"--- PASS: {test}" in out, out


def test_only_root_sets_pod_uids(cluster, tmp_path):
    """JobSpec.k8s_pod_uids ties a job to pods; only the bridge's identity (root) may set it."""
    import grpc
    from grpc_tools import protoc
    from harness import ROOT
    proto_dir = os.path.join(ROOT, "proto")
    for f in ("types", "controller"):
        assert protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={tmp_path}",
                            f"--grpc_python_out={tmp_path}", f"{proto_dir}/tessera/v1/{f}.proto"]) == 0
    sys.path.insert(0, str(tmp_path))
    from tessera.v1 import controller_pb2, controller_pb2_grpc, types_pb2
    def cred():  # one credential per call: ctld refuses a replayed one
        return subprocess.run(["runuser", "-u", USER, "--", "munge", "-S", cluster.munge_socket, "-n"],
                              capture_output=True, text=True, check=True).stdout.strip()
    stub = controller_pb2_grpc.ControllerStub(grpc.insecure_channel(f"127.0.0.1:{cluster.ctld_port}"))
    spec = types_pb2.JobSpec(name="claim", argv=["/bin/true"], workdir="/tmp",
                             k8s_pod_uids=["6f1c2d3e-aaaa-4bbb-8ccc-123456789abc"])
    spec.task_groups.add(name="main", count=1).per_task.cpus = 1
    with pytest.raises(grpc.RpcError) as e:
        stub.SubmitJob(controller_pb2.SubmitJobRequest(spec=spec),
                       metadata=[("x-tessera-munge", cred())], timeout=30)
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED, e.value
    assert "k8s_pod_uids" in e.value.details()
    # The same job without the field is the user's to submit.
    del spec.k8s_pod_uids[:]
    r = stub.SubmitJob(controller_pb2.SubmitJobRequest(spec=spec),
                       metadata=[("x-tessera-munge", cred())], timeout=30)
    assert r.job_id > 0


def test_kubelet_api_requires_the_apiservers_client_certificate(cluster, tmp_path):
    """The bridge's kubelet API (kubectl logs) answers only clients with a certificate from
    --client-ca; no Kubernetes is needed to check that (the kubeconfig points nowhere)."""
    import json
    import time
    from harness import free_ports, wait_for
    from k8s_harness import _openssl, make_cert

    d = str(tmp_path)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.crt", "-days", "1", "-subj", "/CN=test-ca", cwd=d)
    make_cert(d, "serving", "tessera-bridge", san="IP:127.0.0.1")
    make_cert(d, "client", "kube-apiserver-kubelet-client", client=True)
    mapping = os.path.join(d, "m.yaml")
    with open(mapping, "w") as f:
        f.write(f"namespaces:\n  team-a:\n    user: {USER}\n")
    kc = os.path.join(d, "kc")
    with open(kc, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "t",
                   "clusters": [{"name": "t", "cluster": {"server": "https://127.0.0.1:1"}}],
                   "users": [{"name": "u", "user": {"token": "x"}}],
                   "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u"}}]}, f)
    port = free_ports(1)[0]
    bridge = subprocess.Popen(
        [os.path.join(BIN, "tessera-bridge"), f"--ctld=127.0.0.1:{cluster.ctld_port}",
         f"--munge-socket={cluster.munge_socket}", f"--mapping={mapping}", f"--kubeconfig={kc}",
         f"--listen=127.0.0.1:{port}", f"--tls-cert={d}/serving.crt",
         f"--tls-key={d}/serving.key", f"--client-ca={d}/ca.crt"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"https://127.0.0.1:{port}/containerLogs/team-a/nopod/main"

        def curl(*extra):
            return subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                                   "--cacert", f"{d}/ca.crt", *extra, url],
                                  capture_output=True, text=True, timeout=30)
        wait_for(lambda: curl("--cert", f"{d}/client.crt", "--key", f"{d}/client.key").stdout
                 not in ("", "000"), timeout=60, what="the kubelet API to listen")
        # With the apiserver's client certificate: the API answers (this pod is not the bridge's).
        with_cert = curl("--cert", f"{d}/client.crt", "--key", f"{d}/client.key").stdout
        assert with_cert == "404", with_cert
        # Without a client certificate the TLS handshake is refused: no HTTP answer at all.
        without = curl()
        assert without.returncode != 0 and without.stdout == "000", (without.returncode, without.stdout)
    finally:
        bridge.terminate()
        bridge.wait(timeout=20)

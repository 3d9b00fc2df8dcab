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
                                  "TestE2ENodeCapacityFollowsTessera"])
def test_provider_against_ctld(cluster, test):
    env = dict(os.environ, TESSERA_BRIDGE_E2E_CTLD=f"127.0.0.1:{cluster.ctld_port}",
               TESSERA_BRIDGE_E2E_MUNGE=cluster.munge_socket, TESSERA_BRIDGE_E2E_USER=USER,
               TESSERA_BRIDGE_E2E_WORKDIR=cluster.user_dir(USER))
    p = subprocess.run([TEST_BIN, "-test.run", f"^{test}$", "-test.v"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and f"--- PASS: {test}" in p.stdout, p.stdout + p.stderr

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import TEST_USERS, Cluster, ensure_user  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def test_users():
    if os.geteuid() != 0:
        pytest.exit("integration tests run as root (they create users and start daemons)", 2)
    return [ensure_user(u) for u in TEST_USERS]


@pytest.fixture(scope="module")
def cluster():
    """One 2-node cluster with TLS, shared by the tests of a module."""
    c = Cluster(nodes=2, tls=True)
    try:
        yield c.start()
    finally:
        c.stop()


@pytest.fixture
def fresh_cluster():
    """A cluster of its own, for tests that kill daemons. Short node timeout."""
    made = []

    def make(**kw):
        kw.setdefault("node_timeout", 4)
        c = Cluster(**kw)
        made.append(c)
        return c
    yield make
    for c in made:
        c.stop()

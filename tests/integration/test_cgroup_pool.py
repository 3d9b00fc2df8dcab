"""Issue 20 §2: noded's pool of released v1 job cgroups, with real cgroups. A job the OOM killer
hit leaves its cgroup to the next jobs of the node, which still end COMPLETED; nothing named for a job is left once the jobs
have ended; the pool is bounded and goes when noded stops. Needs root and cgroup v1."""
import glob
import os

import pytest

from harness import Cluster, wait_for

ROOT = "/sys/fs/cgroup"


def _v1():
    with open("/proc/mounts") as f:
        mounts = [line.split() for line in f]
    return os.geteuid() == 0 and any(m[2] == "cgroup" and m[1] == f"{ROOT}/memory" for m in mounts) \
        and not any(m[2] == "cgroup2" and m[1] == ROOT for m in mounts)


pytestmark = pytest.mark.skipif(not _v1(), reason="needs root and cgroup v1 under /sys/fs/cgroup")


def test_pooled_cgroups_are_reused_bounded_and_removed():
    c = Cluster(nodes=1).start()
    try:
        work = c.user_dir("tessera-alice")
        oom = c.submit(["--mem=50M", "--wrap", "head -c 300M /dev/zero | tail"],
                       user="tessera-alice", cwd=work)
        assert c.wait_state(oom, ["OUT_OF_MEMORY", "COMPLETED", "FAILED"], timeout=60)[0] == \
            "OUT_OF_MEMORY"
        parent = None
        for i in range(3):  # each takes the pooled cgroup the job before released
            job = c.submit(["--mem=50M", "-o", f"cg{i}.out", "--wrap", "cat /proc/self/cgroup"],
                           user="tessera-alice", cwd=work)
            assert c.wait_state(job, ["COMPLETED", "FAILED", "OUT_OF_MEMORY"], timeout=60)[0] == \
                "COMPLETED"
            lines = dict(line.split(":", 2)[1:] for line in open(os.path.join(work, f"cg{i}.out")).read().split())
            assert lines["freezer"].endswith(f"/job_{job}")
            assert lines["memory"].endswith(f"/job_{job}/batch")  # the accounting child
            parent = os.path.dirname(lines["freezer"])
        hierarchies = [h for h in ("cpuset", "memory", "devices", "pids", "freezer", "cpuacct")
                       if os.path.isdir(f"{ROOT}/{h}{parent}")]
        assert "memory" in hierarchies and "freezer" in hierarchies

        def released():
            return not any(glob.glob(f"{ROOT}/{h}{parent}/job_*") for h in hierarchies)
        wait_for(released, timeout=10, what="every job cgroup to be released")
        for h in hierarchies:
            # One job at a time on one node: every job took the slot the one before released.
            assert len(glob.glob(f"{ROOT}/{h}{parent}/pool_*")) == 1, h
        # Session 8: the slot keeps the batch script's accounting child (memory, cpuacct).
        assert len(glob.glob(f"{ROOT}/memory{parent}/pool_*/batch")) == 1
        # And released cgroups do not pile up when jobs overlap: at most 16 slots.
        jobs = [c.submit(["--wrap", "sleep 1"], user="tessera-alice", cwd=work) for _ in range(20)]
        for job in jobs:
            assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=120)[0] == "COMPLETED"
        wait_for(released, timeout=10, what="every job cgroup to be released")
        for h in hierarchies:
            assert 1 <= len(glob.glob(f"{ROOT}/{h}{parent}/pool_*")) <= 16, h
        c.kill("noded-it1")  # SIGTERM: noded removes its pool as it stops
        for h in hierarchies:
            assert not glob.glob(f"{ROOT}/{h}{parent}/pool_*"), h
    finally:
        c.stop()  # (SIGKILLs noded; the harness removes what a test left)

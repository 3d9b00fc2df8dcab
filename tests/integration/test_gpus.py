"""Simulated GPUs end to end: allocation by index with UUIDs, XID health draining one GPU,
the admin's ignore list and resume."""
import os
import time

import pytest

from harness import Cluster, wait_for

GRES = "NodeName=it[1-2] Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n"


@pytest.fixture(scope="module")
def gc():
    c = Cluster(nodes=2, node_extra="Gres=gpu:a100:2", gres=GRES, extra_conf="GpuIgnoredXids=13,43\n")
    try:
        yield c.start()
    finally:
        c.stop()


def gpu_uuids(c, node):
    out = c.run(["tcontrol", "show", "node", node]).stdout
    return out


def test_gpu_jobs_get_distinct_devices(gc):
    work = gc.user_dir("tessera-alice")
    jobs = [gc.submit(["-w", "it1", "--gpus-per-node=1", "-o", f"g{i}.out", "--wrap",
                       "echo $CUDA_VISIBLE_DEVICES; sleep 2"], user="tessera-alice", cwd=work)
            for i in range(3)]
    for j in jobs[:2]:
        wait_for(lambda j=j: gc.acct_state(j)[0] in ("RUNNING", "COMPLETED"), what="GPU jobs to start")
    # Two GPUs on it1: the third job waits for one.
    assert gc.acct_state(jobs[2])[0] == "PENDING"
    for j in jobs:
        assert gc.wait_state(j, "COMPLETED", timeout=30)[0] == "COMPLETED"
    seen = [open(os.path.join(work, f"g{i}.out")).read().strip() for i in range(3)]
    assert all(s.startswith("GPU-") and "," not in s for s in seen)
    assert seen[0] != seen[1]


def test_xid_drains_only_that_gpu_and_resume_returns_it(gc):
    spool = os.path.join(gc.dir, "spool", "it2")
    with open(os.path.join(spool, "inject-xid.0"), "w") as f:
        f.write("13\n")  # on the ignore list: nothing happens
    time.sleep(2.5)
    assert "DRAIN" not in gc.run(["tcontrol", "show", "node", "it2"]).stdout
    with open(os.path.join(spool, "inject-xid.0"), "w") as f:
        f.write("79\n")  # fell off the bus
    wait_for(lambda: "DRAIN" in gc.run(["tcontrol", "show", "node", "it2"]).stdout, what="GPU 0 drained")
    assert "X" in gc.run(["tinfo", "--gpus"]).stdout
    # The node still runs CPU and single-GPU work, but a 2-GPU job cannot start there.
    work = gc.user_dir("tessera-bob")
    two = gc.submit(["-w", "it2", "--gpus-per-node=2", "--wrap", "true"], user="tessera-bob", cwd=work)
    one = gc.submit(["-w", "it2", "--gpus-per-node=1", "--wrap", "true"], user="tessera-bob", cwd=work)
    assert gc.wait_state(one, "COMPLETED")[0] == "COMPLETED"
    time.sleep(1.5)
    assert gc.acct_state(two)[0] == "PENDING"
    gc.run(["tcontrol", "update", "node", "it2", "State=RESUME"])
    assert gc.wait_state(two, "COMPLETED")[0] == "COMPLETED"


def test_admins_set_mig_layouts_under_nvidia_rules(fresh_cluster):
    gres = ("NodeName=it1 Name=gpu Type=a100 Count=1 MemoryMiB=40960 Simulated=yes MigEnabled=yes "
            "MigLayout=7g.40gb\n")
    c = fresh_cluster(nodes=1, node_extra="Gres=gpu:a100:1", gres=gres, node_timeout=30).start()
    out = c.run(["tcontrol", "update", "node", "it1", "Gpu=0", "MigLayout=3g.20gb,2g.10gb,1g.5gb,1g.5gb"]).stdout
    assert "3g.20gb@" in out and out.count("1g.5gb@") == 2, out
    shown = c.run(["tinfo", "--gpus"]).stdout
    assert "3g.20gb" in shown or "3g" in shown, shown
    # Two 4g slices do not fit an A100: refused, and the layout stays as it was.
    p = c.run(["tcontrol", "update", "node", "it1", "Gpu=0", "MigLayout=4g.20gb,4g.20gb"], check=False)
    assert p.returncode != 0 and "refused" not in p.stdout
    assert "3g.20gb" in c.run(["tcontrol", "update", "node", "it1", "Gpu=0",
                               "MigLayout=3g.20gb,2g.10gb,1g.5gb,1g.5gb"]).stdout
    # Users may not reslice GPUs.
    p = c.run(["tcontrol", "update", "node", "it1", "Gpu=0", "MigLayout=7g.40gb"], user="tessera-bob", check=False)
    assert p.returncode != 0 and "administrator" in p.stderr

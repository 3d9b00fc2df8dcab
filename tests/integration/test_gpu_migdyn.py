"""Dynamic MIG (issue 14 §2, MigStrategy=dynamic) with real daemons and simulated H100s: a
pending job asking a MIG profile that no current layout offers makes the scheduler re-lay a
dynamic GPU whose instances are all free (noded creates the instance), and never a static
node's GPU nor a GPU with an instance in use."""
import os
import time

import pytest

from harness import Cluster, wait_for

SEVEN_1G = ",".join(["1g.10gb"] * 7)
GRES = (f"NodeName=it[1-2] Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes "
        f"MigEnabled=yes MigLayout={SEVEN_1G}\n")


class MigDynCluster(Cluster):
    """it1 is MigStrategy=dynamic (on its NodeName line); it2 stays static."""

    def default_config(self):
        return super().default_config().replace("NodeName=it1 ", "NodeName=it1 MigStrategy=dynamic ")


def layout(c, node, gpu=0):
    """The simulated GPU's saved layout ("" until noded has reconfigured it)."""
    path = os.path.join(c.dir, "spool", node, f"gpu.{gpu}.mig")
    return open(path).read().strip() if os.path.exists(path) else ""


def ctld_log(c):
    with open(os.path.join(c.dir, "ctld.log"), errors="replace") as f:
        return f.read()


@pytest.fixture
def mc():
    c = MigDynCluster(nodes=2, node_extra="Gres=gpu:h100:1", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def test_pending_profile_gets_a_new_layout_on_the_dynamic_gpu_only(mc):
    work = mc.user_dir("tessera-alice")
    # No current layout offers 2g.20gb: accepted all the same (a dynamic H100 can be re-laid).
    job = mc.submit(["--gres=gpu:2g.20gb:1", "-o", "mig.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"],
                    user="tessera-alice", cwd=work)
    wait_for(lambda: "2g.20gb@" in layout(mc, "it1"), what="it1 GPU 0 re-laid with a 2g.20gb")
    items = layout(mc, "it1").split(",")
    assert items.count("2g.20gb@0") + items.count("2g.20gb@2") + items.count("2g.20gb@4") == 1, items
    # Only the two 1g instances under the new 2g went away; the other five stay.
    assert sum(i.startswith("1g.10gb@") for i in items) == 5, items
    log = ctld_log(mc)
    assert f"dynamic MIG: reconfiguring node it1 GPU 0: destroy 2 instance(s), create 2g.20gb@" in log
    assert f"for job(s) {job}" in log
    # noded saves the layout before ctld has read its answer: wait for that too.
    wait_for(lambda: "dynamic MIG: node it1 GPU 0 reconfigured" in ctld_log(mc), what="ctld to get the answer")
    # The static node's GPU is never touched, and the plan is not repeated.
    time.sleep(3)
    assert layout(mc, "it2") == ""
    assert ctld_log(mc).count("dynamic MIG: reconfiguring") == 1


def test_a_profile_no_dynamic_gpu_can_offer_is_refused_at_submit(mc):
    p = mc.run(["tbatch", "--gres=gpu:2g.12gb:1", "--wrap", "true"], user="tessera-alice",
               cwd=mc.user_dir("tessera-alice"), check=False)  # an A30 profile: no A30 here
    assert p.returncode != 0 and "never be satisfied" in p.stderr, p.stderr


def test_pending_profile_job_runs_on_the_new_instance(mc):
    work = mc.user_dir("tessera-alice")
    job = mc.submit(["--gres=gpu:2g.20gb:1", "-o", "mig.out", "--wrap", "echo $CUDA_VISIBLE_DEVICES"],
                    user="tessera-alice", cwd=work)
    assert mc.wait_state(job, "COMPLETED", timeout=60)[0] == "COMPLETED"
    seen = open(os.path.join(work, "mig.out")).read().strip()
    assert seen.startswith("MIG-"), seen
    assert "2g.20gb@" in layout(mc, "it1")


def test_a_gpu_with_an_instance_in_use_is_never_touched(mc):
    work = mc.user_dir("tessera-bob")
    holder = mc.submit(["-w", "it1", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 30"],
                       user="tessera-bob", cwd=work)
    wait_for(lambda: mc.acct_state(holder)[0] == "RUNNING", what="the 1g job to run")
    before = layout(mc, "it1")
    job = mc.submit(["-w", "it1", "--gres=gpu:2g.20gb:1", "--wrap", "true"], user="tessera-bob", cwd=work)
    time.sleep(4)
    assert layout(mc, "it1") == before
    assert mc.acct_state(job)[0] == "PENDING"
    assert "dynamic MIG: reconfiguring" not in ctld_log(mc)
    mc.run(["tcancel", str(holder)], user="tessera-bob")
    # Once the GPU is all free it is re-laid and the job runs.
    assert mc.wait_state(job, "COMPLETED", timeout=60)[0] == "COMPLETED"

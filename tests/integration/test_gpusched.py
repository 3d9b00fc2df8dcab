"""Issue 14 gaps on the scheduler side (helper gpusched), with real daemons and simulated H100s.

Dynamic MIG for a multi-node gang: `-N2 --gres=gpu:3g.40gb:2` on two MigStrategy=dynamic nodes
whose layouts (7 x 1g.10gb) offer no 3g.40gb gets both nodes re-laid at once (never only one:
all or nothing) and then runs on both, each node's tasks on that node's new instances."""
import os
import re
import time

import pytest

from harness import Cluster, wait_for

SEVEN_1G = ",".join(["1g.10gb"] * 7)
GRES = (f"NodeName=it[1-2] Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes "
        f"MigEnabled=yes MigLayout={SEVEN_1G}\n")
TASK = "echo $SLURMD_NODENAME=$CUDA_VISIBLE_DEVICES"


class BothDynamic(Cluster):
    def default_config(self):
        conf = super().default_config()
        for n in ("it1", "it2"):
            conf = conf.replace(f"NodeName={n} ", f"NodeName={n} MigStrategy=dynamic ")
        return conf


def layout(c, node, gpu=0):
    path = os.path.join(c.dir, "spool", node, f"gpu.{gpu}.mig")
    return open(path).read().strip() if os.path.exists(path) else ""


def ctld_log(c):
    with open(os.path.join(c.dir, "ctld.log"), errors="replace") as f:
        return f.read()


@pytest.fixture
def dyn():
    c = BothDynamic(nodes=2, node_extra="Gres=gpu:h100:1", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def gang(c, work, out):
    return c.submit(["-N2", "--ntasks-per-node=1", "--gres=gpu:3g.40gb:2", "-o", out, "--wrap",
                     f"trun bash -c '{TASK}'"], user="tessera-alice", cwd=work)


def check_ran_on_both(c, work, out):
    text = open(os.path.join(work, out)).read()
    seen = dict(re.findall(r"(it\d)=(\S+)", text))
    assert set(seen) == {"it1", "it2"}, text
    for node in ("it1", "it2"):
        assert layout(c, node).split(",").count("3g.40gb@0") == 1, layout(c, node)
        assert "3g.40gb@4" in layout(c, node), layout(c, node)
        show = c.run(["tcontrol", "show", "node", node]).stdout
        mine = set(re.findall(r"3g\.40gb@\d+\((MIG-[\w-]+),", show))
        got = set(seen[node].split(","))
        assert len(got) == 2 and got <= mine, (node, seen, show)  # that node's own new instances


def test_a_two_node_gang_gets_both_nodes_re_laid_and_runs_on_both(dyn):
    work = dyn.user_dir("tessera-alice")
    job = gang(dyn, work, "gang.out")
    assert dyn.wait_state(job, ["COMPLETED", "FAILED"], timeout=90)[0] == "COMPLETED"
    log = ctld_log(dyn)
    for node in ("it1", "it2"):
        assert re.search(rf"dynamic MIG: reconfiguring node {node} GPU 0: .*for job\(s\) {job}\b", log), log
    check_ran_on_both(dyn, work, "gang.out")


def test_a_gang_is_not_half_re_laid_while_one_node_is_busy(dyn):
    work = dyn.user_dir("tessera-alice")
    holder = dyn.submit(["-w", "it2", "--gres=gpu:1g.10gb:1", "--wrap", "sleep 30"],
                        user="tessera-bob", cwd=dyn.user_dir("tessera-bob"))
    wait_for(lambda: dyn.acct_state(holder)[0] == "RUNNING", what="the 1g job on it2 to run")
    before = (layout(dyn, "it1"), layout(dyn, "it2"))
    job = gang(dyn, work, "gang2.out")
    time.sleep(5)
    # it1 alone could be re-laid, but the gang needs two nodes: nothing is touched.
    assert (layout(dyn, "it1"), layout(dyn, "it2")) == before
    assert dyn.acct_state(job)[0] == "PENDING"
    assert "dynamic MIG: reconfiguring" not in ctld_log(dyn)
    dyn.run(["tcancel", str(holder)], user="tessera-bob")
    assert dyn.wait_state(job, ["COMPLETED", "FAILED"], timeout=90)[0] == "COMPLETED"
    check_ran_on_both(dyn, work, "gang2.out")

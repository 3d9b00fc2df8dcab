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


# --gpu-mem by need and typed shares: it1 a whole a100 40 GB with MPS, it2 a whole h100 80 GB
# with MPS, it3 an h100 in MIG mode (3g.40gb, 1g.10gb, 1g.10gb), all static.
MIXED_GRES = (
    "NodeName=it1 Name=gpu Type=a100 Count=1 MemoryMiB=40960 Simulated=yes Mps=yes\n"
    "NodeName=it2 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes Mps=yes\n"
    "NodeName=it3 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes MigEnabled=yes "
    "MigLayout=3g.40gb@0,1g.10gb@4,1g.10gb@5\n")
WHERE = "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"


class Mixed(Cluster):
    def default_config(self):
        lines = super().default_config().split("\n")
        return "\n".join(l.replace("gpu:TYPE:", "gpu:a100:" if l.startswith("NodeName=it1 ") else "gpu:h100:")
                         for l in lines)


@pytest.fixture(scope="module")
def mixed():
    c = Mixed(nodes=3, node_extra="Gres=gpu:TYPE:1", gres=MIXED_GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def ran_on(c, args, out):
    work = c.user_dir("tessera-alice")
    p = c.run(["tbatch", "-o", out] + args + ["--wrap", WHERE], user="tessera-alice", cwd=work)
    assert "not acted on" not in p.stderr, p.stderr
    job = int(re.search(r"(\d+)", p.stdout).group(1))
    assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)[0] == "COMPLETED"
    node, devices = open(os.path.join(work, out)).read().split()
    return node, devices


def test_gpu_mem_gets_the_smallest_fitting_instance_or_whole_gpu(mixed):
    # 8 GB: a 1g.10gb instance; 20 GB: the 3g.40gb (the MIG instance wins the tie with the
    # 40 GB a100); 50 GB: only the whole h100 has it.
    node, dev = ran_on(mixed, ["--gpus=1", "--gpu-mem=8G"], "m8.out")
    assert node == "it3" and dev.startswith("MIG-"), (node, dev)
    show = mixed.run(["tcontrol", "show", "node", "it3"]).stdout
    assert re.search(rf"1g\.10gb@\d+\({dev},", show), show
    node, dev = ran_on(mixed, ["--gpus=1", "--gpu-mem=20G"], "m20.out")
    assert node == "it3" and re.search(rf"3g\.40gb@0\({dev},", show), (node, dev, show)
    node, dev = ran_on(mixed, ["--gpus=1", "--gpu-mem=50G"], "m50.out")
    assert node == "it2" and dev.startswith("GPU-"), (node, dev)


def test_gpu_mem_no_gpu_has_or_without_a_gpu_count_is_refused(mixed):
    work = mixed.user_dir("tessera-alice")
    p = mixed.run(["tbatch", "--gpus=1", "--gpu-mem=100G", "--wrap", "true"], user="tessera-alice",
                  cwd=work, check=False)
    assert p.returncode != 0 and "--gpu-mem=102400M) can never be satisfied" in p.stderr, p.stderr
    p = mixed.run(["tbatch", "--gpu-mem=10G", "--wrap", "true"], user="tessera-alice", cwd=work,
                  check=False)
    assert p.returncode != 0 and "--gpu-mem needs a GPU count" in p.stderr, p.stderr


def test_typed_mps_share_comes_from_a_gpu_of_that_type(mixed):
    node, dev = ran_on(mixed, ["--gres=mps:h100:50"], "mps_h100.out")
    assert node == "it2" and dev.startswith("GPU-"), (node, dev)
    node, _ = ran_on(mixed, ["--gres=mps:a100:50"], "mps_a100.out")
    assert node == "it1"
    work = mixed.user_dir("tessera-alice")
    p = mixed.run(["tbatch", "--gres=shard:a100:1", "--wrap", "true"], user="tessera-alice",
                  cwd=work, check=False)
    assert p.returncode != 0 and "gres/shard:a100 can never be satisfied" in p.stderr, p.stderr
    assert "no a100 GPU there is configured for shards" in p.stderr, p.stderr

"""Network topology through the real daemons (issue 15, helper topoconf): a dev cluster with a
block topology (TopologyPlugin=topology/block, topology.conf beside tessera.conf), a 2-node gang
placed inside one block while the other block has more free nodes scattered, tcontrol show
topology / show node, --segment refusals, tcontrol reconfigure with a changed topology (running
jobs kept) and with a broken one (refused with file:line, nothing changed).

The tests of one module share a cluster and run in file order."""
import os
import re

import pytest

from harness import BIN, Cluster, wait_for

# Blocks interleave the node order, so first-fit by node order (it1, it2, ...) spreads a gang
# over both blocks; it3 is kept busy, which leaves b1 = {it1, it5} (exactly two free nodes) and
# b2 = {it2, it4, it6} (three free nodes, between b1's).
BLOCKS = "BlockName=b1 Nodes=it[1,3,5]\nBlockName=b2 Nodes=it[2,4,6]\n"
BLOCK_OF = {"it1": "b1", "it3": "b1", "it5": "b1", "it2": "b2", "it4": "b2", "it6": "b2"}


def topo_path(c):
    return os.path.join(os.path.dirname(c.conf), "topology.conf")


def write_topology(c, text):
    os.makedirs(os.path.dirname(c.conf), exist_ok=True)
    with open(topo_path(c), "w") as f:
        f.write(text)
    os.chmod(topo_path(c), 0o644)


@pytest.fixture(scope="module")
def tc():
    c = Cluster(nodes=6, extra_conf="TopologyPlugin=topology/block\n")
    write_topology(c, BLOCKS)
    try:
        yield c.start()
    finally:
        c.stop()


def expand(hostlist):
    """"it[1,5-6],it9" -> [it1, it5, it6, it9] (the forms tqueue prints here)."""
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hostlist):
        m = re.match(r"^(.*)\[(.*)\]$", part)
        if not m:
            out.append(part)
            continue
        for r in m.group(2).split(","):
            lo, _, hi = r.partition("-")
            out += [f"{m.group(1)}{i}" for i in range(int(lo), int(hi or lo) + 1)]
    return out


def nodes_of(c, job):
    return expand(c.run(["tqueue", "-h", "-j", str(job), "-o", "%N"]).stdout.strip())


def running(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%T"], check=False).stdout.strip() == "RUNNING"


def test_check_config_reads_the_topology(tc):
    p = tc.run([os.path.join(BIN, "tessera-ctld"), "-f", tc.conf, "--check-config"])
    assert f"{topo_path(tc)}: topology/block OK (2 blocks)" in p.stdout, p.stdout


def test_gang_placed_inside_one_block(tc):
    blocker = tc.submit(["-w", "it3", "--exclusive", "--wrap", "sleep 600"])
    wait_for(lambda: running(tc, blocker), what="blocker on it3")
    gang = tc.submit(["-N", "2", "--exclusive", "--wrap", "sleep 600"])
    tc.gang, tc.blocker = gang, blocker  # the reconfigure tests check they keep running
    wait_for(lambda: running(tc, gang), timeout=30, what="the 2-node gang to start")
    placed = nodes_of(tc, gang)
    assert len(placed) == 2, placed
    blocks = {BLOCK_OF[n] for n in placed}
    # Topology-blind first fit would take it1 (b1) and it2 (b2).
    assert len(blocks) == 1, f"gang spread over blocks {blocks}: {placed}"
    # Best fit: the block whose free nodes fit the gang most tightly (b1 has exactly two free),
    # keeping b2's three free nodes together for a later gang.
    assert sorted(placed) == ["it1", "it5"], placed


def test_show_topology_and_node(tc):
    out = tc.run(["tcontrol", "show", "topology"]).stdout
    assert out.splitlines() == [
        "BlockName=b1 BlockIndex=0 Nodes=it[1,3,5] BlockSize=3",
        "BlockName=b2 BlockIndex=1 Nodes=it[2,4,6] BlockSize=3",
        "AggregatedBlock=b[1-2] BlockIndex=2 Nodes=it[1-6] BlockSize=6",
    ], out
    one = tc.run(["tcontrol", "show", "topology", "b2"]).stdout
    assert one.splitlines() == ["BlockName=b2 BlockIndex=1 Nodes=it[2,4,6] BlockSize=3"], one
    by_node = tc.run(["tcontrol", "show", "topology", "node=it4"]).stdout
    assert by_node.splitlines()[0].startswith("BlockName=b2 "), by_node
    missing = tc.run(["tcontrol", "show", "topology", "nosuch"], check=False)
    assert missing.returncode != 0
    assert "Topology information contains no block named nosuch" in missing.stderr
    node = tc.run(["tcontrol", "show", "node", "it4"]).stdout
    assert "   Topology=default:b2\n" in node, node


def test_segment_refusals(tc):
    big = tc.run(["tbatch", "-N", "4", "--segment=4", "--wrap", "true"], check=False)
    assert big.returncode != 0
    assert "--segment=4 can never be placed: no block has 4 nodes in partition debug" in big.stderr
    odd = tc.run(["tbatch", "-N", "3", "--segment=2", "--wrap", "true"], check=False)
    assert odd.returncode != 0
    assert "--segment=2 does not divide the job's 3 nodes" in odd.stderr
    ok = tc.submit(["-N", "2", "--segment=2", "--hold", "--wrap", "true"])
    tc.run(["tcancel", str(ok)])
    # The old "--switches is accepted but not acted on" warning is gone.
    sw = tc.run(["tbatch", "-N", "1", "--switches=1@1:00", "--hold", "--wrap", "true"])
    assert "not acted on" not in sw.stderr, sw.stderr
    tc.run(["tcancel", sw.stdout.split()[-1]])


def test_reconfigure_applies_a_changed_topology_and_keeps_jobs(tc):
    write_topology(tc, "BlockName=r1 Nodes=it[1-3]\nBlockName=r2 Nodes=it[4-6]\nBlockSizes=3\n")
    p = tc.run(["tcontrol", "reconfigure"])
    out = tc.run(["tcontrol", "show", "topology"]).stdout
    assert out.splitlines() == [
        "BlockName=r1 BlockIndex=0 Nodes=it[1-3] BlockSize=3",
        "BlockName=r2 BlockIndex=1 Nodes=it[4-6] BlockSize=3",
    ], (out, p.stderr)
    assert "   Topology=default:r2\n" in tc.run(["tcontrol", "show", "node", "it5"]).stdout
    assert running(tc, tc.gang) and running(tc, tc.blocker)


def test_reconfigure_refuses_a_broken_topology(tc):
    write_topology(tc, "BlockName=r1 Nodes=it[1-3]\nBlockName=r2 Nodes=it[3-6]\n")
    p = tc.run(["tcontrol", "reconfigure"], check=False)
    assert p.returncode != 0
    want = (f"{topo_path(tc)}:2: node it3 is in block r2 and already in block r1 "
            f"({topo_path(tc)}:1)")
    assert want in p.stderr, p.stderr
    check = tc.run([os.path.join(BIN, "tessera-ctld"), "-f", tc.conf, "--check-config"],
                   check=False)
    assert check.returncode == 1 and want in check.stderr, check.stderr
    # Nothing changed: the topology in use and the jobs.
    out = tc.run(["tcontrol", "show", "topology"]).stdout
    assert out.splitlines()[0] == "BlockName=r1 BlockIndex=0 Nodes=it[1-3] BlockSize=3", out
    assert running(tc, tc.gang) and running(tc, tc.blocker)
    write_topology(tc, "BlockName=r1 Nodes=it[1-3]\nBlockName=r2 Nodes=it[4-9]\n")
    unknown = tc.run(["tcontrol", "reconfigure"], check=False)
    assert f"{topo_path(tc)}:2: block r2 names unknown node it7 (not in tessera.conf)" in \
        unknown.stderr, unknown.stderr

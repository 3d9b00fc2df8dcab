"""Issue 20 (h20a): tinfo's default view from ctld's node-state summary and sdiag's Slurm
counters, against a real tessera-ctld with two noded. The summary's rows must count what the
node records (tinfo -N) hold, follow a drain (byte identity: unit tests), and
sdiag's counters must move with jobs and cycles and go back to 0 on sdiag --reset (admins only)."""
import re

from harness import wait_for


def rows(out):
    """tinfo's default rows: {(partition, state): (count, nodelist)}."""
    got = {}
    for line in out.splitlines()[1:]:
        f = line.split()
        got[(f[0].rstrip("*"), f[4])] = (int(f[3]), f[5] if len(f) > 5 else "")
    return got


def per_node(c):
    """The same rows counted from the node records (tinfo -N: NODELIST NODES PARTITION STATE)."""
    got = {}
    for line in c.run(["tinfo", "-N", "-h"]).stdout.splitlines():
        name, _, part, state = line.split()
        got.setdefault((part.rstrip("*"), state), []).append(name)
    return {k: len(v) for k, v in got.items()}


def test_tinfo_summary_agrees_with_the_node_records(cluster):
    node = cluster.nodes[0]
    try:
        summary = cluster.run(["tinfo"]).stdout
        assert summary == cluster.run(["tinfo"]).stdout  # the cached rows
        assert {k: v[0] for k, v in rows(summary).items()} == per_node(cluster)
        cluster.run(["tcontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=h20a"])
        wait_for(lambda: "drain" in cluster.run(["tinfo"]).stdout, what="the drained row")
        drained = cluster.run(["tinfo"]).stdout
        got = rows(drained)
        assert any(k[1] == "drain" and v == (1, node) for k, v in got.items()), drained
        assert {k: v[0] for k, v in got.items()} == per_node(cluster)
        assert cluster.run(["tinfo", "-t", "drain", "-h"]).stdout.count("\n") == 1
    finally:
        cluster.run(["tcontrol", "update", f"NodeName={node}", "State=RESUME"])


def sdiag(c):
    out = c.run(["tcontrol", "sdiag"]).stdout

    def num(label):
        m = re.search(r"^\s*" + re.escape(label) + r":\s+(\d+)$", out, re.M)
        assert m, (label, out)
        return int(m.group(1))
    return out, num


def test_sdiag_counters_move_and_reset(cluster):
    work = cluster.user_dir("tessera-alice")
    out, num = sdiag(cluster)
    for label in ("Server thread count", "Agent queue size", "Agent count", "Agent thread count",
                  "DBD Agent queue size", "Last queue length"):
        num(label)
    assert num("Server thread count") >= 1  # this sdiag's own RPC
    assert "\nBackfilling stats\n" in out
    submitted, cycles = num("Jobs submitted"), num("Total cycles")
    bf = num("Total backfilled jobs (since last slurm start)")
    ids = [cluster.submit(["--wrap", "true"], user="tessera-alice", cwd=work) for _ in range(3)]
    wait_for(lambda: all(cluster.acct_state(i)[0] == "COMPLETED" for i in ids), timeout=60,
             what="3 jobs COMPLETED")
    out, num = sdiag(cluster)
    assert num("Jobs submitted") >= submitted + 3
    assert num("Jobs started") >= 3 and num("Jobs completed") >= 3
    assert num("Total cycles") > cycles
    num("Mean depth cycle")  # printed once there are cycles (its value: unit test)
    assert re.search(r"^\tLast cycle when: \w{3} \w{3} ", out, re.M), out  # a time, not N/A
    assert num("Total backfilled jobs (since last slurm start)") >= bf

    refused = cluster.run(["tcontrol", "sdiag", "--reset"], user="tessera-alice", check=False)
    assert refused.returncode != 0
    assert num("Jobs submitted") >= submitted + 3  # unchanged by the refused reset
    p = cluster.run(["tcontrol", "sdiag", "-r"])
    assert p.stdout == "Reset scheduling statistics\n"
    out, num = sdiag(cluster)
    assert num("Jobs submitted") == 0 and num("Jobs completed") == 0
    assert num("Total backfilled jobs (since last stats cycle start)") == 0
    assert num("Total backfilled jobs (since last slurm start)") >= bf
    assert "SubmitJob" not in out  # RPC tables emptied; this sdiag's own call is counted after
    cluster.submit(["--wrap", "true"], user="tessera-alice", cwd=work)
    _, num = sdiag(cluster)
    assert num("Jobs submitted") == 1

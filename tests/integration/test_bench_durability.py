"""Small-scale version of bench/run-vs-slurm's crash-durability measurement (issue #6):
bursts of held submissions, kill -9 of tessera-ctld right after the last acknowledgment,
restart, and not one acknowledged job may be missing. Runs in well under 30 s."""
import signal
from concurrent.futures import ThreadPoolExecutor

BURST = 50
ROUNDS = 3


def test_kill9_right_after_last_ack_loses_no_acknowledged_job(fresh_cluster):
    c = fresh_cluster(nodes=1, node_timeout=30).start()
    acked = []
    for rnd in range(ROUNDS):
        # Concurrent submitters, so acknowledgments of jobs sharing a commit are covered too.
        with ThreadPoolExecutor(max_workers=8) as pool:
            burst = list(pool.map(lambda _: c.submit(["--hold", "--wrap", "true"]), range(BURST)))
        assert len(set(burst)) == BURST, f"duplicate job ids in one burst: {sorted(burst)}"
        if acked:
            assert min(burst) > max(acked), (
                f"round {rnd}: job ids reused after a crash: {min(burst)} <= {max(acked)}")
        acked += burst
        c.kill("ctld", signal.SIGKILL)  # 0 s after the last acknowledgment
        c.start_ctld()
        out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i %T"]).stdout
        states = dict(line.split() for line in out.splitlines() if line.strip())
        lost = [j for j in acked if str(j) not in states]
        assert not lost, f"round {rnd}: {len(lost)} acknowledged jobs lost after kill -9: {lost}"
        wrong = {j: states[str(j)] for j in acked if states[str(j)] != "PENDING"}
        assert not wrong, f"round {rnd}: held jobs not PENDING after restart: {wrong}"


def test_kill9_after_bulk_submit_loses_no_acknowledged_job(fresh_cluster, tmp_path):
    """The same through the bulk API (SubmitJobs, several calls in flight) of the load client."""
    import os
    import subprocess
    from harness import BIN
    c = fresh_cluster(nodes=1, node_timeout=30).start()
    ids_file = tmp_path / "ids"
    p = subprocess.run([os.path.join(BIN, "tessera-bench-submit"), "-f", c.conf, "-n", "3000",
                        "-c", "4", "--batch", "250", "--ids-out", str(ids_file)],
                       capture_output=True, text=True, env=c.env(), timeout=120)
    assert p.returncode == 0, p.stderr
    c.kill("ctld", signal.SIGKILL)
    c.start_ctld()
    acked = [int(x) for x in ids_file.read_text().split()]
    assert len(acked) == 3000 and len(set(acked)) == 3000
    out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i"]).stdout.split()
    lost = set(acked) - {int(x) for x in out}
    assert not lost, f"{len(lost)} acknowledged jobs lost after kill -9"

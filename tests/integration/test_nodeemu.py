"""The node emulator (bench/nodeemu, issue 20 §2) against a real tessera-ctld and munged: 50
emulated nodes register over TLS with munge, jobs run on them and end COMPLETED, a cancel ends a
job CANCELLED, and every node registers again after a ctld restart. Behaviour, not timing (the
figures come from bench/nodeemu/scale.py)."""
import os
import signal
import subprocess

from harness import BIN, Cluster, wait_for

NODES = 50


def start(tmp_status):
    c = Cluster(nodes=NODES, tls=True, node_timeout=30)
    c._start_munged()
    c._make_tls()
    c.write_config()
    c.start_ctld()
    c._spawn("emu", [f"{BIN}/tessera-nodeemu", "-f", c.conf, "--run-ms", "200",
                     "--status-file", tmp_status, "--report-s", "0"])
    c.wait_nodes_up(timeout=60)
    return c


def status(path):
    """The emulator's status line as a dict; {} until its first write (100 ms after it starts,
    which can be after ctld already lists its nodes up)."""
    try:
        with open(path) as f:
            return dict(kv.split("=", 1) for kv in f.read().split())
    except FileNotFoundError:
        return {}


def states(c, ids):
    out = c.run(["tacct", "-n", "-X", "-P", "-o", "JobID,State", "-j",
                 ",".join(map(str, ids))]).stdout
    return {int(f[0]): f[1].split(" by ")[0] for f in
            (line.split("|") for line in out.splitlines()) if f and f[0].isdigit()}


def test_emulated_nodes_run_jobs_cancel_and_reregister(tmp_path):
    st = str(tmp_path / "emu.status")
    c = start(st)
    try:
        up = c.node_states()
        assert len([n for n in c.nodes if up.get(n, "").rstrip("*") == "idle"]) == NODES, up
        # (the emulator's own count: its status file is rewritten every 100 ms)
        wait_for(lambda: status(st).get("registered") == f"{NODES}/{NODES}", timeout=30,
                 what=f"the emulator to count {NODES} registered nodes")

        # 200 jobs through the bulk API: more jobs than one cycle of one node, all on emulated
        # nodes; every one ends COMPLETED once its end is acknowledged.
        ids_file = tmp_path / "ids"
        p = subprocess.run([os.path.join(BIN, "tessera-bench-submit"), "-f", c.conf, "-n", "200",
                            "-c", "4", "--batch", "50", "--no-hold", "--ids-out", str(ids_file)],
                           capture_output=True, text=True, env=c.env(), timeout=120)
        assert p.returncode == 0, p.stdout + p.stderr
        ids = [int(x) for x in ids_file.read_text().split()]
        assert len(ids) == 200
        wait_for(lambda: set(states(c, ids).values()) == {"COMPLETED"} and
                 len(states(c, ids)) == 200, timeout=120, what="200 jobs COMPLETED")
        used = c.run(["tacct", "-n", "-X", "-P", "-o", "NodeList", "-j",
                      ",".join(map(str, ids))]).stdout.split()
        assert len(set(used)) > 1, f"every job ran on one node: {set(used)}"
        # (the status file is rewritten every 100 ms: its count may trail ctld's states)
        wait_for(lambda: int(status(st).get("acked", 0)) >= 200, timeout=10, what="200 acknowledged ends")

        # A long job (the emulator's "emu-ms=N" name) runs until cancelled.
        long_id = c.submit(["-J", "emu-ms=600000", "--wrap", "true"])
        c.wait_state(long_id, "RUNNING")
        c.run(["tcancel", str(long_id)])
        c.wait_state(long_id, "CANCELLED")

        # ctld restart: every stream breaks, the emulator reconnects, every node is back.
        regs = int(status(st)["registrations"])
        c.kill("ctld", signal.SIGTERM)
        c.start_ctld()
        c.wait_nodes_up(timeout=60)
        wait_for(lambda: int(status(st)["registrations"]) >= regs + NODES, timeout=60,
                 what="every node to register again")
        again = c.submit(["--wrap", "true"])
        c.wait_state(again, "COMPLETED", timeout=60)
    finally:
        c.stop()


def test_nodeemu_refuses_a_node_not_in_the_config(tmp_path):
    c = Cluster(nodes=2)
    try:
        c._start_munged()
        c.write_config()
        p = subprocess.run([f"{BIN}/tessera-nodeemu", "-f", c.conf, "--nodes", "it[1-3]"],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2
        assert "node 'it3' is not in" in p.stderr
    finally:
        c.stop()

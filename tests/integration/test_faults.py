"""Fault injection, as a list a reviewer can read (issue: hardening). Each test starts real
daemons (harness.Cluster), injects one fault between or inside processes, and checks that no
acknowledged change is lost, nothing runs twice at once, no id is reused, and every refusal
names its cause. Sections:

  1. full disk during each kind of change
  2. damaged, empty, foreign and read-only databases
  3. kill -9 of ctld at random points of a 1,000-job flow with cancels and requeues
  4. node hang past SlurmdTimeout; a duplicate node registration
  5. hostile local socket clients
"""
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from harness import BIN, Cluster, wait_for


# ---- 1. full disk during each kind of change ------------------------------------------------

# (end of section 1)


# ---- 2. damaged, empty, foreign and read-only databases -------------------------------------

# (end of section 2)


# ---- 3. kill -9 of ctld during a 1,000-job flow with cancels and requeues -------------------

# (end of section 3)


# ---- 4. node hang past SlurmdTimeout; duplicate node registration ---------------------------

def _node_of(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%N"]).stdout.strip()


def _events(c, job):
    return c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout


def _log(c, key):
    with open(os.path.join(c.dir, f"{key}.log"), errors="replace") as f:
        return f.read()


def test_hung_node_stale_cancel_does_not_end_the_requeued_run_on_the_same_node(fresh_cluster):
    """The issue's critical case: the job can only run on the hung node (-w), so once the node is
    back the job starts there again (run 2) while the node still has run 1, which takes a moment
    to die (its TERM trap). Run 1's CANCELLED report must not end run 2."""
    c = fresh_cluster(nodes=2).start()
    work = c.user_dir("tessera-bob")
    job = c.submit(["--requeue", "-w", "it1", "-o", "hang.out", "--wrap",
                    "trap 'sleep 5' TERM; sleep 10; echo finished"], user="tessera-bob", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    # Hung past SlurmdTimeout (4 s): DOWN, job requeued. (Not c.kill: it waits for the process
    # to exit and then SIGKILLs it.)
    c.procs["noded-it1"].send_signal(signal.SIGSTOP)
    wait_for(lambda: c.node_states().get("it1", "").rstrip("*") == "down", timeout=20,
             what="it1 to be declared down")
    wait_for(lambda: c.acct_state(job)[0] == "PENDING", timeout=10, what="job to be requeued")
    c.procs["noded-it1"].send_signal(signal.SIGCONT)
    # The stale run is cancelled, the job runs again on it1 and completes normally.
    state, code = c.wait_state(job, ("COMPLETED", "CANCELLED", "FAILED", "NODE_FAIL"), timeout=60)
    assert (state, code) == ("COMPLETED", "0:0"), _events(c, job)
    assert "stale_report" in _events(c, job)
    assert "Restarts=1" in c.run(["tcontrol", "show", "job", str(job)]).stdout
    assert open(os.path.join(work, "hang.out")).read().strip() == "finished"


def test_hung_node_stale_report_is_recorded_and_the_new_run_on_the_other_node_completes(
        fresh_cluster):
    c = fresh_cluster(nodes=2).start()
    work = c.user_dir("tessera-bob")
    job = c.submit(["--requeue", "-o", "hang2.out", "--wrap", "sleep 12; echo finished"],
                   user="tessera-bob", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    first = _node_of(c, job)
    other = "it2" if first == "it1" else "it1"
    c.procs[f"noded-{first}"].send_signal(signal.SIGSTOP)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING" and _node_of(c, job) == other, timeout=30,
             what=f"job to be requeued and run again on {other}")
    c.procs[f"noded-{first}"].send_signal(signal.SIGCONT)
    # The old node wakes up, is told to cancel its (stale) run, and reports it CANCELLED: the
    # report is recorded as an event and does not touch the job's run on the other node.
    wait_for(lambda: "stale_report" in _events(c, job), timeout=20, what="the stale report event")
    assert c.acct_state(job)[0] == "RUNNING"
    assert _node_of(c, job) == other
    assert c.wait_state(job, ("COMPLETED", "CANCELLED", "FAILED"), timeout=40) == ("COMPLETED", "0:0")


def test_duplicate_node_registration_is_refused_and_the_job_stays_on_the_real_node(fresh_cluster):
    c = fresh_cluster(nodes=2).start()
    work = c.user_dir("tessera-alice")
    job = c.submit(["-w", "it1", "-o", "dup.out", "--wrap", "sleep 6; echo finished"],
                   user="tessera-alice", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    # A second tessera-noded claiming to be it1 (same host, node credentials, own spool and port).
    text = open(c.conf).read()
    spool2 = os.path.join(c.dir, "impostor-spool")
    text = text.replace(f"SlurmdSpoolDir={c.dir}/spool/%n", f"SlurmdSpoolDir={spool2}/%n")
    from harness import free_ports
    text = text.replace(f"Port={c.node_ports[0]} ", f"Port={free_ports(1)[0]} ")
    conf2 = os.path.join(c.dir, "etc", "impostor.conf")
    with open(conf2, "w") as f:
        f.write(text)
    os.chmod(conf2, 0o644)
    c._spawn("impostor", [f"{BIN}/tessera-noded", "-N", "it1", "-f", conf2])
    wait_for(lambda: "already registered" in _log(c, "impostor"), timeout=20,
             what="the impostor to be refused")
    assert "refused registration of it1" in _log(c, "ctld")
    # The job keeps running on the real node and completes there, launched once.
    assert c.acct_state(job)[0] == "RUNNING"
    assert c.wait_state(job, ("COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED"), timeout=30) == \
        ("COMPLETED", "0:0")
    assert "launched" not in _log(c, "impostor")
    assert not os.path.exists(os.path.join(spool2, "it1", f"job.{job}"))
    assert "Restarts=0" in c.run(["tcontrol", "show", "job", str(job)]).stdout
    # Once the real node's stream has ended, the next registration as it1 is accepted.
    c.kill("noded-it1", signal.SIGKILL)
    wait_for(lambda: "registered with tessera-ctld" in _log(c, "impostor"), timeout=20,
             what="the second daemon to be accepted once the first is gone")
    c.kill("impostor")


def test_jobs_finished_before_a_ctld_restart_are_still_listed(fresh_cluster):
    c = fresh_cluster(nodes=2).start()
    work = c.user_dir("tessera-alice")
    jobs = [c.submit(["--wrap", "true"], user="tessera-alice", cwd=work) for _ in range(3)]
    for j in jobs:
        c.wait_state(j, "COMPLETED")
    c.kill("ctld")
    c.start_ctld()
    out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i %T"]).stdout
    states = dict(line.split() for line in out.splitlines())
    for j in jobs:
        assert states.get(str(j)) == "COMPLETED", f"job {j} missing after restart: {out}"


def test_tacct_sees_every_job_of_a_burst_as_soon_as_it_ended(fresh_cluster):
    c = fresh_cluster(nodes=2).start()
    work = c.user_dir("tessera-alice")
    ids = [c.submit(["--wrap", "sleep 1"], user="tessera-alice", cwd=work) for _ in range(4)]
    wait_for(lambda: all(c.acct_state(j)[0] == "RUNNING" for j in ids), what="the burst to run")
    # Hold the database's write lock (as a long group commit under load would): the jobs' ends
    # are known to ctld at once but their accounting rows wait for the writer. The lock is
    # released well within the writer's 5 s busy timeout.
    db = sqlite3.connect(os.path.join(c.dir, "state", "tessera.db"), timeout=1,
                         isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")

        def all_ended():
            out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i %T"]).stdout
            st = dict(line.split() for line in out.splitlines())
            return all(st.get(str(i)) == "COMPLETED" for i in ids)
        wait_for(all_ended, timeout=3, what="the burst to end")
        out = c.run(["tacct", "-n", "-X", "-P", "-a", "-o", "JobID,State"]).stdout
    finally:
        db.execute("ROLLBACK")
        db.close()
    seen = {line.split("|")[0]: line.split("|")[1] for line in out.splitlines() if "|" in line}
    missing = [i for i in ids if seen.get(str(i)) != "COMPLETED"]
    assert not missing, f"tacct misses ended jobs {missing}: {out}"
    # and once written, the archive answers the same
    for j in ids:
        assert c.wait_state(j, "COMPLETED") == ("COMPLETED", "0:0")


# (end of section 4)


# ---- 5. hostile local socket clients --------------------------------------------------------

# (end of section 5)

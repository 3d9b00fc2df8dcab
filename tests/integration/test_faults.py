"""Fault injection, as a list a reviewer can read (issue: hardening). Each test starts real
daemons (harness.Cluster), injects one fault between or inside processes, and checks that no
acknowledged change is lost, nothing runs twice at once, no id is reused, and every refusal
names its cause. Sections:

  1. full disk during each kind of change (and a requeue request across a kill -9)
  2. damaged, empty, foreign and read-only databases; private state files; online backup
  3. kill -9 of ctld at random points of a 1,000-job flow with cancels and requeues
  4. node hang past SlurmdTimeout; a duplicate node registration; finished jobs across a
     restart; tacct while the state writer lags
  5. hostile local socket clients (and config lines that must be refused)
"""
import os
import pwd
import random
import re
import shutil
import signal
import sqlite3
import stat
import subprocess
import threading
import time

import pytest

from harness import BIN, Cluster, wait_for


# ---- 1. full disk during each kind of change ------------------------------------------------

def _mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], check=True)


def _fill(directory):
    """Fills the file system of `directory` to the last page; returns the filler's path."""
    filler = os.path.join(directory, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (1 << 20, 4096, 1):
            while True:
                try:
                    if os.write(fd, b"\0" * chunk) < chunk:
                        break
                except OSError:
                    break
    finally:
        os.close(fd)
    return filler


def _show(c, job):
    """{Key: value} of `tcontrol show job` (first word of each value)."""
    out = c.run(["tcontrol", "show", "job", str(job)]).stdout
    return dict(f.split("=", 1) for f in out.split() if "=" in f)


def test_full_state_disk_refuses_every_change_and_loses_no_acknowledged_one(fresh_cluster):
    c = fresh_cluster(nodes=1, node_timeout=30)
    state = os.path.join(c.dir, "state")
    _mount_tmpfs(state, "8m")
    try:
        c.start()
        work = c.user_dir("tessera-alice")
        sub = lambda *a: c.submit(list(a), user="tessera-alice", cwd=work)  # noqa: E731
        running = sub("--wrap", "sleep 600")
        requeue = sub("--wrap", "sleep 600")
        for j in (running, requeue):
            wait_for(lambda j=j: _show(c, j)["JobState"] == "RUNNING", what=f"job {j} to run")
        # The node's two CPUs are taken: these stay pending.
        cancel, hold, update = (sub("--wrap", "true") for _ in range(3))
        held = sub("--hold", "--wrap", "true")
        before = {j: _show(c, j) for j in (running, requeue, cancel, hold, update, held)}
        filler = _fill(state)

        cause = "state database write failed: database or disk is full"
        attempts = {
            "cancel pending": ["tcancel", str(cancel)],
            "cancel running": ["tcancel", str(running)],
            "hold": ["tcontrol", "hold", str(hold)],
            "release": ["tcontrol", "release", str(held)],
            "update": ["tcontrol", "update", "job", str(update), "TimeLimit=5"],
            "requeue": ["tcontrol", "requeue", str(requeue)],
            "drain": ["tcontrol", "drain", "it1", "Reason=disk test"],
        }
        for what, argv in attempts.items():
            p = c.run(argv, check=False)
            assert p.returncode != 0, f"{what} was acknowledged on a full disk: {p.stdout}{p.stderr}"
            assert cause in p.stderr, f"{what}: the cause is not named: {p.stderr}"
        # Nothing changed in memory either.
        for j, old in before.items():
            now = _show(c, j)
            for key in ("JobState", "TimeLimit", "Priority"):
                assert now.get(key) == old.get(key), f"job {j} {key}: {old.get(key)} -> {now.get(key)}"
        assert _show(c, hold)["Reason"] != "JobHeldUser"
        assert _show(c, held)["Reason"] == "JobHeldUser"
        assert c.node_states()["it1"].rstrip("*") in ("alloc", "mix")
        with open(os.path.join(c.dir, "ctld.log")) as f:
            assert cause in f.read()

        # Space again: changes are acknowledged, and a kill -9 keeps exactly those.
        os.unlink(filler)
        c.run(["tcancel", str(cancel)])
        c.run(["tcontrol", "hold", str(hold)])
        c.run(["tcontrol", "drain", "it1", "Reason=disk test"])
        c.kill("ctld", signal.SIGKILL)
        c.start_ctld()
        assert c.acct_state(cancel)[0] == "CANCELLED"
        assert _show(c, hold)["Reason"] == "JobHeldUser"
        assert _show(c, held)["Reason"] == "JobHeldUser"
        assert _show(c, update)["TimeLimit"] == before[update]["TimeLimit"]
        assert _show(c, running)["JobState"] == "RUNNING"
        wait_for(lambda: c.node_states().get("it1", "").rstrip("*") in ("drng", "draining", "drain", "drained"),
                 what="it1 to stay drained after the restart")
    finally:
        subprocess.run(["umount", "-l", state], check=False)


def test_requeue_request_survives_a_restart(fresh_cluster):
    c = fresh_cluster(nodes=1, node_timeout=30).start()
    work = c.user_dir("tessera-bob")
    job = c.submit(["--wrap", "sleep 3"], user="tessera-bob", cwd=work)
    wait_for(lambda: _show(c, job)["JobState"] == "RUNNING", what="job to run")
    log = os.path.join(c.dir, "noded-it1.log")
    stepd = wait_for(lambda: re.search(rf"job {job}( run \d+)?: launched, tessera-stepd pid (\d+)", open(log).read()),
                     what="the job's stepd").group(2)
    os.kill(int(stepd), signal.SIGSTOP)  # the job's end cannot be reported before the restart
    try:
        c.run(["tcontrol", "requeue", str(job)])
        c.kill("ctld", signal.SIGKILL)
        c.start_ctld()
    finally:
        os.kill(int(stepd), signal.SIGCONT)
    # The job's end (reported to the restarted ctld) is a requeue: it runs again.
    wait_for(lambda: "Restarts=1" in c.run(["tcontrol", "show", "job", str(job)]).stdout,
             timeout=40, what="the job to be requeued after the restart")
    assert c.wait_state(job, "COMPLETED", timeout=30)[0] == "COMPLETED"


def test_job_end_on_a_full_state_disk_is_recorded_once_there_is_space(fresh_cluster):
    c = fresh_cluster(nodes=1, node_timeout=30)
    state = os.path.join(c.dir, "state")
    _mount_tmpfs(state, "8m")
    try:
        c.start()
        work = c.user_dir("tessera-alice")
        go = os.path.join(work, "go")
        job = c.submit(["--wrap", f"while [ ! -e {go} ]; do sleep 0.2; done"], user="tessera-alice", cwd=work)
        wait_for(lambda: _show(c, job)["JobState"] == "RUNNING", what="job to run")
        filler = _fill(state)
        open(go, "w").close()  # the job ends; its end cannot be written
        ctld_log = os.path.join(c.dir, "ctld.log")
        wait_for(lambda: f"job {job}: its end could not be recorded" in open(ctld_log).read(),
                 what="ctld to fail to record the job's end")
        assert _show(c, job)["JobState"] == "RUNNING"  # memory did not run ahead of the disk
        os.unlink(filler)
        # The node resends the end until it is acknowledged, i.e. durable.
        c.wait_state(job, "COMPLETED", timeout=30)
        c.kill("ctld", signal.SIGKILL)
        c.start_ctld()
        assert c.acct_state(job)[0] == "COMPLETED"
    finally:
        subprocess.run(["umount", "-l", state], check=False)


# (end of section 1)


# ---- 2. damaged, empty, foreign and read-only databases -------------------------------------

def _refused(c, *extra):
    """Starts ctld on the cluster's state and returns its message; it must refuse to start."""
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", c.conf, *extra], capture_output=True,
                       text=True, timeout=20, env=c.env())
    assert p.returncode != 0, f"tessera-ctld started: {p.stdout}{p.stderr}"
    return p.stderr


def _stopped_state(fresh_cluster, jobs=0):
    """A cluster whose ctld ran (with `jobs` held jobs) and was stopped; returns (c, db path)."""
    c = fresh_cluster(nodes=1).start()
    if jobs:
        c.submit(["--hold", f"--array=0-{jobs - 1}", "--wrap", "echo " + "x" * 2000])
    c.kill("ctld")
    return c, os.path.join(c.dir, "state", "tessera.db")


def test_damaged_database_is_refused_with_what_to_do(fresh_cluster):
    c, db = _stopped_state(fresh_cluster, jobs=300)
    size = os.path.getsize(db)
    assert size > 64 * 4096
    with open(db, "r+b") as f:
        f.seek(size // 2 // 4096 * 4096)
        f.write(os.urandom(4 * 4096))
    msg = _refused(c)
    assert db in msg and "is damaged" in msg and "Backup and restore" in msg, msg


def test_empty_database_file_is_not_a_new_cluster(fresh_cluster):
    c, db = _stopped_state(fresh_cluster, jobs=5)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    open(db, "w").close()
    msg = _refused(c)
    assert db in msg and "exists but is empty" in msg and "--init-state" in msg, msg


def test_foreign_sqlite_file_is_refused(fresh_cluster):
    c, db = _stopped_state(fresh_cluster)
    os.unlink(db)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE accounts(id INTEGER PRIMARY KEY, owner TEXT)")
    con.commit()
    con.close()
    msg = _refused(c)
    assert db in msg and "not a Tessera state database" in msg, msg
    msg = _refused(c, "--init-state")  # never taken over, not even when asked for a new state
    assert "not a Tessera state database" in msg, msg


def test_read_only_database_is_named_read_only(fresh_cluster):
    c, db = _stopped_state(fresh_cluster, jobs=5)
    state = os.path.dirname(db)
    subprocess.run(["mount", "--bind", state, state], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", state], check=True)
        msg = _refused(c)
        assert db in msg and "read-only" in msg, msg
    finally:
        subprocess.run(["umount", "-l", state], check=False)


def test_state_files_are_private_whatever_the_umask(fresh_cluster):
    old = os.umask(0)
    try:
        c = fresh_cluster(nodes=1).start()
    finally:
        os.umask(old)
    c.submit(["--hold", "--wrap", "true"])
    state = os.path.join(c.dir, "state")
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    for name in ("tessera.db", "tessera.db-wal", "tessera.db-shm"):
        mode = stat.S_IMODE(os.stat(os.path.join(state, name)).st_mode)
        assert mode == 0o600, f"{name} is {oct(mode)}"


def test_online_backup_while_jobs_flow_and_restore(fresh_cluster):
    c = fresh_cluster(nodes=1).start()
    acked = []  # (job id, acknowledged at)
    stop = threading.Event()

    def submit_loop():
        while not stop.is_set():
            acked.append((c.submit(["--hold", "--wrap", "true"]), time.monotonic()))

    t = threading.Thread(target=submit_loop)
    t.start()
    try:
        wait_for(lambda: len(acked) >= 20, what="jobs to flow")
        started = time.monotonic()
        before = [j for j, at in list(acked) if at < started]
        backup = os.path.join(c.dir, "backup.db")
        c.run(["tcontrol", "backup", backup])
        wait_for(lambda: acked[-1][1] > time.monotonic() - 1 and len(acked) > len(before) + 5,
                 what="jobs to keep flowing")
    finally:
        stop.set()
        t.join()
    assert stat.S_IMODE(os.stat(backup).st_mode) == 0o600
    con = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    in_backup = {r[0] for r in con.execute("SELECT job_id FROM jobs UNION SELECT job_id FROM acct_jobs")}
    con.close()
    missing = set(before) - in_backup
    assert not missing, f"acknowledged before the backup but not in it: {sorted(missing)}"
    # A second backup to the same file is refused.
    p = c.run(["tcontrol", "backup", backup], check=False)
    assert p.returncode != 0 and "exists" in p.stderr

    # Restore (docs/admin-guide.md): stop ctld, put the backup in place (no stale -wal/-shm), start.
    c.kill("ctld")
    db = os.path.join(c.dir, "state", "tessera.db")
    for suffix in ("-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    shutil.copyfile(backup, db)
    os.chmod(db, 0o600)
    c.start_ctld()
    out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i"]).stdout.split()
    assert {str(j) for j in in_backup} <= set(out)
    new = c.submit(["--hold", "--wrap", "true"])
    assert new > max(j for j, _ in acked), "a job id was reused after the restore"

# (end of section 2)


# ---- 3. kill -9 of ctld during a 1,000-job flow with cancels and requeues -------------------

FLOW_JOBS = 1000
FLOW_SCRIPT = """#!/bin/bash
# Two live runs of one job at once would fail to take the job's lock: that is recorded.
exec 9>>"$FLOW_DIR/lock.$SLURM_JOB_ID"
flock -n 9 || echo "$SLURM_JOB_ID" >> "$FLOW_DIR/double"
echo "$SLURM_JOB_ID" >> "$FLOW_DIR/ran"
sleep "$FLOW_SLEEP"
"""


def _retry(c, argv, ok_errors=(), attempts=100):
    """Runs a command until ctld answers (it is killed and restarted under us). Returns the
    completed process, or None when ctld answered with one of `ok_errors` (not acknowledged)."""
    for _ in range(attempts):
        p = c.run(argv, check=False, timeout=30)
        if p.returncode == 0:
            return p
        if any(e in p.stderr for e in ok_errors):
            return None
        time.sleep(0.2)
    raise AssertionError(f"{argv} never succeeded: {p.stderr}")


def _lines(path):
    try:
        with open(path) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def test_ctld_kill9_at_random_points_of_a_1000_job_flow(fresh_cluster):
    """1,000 jobs submitted, some cancelled and some requeued while they run, and ctld killed
    with SIGKILL at random points throughout. Every acknowledged submission, cancel and requeue
    holds; no job runs twice at once; no id is handed out twice."""
    seed = int(os.environ.get("TESSERA_FLOW_SEED", time.time()))
    rnd = random.Random(seed)
    print(f"seed {seed}")
    c = fresh_cluster(nodes=2, node_timeout=30).start()
    flow = os.path.join(c.dir, "flow")
    os.makedirs(flow)
    script = os.path.join(flow, "job.sh")
    with open(script, "w") as f:
        f.write(FLOW_SCRIPT)
    stop = threading.Event()
    kills = []

    def killer():  # SIGKILL ctld at random moments, restart it at once
        while not stop.wait(rnd.uniform(1.0, 3.0)):
            c.kill("ctld", signal.SIGKILL)
            kills.append(time.time())
            c.start_ctld()

    submitted, requeued, kinds = [], [], {}
    t = threading.Thread(target=killer)
    t.start()
    try:
        for i in range(FLOW_JOBS):
            kind = "cancel" if i % 20 == 7 else "requeue" if i % 50 == 11 else "plain"
            sleep = {"cancel": "300", "requeue": "3", "plain": "0.05"}[kind]
            p = _retry(c, ["tbatch", "--parsable", "-o", "/dev/null", f"--export=ALL,FLOW_DIR={flow},FLOW_SLEEP={sleep}",
                           "--requeue", script])
            jid = int(p.stdout.strip())
            submitted.append(jid)
            kinds[jid] = kind
            if kind == "cancel":
                _retry(c, ["tcancel", str(jid)], ok_errors=("already completing",))
            elif kind == "requeue":
                # Its script has started (RUNNING alone may precede it): the requeue then makes a
                # second run, which the `ran` file must show.
                wait_for(lambda: str(jid) in _lines(os.path.join(flow, "ran")), timeout=60,
                         what=f"job {jid} to run")
                if _retry(c, ["tcontrol", "requeue", str(jid)], ok_errors=("not running",)) is not None:
                    requeued.append(jid)
    finally:
        stop.set()
        t.join()
    assert len(kills) >= 3, f"ctld was killed only {len(kills)} times"
    # No id handed out twice.
    assert len(set(submitted)) == len(submitted), "a job id was acknowledged twice"
    # Every acknowledged job reaches its end, none is lost. (A submission whose answer was lost
    # to a kill is not acknowledged: it may exist, it is not counted.)
    def acct():
        p = c.run(["tacct", "-n", "-X", "-P", "-o", "JobID,State", "-S", "2000-01-01"], check=False)
        return dict(line.split("|")[:2] for line in p.stdout.splitlines() if "|" in line)
    finished = ("COMPLETED", "CANCELLED", "FAILED", "NODE_FAIL", "TIMEOUT", "OUT_OF_MEMORY")
    def all_done():
        st = acct()
        return all(st.get(str(j), "").split(" ")[0] in finished for j in submitted)
    wait_for(all_done, timeout=240, interval=1, what="every acknowledged job to end")
    states = acct()
    # A cancel acknowledged, or one whose answer was lost to a kill: the job cannot have ended
    # otherwise (it sleeps 300 s).
    for j in submitted:
        if kinds[j] == "cancel":
            assert states[str(j)].startswith("CANCELLED"), f"cancelled job {j} ended {states[str(j)]}"
    ran = {}
    for line in _lines(os.path.join(flow, "ran")):
        ran[int(line)] = ran.get(int(line), 0) + 1
    for j in requeued:
        assert ran.get(j, 0) >= 2, f"requeued job {j} ran {ran.get(j, 0)} time(s)"
    not_completed = [(j, states[str(j)]) for j in submitted if kinds[j] != "cancel" and states[str(j)] != "COMPLETED"]
    assert not not_completed, f"jobs that did not complete: {not_completed[:20]}"
    assert not os.path.exists(os.path.join(flow, "double")), \
        "a job ran twice at once: " + open(os.path.join(flow, "double")).read()


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

# An unprivileged local user (tessera-alice) against ctld's Unix socket: huge frame headers, many
# idle connections, slow senders, callers that close before the answer. ctld keeps its memory,
# root and other users keep being served, and alice's own commands fall back to gRPC + munge.

# Runs as alice: opens connections to the socket and does `mode` on each, then keeps N open
# (reopening those ctld closes) until its stdin closes. Prints "ready <open> <refused>".
HOSTILE_CLIENT = r"""
import select, socket, struct, sys, time
path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def opened(i):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    if mode == "huge":  # 256 MiB and 64 MiB announced, 4 KiB sent
        try:
            s.sendall(struct.pack("<I", (256 << 20) if i % 2 == 0 else (64 << 20)) + b"x" * 4096)
        except OSError:
            pass
    return s
def refused(s):  # a refusal frame: bit 31 of the status code
    try:
        data = s.recv(4096)
    except OSError:
        return False
    return len(data) >= 8 and bool(struct.unpack("<I", data[4:8])[0] & 0x80000000)
socks = [opened(i) for i in range(n)]
time.sleep(1)
held, nrefused = [], 0
for s in socks:
    if select.select([s], [], [], 0)[0]:  # ctld answered or closed: not held
        nrefused += refused(s)
        s.close()
    else:
        held.append(s)
print("ready", len(held), nrefused, flush=True)
while not select.select([sys.stdin], [], [], 0.5)[0]:
    for s in list(held):  # reopen what ctld closed (idle): keep the pressure on
        if select.select([s], [], [], 0)[0]:
            held.remove(s)
            s.close()
            held.append(opened(1))
"""


@pytest.fixture(scope="module")
def socket_cluster():
    c = Cluster(nodes=1)
    try:
        yield c.start()
    finally:
        c.stop()


def ctld_socket(cluster):
    return f"/run/tessera/ctld-{cluster.ctld_port}.sock"


def ctld_rss_kib(cluster):
    with open(f"/proc/{cluster.procs['ctld'].pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for tessera-ctld")


class Hostile:
    """HOSTILE_CLIENT running as `user` until the with block ends."""

    def __init__(self, cluster, user, mode, n):
        self.argv = ["runuser", "-u", user, "--", "python3", "-c", HOSTILE_CLIENT,
                     ctld_socket(cluster), mode, str(n)]

    def __enter__(self):
        self.p = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline().split()
        assert line and line[0] == "ready", line
        self.open, self.refused = int(line[1]), int(line[2])
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def ctld_log(cluster):
    with open(os.path.join(cluster.dir, "ctld.log")) as f:
        return f.read()


def test_huge_frame_headers_do_not_grow_ctld(socket_cluster):
    c = socket_cluster
    base = ctld_rss_kib(c)
    with Hostile(c, "tessera-alice", "huge", 8):
        during = ctld_rss_kib(c)
        print(f"tessera-ctld VmRSS: {base} KiB before, {during} KiB under the attack")
        # The old reader zero-filled each announced frame at once: 4 x 256 + 4 x 64 MiB here.
        assert during - base < 64 * 1024, (base, during)
        c.run(["tcontrol", "ping"])
    log = ctld_log(c)
    alice = pwd.getpwnam("tessera-alice").pw_uid
    assert f"local socket: dropping connection of uid {alice}: frame length 268435456 is over the limit" in log


def test_one_user_cannot_lock_others_out_of_the_socket(socket_cluster):
    c = socket_cluster
    with Hostile(c, "tessera-alice", "idle", 300) as h:
        c.run(["tcontrol", "ping"])                            # root
        c.run(["tqueue"], user="tessera-bob")                  # another user
        job = c.submit(["--hold", "--wrap", "true"], user="tessera-bob")
        # alice herself: ctld refuses her command's connection, the command takes gRPC + munge
        p = c.run(["tqueue", "-h", "-j", str(job), "-o", "%i %u"], user="tessera-alice", check=False)
        assert p.returncode == 0 and p.stdout.split() == [str(job), "tessera-bob"], p.stderr
        c.run(["tcontrol", "ping"], user="tessera-alice")
        c.run(["tcancel", str(job)], user="tessera-bob")
        assert h.open == 8 and h.refused == 292, (h.open, h.refused)  # alice's cap
    alice = pwd.getpwnam("tessera-alice").pw_uid
    assert (f"local socket: refusing a connection of uid {alice}: too many connections from uid "
            f"{alice} on the controller's local socket (at most 8 at once)") in ctld_log(c)


def test_stalled_partial_frame_is_closed(socket_cluster):
    c = socket_cluster
    script = ("import socket, struct, sys, time\n"
              "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(30)\n"
              f"s.connect({ctld_socket(c)!r}); s.sendall(struct.pack('<I', 1000) + b'abc')\n"
              "t = time.time(); data = s.recv(100)\n"
              "print(repr(data), round(time.time() - t))\n")
    p = subprocess.run(["runuser", "-u", "tessera-alice", "--", "python3", "-c", script],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr  # a socket timeout (30 s: the old server waited 60) fails
    data, waited = p.stdout.split()
    assert data == "b''" and int(waited) <= 10, p.stdout
    alice = pwd.getpwnam("tessera-alice").pw_uid
    assert f"local socket: dropping connection of uid {alice}: read: timed out" in ctld_log(c)


def test_callers_that_close_before_the_answer_leave_ctld_running(socket_cluster):
    c = socket_cluster
    script = ("import socket, struct\n"
              "for _ in range(50):\n"
              "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
              f"    s.connect({ctld_socket(c)!r})\n"
              "    try:\n"
              "        s.sendall(struct.pack('<I', 5) + b'\\x04Ping')\n"
              "    except OSError:\n"
              "        pass  # refused: alice's cap, until ctld has seen the earlier closes\n"
              "    s.close()\n")
    subprocess.run(["runuser", "-u", "tessera-alice", "--", "python3", "-c", script], check=True,
                   timeout=60)
    time.sleep(1)  # let ctld write its answers to the closed sockets
    assert c.procs["ctld"].poll() is None, "tessera-ctld died (SIGPIPE?)"
    c.run(["tcontrol", "ping"], user="tessera-alice")


@pytest.mark.parametrize("name,text,message", [
    ("nul", "ClusterName=x\nNodeName=n1 Features=a\0b\nPartitionName=p Nodes=n1\n",
     ":2: NUL byte at column 23"),
    ("same-endpoint", "ClusterName=x\nNodeName=n1 NodeAddr=10.0.0.1 Port=7000\n"
     "NodeName=n2 NodeAddr=10.0.0.1 Port=7000\nPartitionName=p Nodes=n[1-2]\n",
     ":3: node n2 has NodeAddr 10.0.0.1 and Port 7000, as node n1"),
])
def test_check_config_refuses_nul_and_shared_node_endpoint(tmp_path, name, text, message):
    conf = tmp_path / "tessera.conf"
    conf.write_bytes(text.encode())
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", str(conf), "--check-config"],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0
    assert f"{conf}{message}" in p.stderr, p.stderr

# (end of section 5)


def test_not_responding_reason_names_the_controller_and_its_time_across_a_restart(fresh_cluster):
    """tinfo -R (sinfo -R) for a reason ctld sets itself (issue 21): USER is the controller's
    own user (root here, as slurmctld's SlurmUser), TIMESTAMP when it declared the node down;
    both kept over a controller restart while the node is still away."""
    c = fresh_cluster(nodes=2).start()
    c.procs["noded-it1"].send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: c.node_states().get("it1", "").rstrip("*") == "down", timeout=20,
                 what="it1 to be declared down")

        def reason_line():
            lines = [l for l in c.run(["tinfo", "-R", "-h"]).stdout.splitlines() if l.endswith("it1")]
            assert len(lines) == 1, lines
            l = lines[0]  # sinfo -R columns: %20E %9u %19H %N
            return l[:20].strip(), l[21:30].strip(), l[31:50].strip()

        reason, user, stamp = reason_line()
        assert (reason, user) == ("Not responding", "root")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", stamp), stamp
        c.kill("ctld")
        c.start_ctld()
        assert reason_line() == (reason, user, stamp)
    finally:
        c.procs["noded-it1"].send_signal(signal.SIGCONT)
    wait_for(lambda: c.node_states().get("it1", "").rstrip("*") == "idle", timeout=30,
             what="it1 back")
    assert not [l for l in c.run(["tinfo", "-R", "-h"]).stdout.splitlines() if l.endswith("it1")]

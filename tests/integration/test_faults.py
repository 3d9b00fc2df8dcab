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
    stepd = wait_for(lambda: re.search(rf"job {job}: launched, tessera-stepd pid (\d+)", open(log).read()),
                     what="the job's stepd").group(1)
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

# (end of section 3)


# ---- 4. node hang past SlurmdTimeout; duplicate node registration ---------------------------

# (end of section 4)


# ---- 5. hostile local socket clients --------------------------------------------------------

# (end of section 5)

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
import subprocess
import time

import pytest

from harness import BIN, Cluster, wait_for


# ---- 1. full disk during each kind of change ------------------------------------------------

# (end of section 1)


# ---- 2. damaged, empty, foreign and read-only databases -------------------------------------

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


def test_ctld_kill9_at_random_points_of_a_1000_job_flow(fresh_cluster):
    """1,000 jobs submitted, some cancelled and some requeued while they run, and ctld killed
    with SIGKILL at random points throughout. Every acknowledged submission, cancel and requeue
    holds; no job runs twice at once; no id is handed out twice."""
    import random
    seed = int(os.environ.get("TESSERA_FLOW_SEED", time.time()))
    rnd = random.Random(seed)
    print(f"seed {seed}")
    c = fresh_cluster(nodes=2, node_timeout=30).start()
    flow = os.path.join(c.dir, "flow")
    os.makedirs(flow)
    script = os.path.join(flow, "job.sh")
    with open(script, "w") as f:
        f.write(FLOW_SCRIPT)
    import threading
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
                wait_for(lambda: c.run(["tqueue", "-h", "-j", str(jid), "-o", "%T"], check=False).stdout.strip()
                         == "RUNNING", timeout=60, what=f"job {jid} to run")
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
    with open(os.path.join(flow, "ran")) as f:
        for line in f:
            ran[int(line)] = ran.get(int(line), 0) + 1
    for j in requeued:
        assert ran.get(j, 0) >= 2, f"requeued job {j} ran {ran.get(j, 0)} time(s)"
    not_completed = [(j, states[str(j)]) for j in submitted if kinds[j] != "cancel" and states[str(j)] != "COMPLETED"]
    assert not not_completed, f"jobs that did not complete: {not_completed[:20]}"
    assert not os.path.exists(os.path.join(flow, "double")), \
        "a job ran twice at once: " + open(os.path.join(flow, "double")).read()


# (end of section 3)


# ---- 4. node hang past SlurmdTimeout; duplicate node registration ---------------------------

# (end of section 4)


# ---- 5. hostile local socket clients --------------------------------------------------------

# (end of section 5)

"""Preemption with real daemons (issue 16 §4): REQUEUE (the victim runs again with
SLURM_RESTART_COUNT=1), SUSPEND (frozen with the cgroup freezer, resumed when the preemptor
ends), CANCEL with GraceTime (SIGTERM first, PREEMPTED after), events in `tcontrol show job
--events`."""
import glob
import os
import time

import pytest

from harness import file_words as lines, job_events as events, job_state as qstate, running_cluster, wait_for

CONF = ("PreemptType=preempt/qos\nPreemptMode=CANCEL\n"
        "QOSName=requeue Priority=1 PreemptMode=REQUEUE Default=YES\n"
        "QOSName=suspend Priority=1 PreemptMode=SUSPEND\n"
        "QOSName=cancel Priority=1 PreemptMode=CANCEL GraceTime=3\n"
        "QOSName=high Priority=100 Preempt=requeue,suspend,cancel\n")


@pytest.fixture(scope="module")
def pc():
    yield from running_cluster(nodes=1, extra_conf=CONF)


def test_requeue_victim_runs_again_with_restart_count(pc):
    work = pc.user_dir("tessera-alice")
    runs = os.path.join(work, "runs.txt")
    victim = pc.submit(["--qos=requeue", "-c", "2", "-o", "rq.out", "--wrap",
                        f"echo run=${{SLURM_RESTART_COUNT:-0}} >> {runs}; sleep 300"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: lines(runs) == ["run=0"], what="the victim's first run")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 2"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    pc.wait_state(high, "COMPLETED", timeout=60)
    wait_for(lambda: lines(runs) == ["run=0", "run=1"], timeout=60,
             what="the requeued victim to run again with SLURM_RESTART_COUNT=1")
    assert qstate(pc, victim) == "RUNNING"
    ev = events(pc, victim)
    assert "preempted" in ev and f'"by":{high}' in ev and "REQUEUE" in ev, ev
    assert "requeued" in ev, ev
    assert "preempting" in events(pc, high)
    pc.run(["tcancel", str(victim)])
    pc.wait_state(victim, "CANCELLED")


def job_pids(c, job):
    """Pids of the job's batch script (its command line names <spool>/job.<id>/script)."""
    mark = f"job.{job}/script"
    out = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(f"{d}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if c.dir in cmd and mark in cmd:
            out.append(int(os.path.basename(d)))
    return out


def freezer_states(pid):
    """The freezer state of the cgroup of `pid`: v1 freezer.state or v2 cgroup.freeze; [] = none."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            rows = [l.strip().split(":", 2) for l in f if l.strip()]
    except OSError:
        return []
    out = []
    for _, ctrl, path in rows:
        if "freezer" in ctrl.split(",") and "/tessera/" in path:
            out.append(open(f"/sys/fs/cgroup/freezer{path}/freezer.state").read().strip())
        if ctrl == "" and "/tessera/" in path and os.path.exists(f"/sys/fs/cgroup{path}/cgroup.freeze"):
            out.append(open(f"/sys/fs/cgroup{path}/cgroup.freeze").read().strip())
    return out


def proc_state(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("State:"):
                return line.split()[1]
    return "?"


def test_suspend_victim_frozen_then_resumed(pc):
    work = pc.user_dir("tessera-alice")
    count = os.path.join(work, "count.txt")
    victim = pc.submit(["--qos=suspend", "-c", "2", "-o", "sus.out", "--wrap",
                        f"for i in $(seq 100000); do echo $i >> {count}; sleep 0.1; done"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: len(lines(count)) > 3, what="the victim to make progress")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 5"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    wait_for(lambda: qstate(pc, high) == "RUNNING", timeout=30, what="the preemptor to start")
    assert qstate(pc, victim) == "SUSPENDED"
    pids = job_pids(pc, victim)
    assert pids, "the victim's processes must still exist"
    frozen = freezer_states(pids[0])
    if frozen:  # a cgroup with a freezer: the whole job is frozen
        assert frozen == ["FROZEN"] or frozen == ["1"], frozen
    else:  # no freezer: SIGSTOP
        assert proc_state(pids[0]) == "T"
    time.sleep(0.5)
    n1 = len(lines(count))
    time.sleep(1.0)
    assert len(lines(count)) == n1, "a suspended job must not make progress"
    pc.wait_state(high, "COMPLETED", timeout=60)
    wait_for(lambda: qstate(pc, victim) == "RUNNING", timeout=30, what="the victim to resume")
    wait_for(lambda: len(lines(count)) > n1, what="progress after the resume")
    if frozen:
        assert freezer_states(pids[0]) in (["THAWED"], ["0"])
    assert proc_state(pids[0]) in ("S", "R")
    ev = events(pc, victim)
    assert "preempted" in ev and "SUSPEND" in ev and "suspended" in ev and "resumed" in ev, ev
    pc.run(["tcancel", str(victim)])
    pc.wait_state(victim, "CANCELLED")


def test_cancel_with_grace_time_sends_sigterm_first(pc):
    work = pc.user_dir("tessera-alice")
    term = os.path.join(work, "term.txt")
    victim = pc.submit(["--qos=cancel", "-c", "2", "-o", "cg.out", "--wrap",
                        f"trap 'echo got-term >> {term}' TERM; echo started >> {term}; "
                        "while true; do sleep 0.2; done"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: lines(term) == ["started"], what="the victim to start")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 1"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    wait_for(lambda: "got-term" in lines(term), timeout=30, what="SIGTERM to reach the victim")
    # SIGTERM came first, and the job still runs in its grace time (GraceTime=3).
    assert pc.acct_state(victim)[0] == "RUNNING"
    st, _ = pc.wait_state(victim, "PREEMPTED", timeout=60)
    assert st == "PREEMPTED"
    pc.wait_state(high, "COMPLETED", timeout=60)
    ev = events(pc, victim)
    assert "preempted" in ev and '"grace_time":3' in ev and "CANCEL" in ev, ev


def test_suspended_victim_resumed_after_ctld_restart(pc):
    """The lent allocation and the resume survive a ctld restart (from the `preempted` event)."""
    work = pc.user_dir("tessera-alice")
    count = os.path.join(work, "count2.txt")
    victim = pc.submit(["--qos=suspend", "-c", "2", "-o", "sus2.out", "--wrap",
                        f"for i in $(seq 100000); do echo $i >> {count}; sleep 0.1; done"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: len(lines(count)) > 3, what="the victim to make progress")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 8"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    wait_for(lambda: qstate(pc, high) == "RUNNING", timeout=30, what="the preemptor to start")
    assert qstate(pc, victim) == "SUSPENDED"
    pc.kill("ctld")
    pc.start_ctld()
    # A job submitted now must not get the victim's lent CPUs while the preemptor runs.
    other = pc.submit(["--qos=requeue", "-c", "1", "--wrap", "true"], user="tessera-bob",
                      cwd=pc.user_dir("tessera-bob"))
    assert qstate(pc, victim) == "SUSPENDED"
    pc.wait_state(high, "COMPLETED", timeout=60)
    wait_for(lambda: qstate(pc, victim) == "RUNNING", timeout=30,
             what="the victim to resume after the restart")
    n = len(lines(count))
    wait_for(lambda: len(lines(count)) > n, what="progress after the resume")
    assert qstate(pc, other) in ("PENDING", "COMPLETED")
    pc.run(["tcancel", str(victim)])
    pc.wait_state(victim, "CANCELLED")
    pc.wait_state(other, "COMPLETED", timeout=60)

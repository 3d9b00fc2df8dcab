"""Preemption gaps (issue 16 §4, h16g) with real daemons: a CANCEL victim's GraceTime survives
a ctld restart; suspended time is shown by tacct (Suspended) and does not count toward the time
limit; a REQUEUE preemption shows as a PREEMPTED run in `tacct -D`; tacctmgr changes a QoS's
preemption fields live and durably."""
import os
import time

import pytest

from harness import file_words as lines, job_state as qstate, running_cluster, wait_for

CONF = ("PreemptType=preempt/qos\nPreemptMode=CANCEL\n"
        "QOSName=requeue Priority=1 PreemptMode=REQUEUE Default=YES\n"
        "QOSName=cancel Priority=1 PreemptMode=CANCEL GraceTime=15\n"
        "QOSName=low Priority=1 PreemptMode=REQUEUE\n"
        "QOSName=high Priority=100 Preempt=requeue,cancel\n"
        "QOSName=boss Priority=100\n")


@pytest.fixture(scope="module")
def pc():
    yield from running_cluster(nodes=1, extra_conf=CONF)


def acct_rows(c, job, *extra):
    out = c.run(["tacct", "-n", "-X", "-P", "-j", str(job), "-o", "JobID,State,Suspended"]
                + list(extra)).stdout
    return [l.split("|") for l in out.splitlines() if l.strip()]


def secs(hms):
    h, m, s = (int(x) for x in hms.split(":"))
    return h * 3600 + m * 60 + s


def test_cancel_grace_time_survives_ctld_restart(pc):
    """The grace deadline is durable: after a restart the victim runs on until it, then ends
    PREEMPTED (before, a CANCEL victim in its grace time ran on forever)."""
    work = pc.user_dir("tessera-alice")
    term = os.path.join(work, "g-term.txt")
    victim = pc.submit(["--qos=cancel", "-c", "2", "-o", "g.out", "--wrap",
                        f"trap 'echo got-term >> {term}' TERM; echo started >> {term}; "
                        "while true; do sleep 0.2; done"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: lines(term) == ["started"], what="the victim to start")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 1"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    wait_for(lambda: "got-term" in lines(term), timeout=30, what="SIGTERM to reach the victim")
    t_term = time.time()
    pc.kill("ctld")
    pc.start_ctld()
    time.sleep(2)
    # Still in its grace time (15 s): the restart neither lost nor cut it short.
    assert qstate(pc, victim) == "RUNNING", "the victim must run on in its grace time"
    st, _ = pc.wait_state(victim, "PREEMPTED", timeout=60)
    assert st == "PREEMPTED"
    assert time.time() - t_term >= 12, "killed before its GraceTime was over"
    pc.wait_state(high, "COMPLETED", timeout=60)


def test_suspended_time_shown_and_not_counted_toward_time_limit(pc):
    work = pc.user_dir("tessera-alice")
    job = pc.submit(["--qos=boss", "-c", "2", "-t", "0:12", "-o", "tl.out", "--wrap", "sleep 300"],
                    user="tessera-alice", cwd=work)
    wait_for(lambda: qstate(pc, job) == "RUNNING", what="the job to start")
    time.sleep(2)
    pc.run(["tcontrol", "suspend", str(job)])
    time.sleep(14)  # longer than the whole time limit
    assert qstate(pc, job) == "SUSPENDED"
    pc.run(["tcontrol", "resume", str(job)])
    time.sleep(3)
    # 2 s ran before, ~3 s after: the limit (12 s) is not reached yet.
    assert qstate(pc, job) == "RUNNING", "suspended time counted toward the time limit"
    rows = acct_rows(pc, job)
    assert rows and 13 <= secs(rows[-1][2]) <= 17, rows
    st, _ = pc.wait_state(job, "TIMEOUT", timeout=40)
    assert st == "TIMEOUT"
    rows = acct_rows(pc, job)
    assert 13 <= secs(rows[-1][2]) <= 17, rows


def test_requeue_preemption_is_a_preempted_run_in_tacct_duplicates(pc):
    work = pc.user_dir("tessera-alice")
    runs = os.path.join(work, "d-runs.txt")
    victim = pc.submit(["--qos=requeue", "-c", "2", "-o", "d.out", "--wrap",
                        f"echo run=${{SLURM_RESTART_COUNT:-0}} >> {runs}; sleep 300"],
                       user="tessera-alice", cwd=work)
    wait_for(lambda: lines(runs) == ["run=0"], what="the victim's first run")
    high = pc.submit(["--qos=high", "-c", "2", "--wrap", "sleep 2"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    pc.wait_state(high, "COMPLETED", timeout=60)
    wait_for(lambda: lines(runs) == ["run=0", "run=1"], timeout=60, what="the second run")
    plain = acct_rows(pc, victim)
    assert [r[1] for r in plain] == ["RUNNING"], plain
    dup = acct_rows(pc, victim, "-D")
    assert [(r[0], r[1]) for r in dup] == [(str(victim), "PREEMPTED"), (str(victim), "RUNNING")], dup
    out = pc.run(["tacct", "-D", "-n", "-X", "-P", "-j", str(victim), "-o", "State",
                  "-s", "PR"]).stdout.split()
    assert out == ["PREEMPTED"], out
    pc.run(["tcancel", str(victim)])
    pc.wait_state(victim, "CANCELLED")


def test_tacctmgr_qos_preempt_fields_live_and_durable(pc):
    """boss may preempt nothing (tessera.conf); tacctmgr gives it Preempt=low and the scheduler
    uses it at once; show qos has sacctmgr's columns; a restart keeps it."""
    work = pc.user_dir("tessera-alice")
    low = pc.submit(["--qos=low", "-c", "2", "-o", "m.out", "--wrap", "sleep 300"],
                    user="tessera-alice", cwd=work)
    wait_for(lambda: qstate(pc, low) == "RUNNING", what="the low job to start")
    boss = pc.submit(["--qos=boss", "-c", "2", "--wrap", "sleep 1"], user="tessera-bob",
                     cwd=pc.user_dir("tessera-bob"))
    time.sleep(3)
    assert qstate(pc, boss) == "PENDING" and qstate(pc, low) == "RUNNING"
    bad = pc.run(["tacctmgr", "-i", "modify", "qos", "name=boss", "set", "Preempt=ghost"],
                 check=False)
    assert bad.returncode != 0 and "ghost" in (bad.stdout + bad.stderr)
    pc.run(["tacctmgr", "-i", "modify", "qos", "name=boss", "set", "Preempt=low",
            "GraceTime=30"])
    pc.run(["tacctmgr", "-i", "modify", "qos", "name=low", "set", "PreemptMode=requeue",
            "PreemptExemptTime=0"])
    pc.wait_state(boss, "COMPLETED", timeout=60)
    wait_for(lambda: "preempted" in pc.run(["tcontrol", "show", "job", str(low), "--events"]).stdout,
             what="the low job's preemption event")

    def show():
        out = pc.run(["tacctmgr", "show", "qos", "-P", "-n",
                      "format=Name,Preempt,PreemptMode,GraceTime,PreemptExemptTime"]).stdout
        return {l.split("|")[0]: l.split("|")[1:] for l in out.splitlines() if l}
    rows = show()
    assert rows["boss"] == ["low", "cluster", "00:00:30", ""], rows
    assert rows["low"] == ["", "REQUEUE", "00:00:00", "00:00:00"], rows
    pc.kill("ctld")
    pc.start_ctld()
    assert show()["boss"] == ["low", "cluster", "00:00:30", ""]
    pc.run(["tcancel", str(low)])
    pc.wait_state(low, "CANCELLED", timeout=60)

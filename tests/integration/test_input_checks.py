"""Hardening issue, part 5: input that must be refused or shown safely. Each test acts as an
unprivileged user through the real commands and daemons (harness.Cluster.run(user=...)):

  - a negative nice is for operators and administrators, at submit and at update;
  - a dependency on a job the controller does not know is refused (Slurm's "Job dependency
    problem"), for every dependency type;
  - control characters are refused in what other users see, and escaped in every output for
    text stored before (an older version's records, node reasons);
  - times beyond 100 years, environments exec cannot take: refused at submit, naming the limit;
  - a job whose output file or working directory fails shows what failed as its reason;
  - tcancel by filter reports each job of another user as a permission error and exits 1.
"""
import json
import os
import signal
import sqlite3
import time

import pytest

from harness import Cluster, wait_for

ESC = "\x1b"


@pytest.fixture(scope="module")
def c():
    cl = Cluster(nodes=1, extra_conf="TesseraOperators=tessera-test")
    try:
        yield cl.start()
    finally:
        cl.stop()


def submit_fails(c, args, user="tessera-bob", cwd=None):
    p = c.run(["tbatch"] + args, user=user, check=False, cwd=cwd or c.user_dir(user))
    assert p.returncode == 1, (args, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    return p.stderr


def test_negative_nice_is_for_operators_at_submit_and_update(c):
    err = submit_fails(c, ["--nice=-100", "--wrap", "true"])
    assert err == ("tbatch: error: Batch job submission failed: Access/permission denied: only "
                   "operators and administrators may set a negative nice value (--nice=-100)\n")
    ops = c.user_dir("tessera-test")
    job = c.submit(["--hold", "--nice=-100", "--wrap", "true"], user="tessera-test", cwd=ops)
    assert c.run(["tqueue", "-h", "-j", str(job), "-o", "%y"]).stdout.split() == ["-100"]
    mine = c.submit(["--hold", "--wrap", "true"], user="tessera-bob", cwd=c.user_dir("tessera-bob"))
    p = c.run(["tcontrol", "update", "job", str(mine), "Nice=-5"], user="tessera-bob", check=False)
    assert p.returncode == 1 and "negative nice" in p.stderr
    # An operator may (the update path refused operators before: admins only).
    c.run(["tcontrol", "update", "job", str(mine), "Nice=-5"], user="tessera-test")
    assert c.run(["tqueue", "-h", "-j", str(mine), "-o", "%y"]).stdout.split() == ["-5"]
    c.run(["tcancel", str(job), str(mine)])


@pytest.mark.parametrize("dep_type", ["after", "afterok", "afternotok", "afterany"])
def test_dependency_on_an_unknown_job_is_refused(c, dep_type):
    err = submit_fails(c, [f"--dependency={dep_type}:999999999", "--wrap", "true"])
    assert err.startswith("tbatch: error: Batch job submission failed: Job dependency problem: "
                          f"job 999999999 ({dep_type}) is not known to the controller"), err
    assert "999999999" not in c.run(["tqueue", "-h", "-t", "all", "-o", "%E"]).stdout


def test_dependency_on_a_known_job_is_kept_and_judged(c):
    work = c.user_dir("tessera-bob")
    failed = c.submit(["--wrap", "exit 3"], user="tessera-bob", cwd=work)
    c.wait_state(failed, "FAILED")
    # Known, finished: accepted as Slurm does; afterok can then never be satisfied.
    never = c.submit([f"--dependency=afterok:{failed}", "--wrap", "true"], user="tessera-bob", cwd=work)
    wait_for(lambda: c.run(["tqueue", "-h", "-j", str(never), "-o", "%r"]).stdout.strip()
             == "DependencyNeverSatisfied", what="DependencyNeverSatisfied")
    ok = c.submit([f"--dependency=afterany:{failed}", "--wrap", "true"], user="tessera-bob", cwd=work)
    assert c.wait_state(ok, "COMPLETED")[0] == "COMPLETED"
    c.run(["tcancel", str(never)])


@pytest.mark.parametrize("option,field,position", [
    (["-J", "x" + ESC + "[2J"], "job name (--job-name)", 2),
    (["--comment", "first\nFAKE 1 root R"], "comment (--comment)", 6),
    (["-A", "acct\r"], "account (--account)", 5),
])
def test_control_characters_are_refused_at_submit(c, option, field, position):
    err = submit_fails(c, option + ["--wrap", "true"])
    assert f"Batch job submission failed: {field} contains a control character" in err, err
    assert f"at position {position};" in err, err


def test_control_characters_are_refused_at_update(c):
    job = c.submit(["--hold", "--wrap", "true"], user="tessera-bob", cwd=c.user_dir("tessera-bob"))
    p = c.run(["tcontrol", "update", "job", str(job), "Comment=a" + ESC + "]0;x"], user="tessera-bob",
              check=False)
    assert p.returncode == 1 and "Comment contains a control character (ESC, 0x1b) at position 2" in p.stderr
    c.run(["tcancel", str(job)])


def test_stored_control_characters_are_escaped_in_every_output(fresh_cluster):
    """Records written before the check (an older version) and node reasons are shown escaped."""
    cl = fresh_cluster(nodes=1).start()
    work = cl.user_dir("tessera-alice")
    job = cl.submit(["--hold", "-J", "plain", "--wrap", "true"], user="tessera-alice", cwd=work)
    cl.kill("ctld", signal.SIGTERM)
    db = sqlite3.connect(os.path.join(cl.dir, "state", "tessera.db"))
    rec = json.loads(db.execute("SELECT record FROM jobs WHERE job_id=?", (job,)).fetchone()[0])
    rec["spec"]["name"] = "x" + ESC + "[2J" + ESC + "]0;pwned\x07"
    rec["spec"]["comment"] = "line\nFAKE"
    db.execute("UPDATE jobs SET record=? WHERE job_id=?", (json.dumps(rec), job))
    db.commit()
    db.close()
    cl.start_ctld()
    cl.run(["tcontrol", "drain", cl.nodes[0], "Reason=disk" + ESC + "[31m bad"])
    outputs = [
        cl.run(["tqueue", "-o", "%i %j %k"], user="tessera-bob").stdout,
        cl.run(["tqueue", "-h", "-j", str(job), "-o", "%j"], user="tessera-bob").stdout,
        cl.run(["tqueue", "-O", "JobID,Name,Comment"], user="tessera-bob").stdout,
        cl.run(["tcontrol", "show", "job", str(job)], user="tessera-bob").stdout,
        cl.run(["tacct", "-X", "-j", str(job), "-o", "JobID,JobName%40,Comment%20"], user="tessera-bob").stdout,
        cl.run(["tacct", "-P", "-X", "-j", str(job), "-o", "JobID,JobName,Comment"], user="tessera-bob").stdout,
        cl.run(["tinfo", "-R"], user="tessera-bob").stdout,
        cl.run(["tcontrol", "show", "node", cl.nodes[0]], user="tessera-bob").stdout,
    ]
    for out in outputs:
        assert ESC not in out and "\x07" not in out and "\r" not in out, repr(out)
        assert "\\e[" in out, repr(out)
    # the newline is escaped: FAKE stays on the Comment= line (scontrol ends lines with " ")
    assert "Comment=line\\nFAKE \n" in outputs[3]
    assert not any(line.startswith("FAKE") for line in outputs[3].splitlines())
    cl.run(["tcancel", str(job)])


def test_times_beyond_100_years_are_refused(c):
    err = submit_fails(c, ["--begin=now+99999999999days", "--wrap", "true"])
    assert "invalid --begin value \"now+99999999999days\"" in err and "100 years" in err, err
    err = submit_fails(c, ["--deadline=now+99999999999days", "--wrap", "true"])
    assert "100 years" in err, err
    job = c.submit(["--hold", "--begin=now+30days", "--wrap", "true"], user="tessera-bob",
                   cwd=c.user_dir("tessera-bob"))
    # The controller bounds updates too (137 years; even an administrator).
    p = c.run(["tcontrol", "update", "job", str(job), "TimeLimit=50000-0"], check=False)
    assert p.returncode == 1 and "more than 100 years" in p.stderr, p.stderr
    c.run(["tcancel", str(job)])


def test_environment_exec_cannot_take_is_refused_naming_the_limit(c):
    work = c.user_dir("tessera-bob")
    path = os.path.join(work, "vars")
    with open(path, "w") as f:
        f.write("".join(f"V{i}=x\n" for i in range(300000)))
    err = submit_fails(c, ["--export-file", path, "--wrap", "true"])
    assert "environment and arguments too large to start the job: 300" in err, err
    assert "the limit is 2031616 bytes (exec's 2 MiB, a quarter of the 8 MiB stack limit" in err, err
    # A legitimately large environment (~400 KiB) still runs.
    with open(path, "w") as f:
        f.write("".join(f"BIG_{i}={'v' * 200}\n" for i in range(2000)))
    out = os.path.join(work, "big.out")
    job = c.submit(["--export-file", path, "-o", out, "--wrap", "echo ${#BIG_1999}"],
                   user="tessera-bob", cwd=work)
    assert c.wait_state(job, "COMPLETED")[0] == "COMPLETED"
    assert open(out).read().strip() == "200"


@pytest.mark.parametrize("args,reason", [
    (["-o", "/root/x"], "cannot open output file /root/x: Permission denied"),
    (["-D", "/nonexistent"], "couldn't chdir to `/nonexistent': No such file or directory"),
])
def test_a_failed_start_says_what_failed(c, args, reason):
    job = c.submit(args + ["--wrap", "true"], user="tessera-bob", cwd=c.user_dir("tessera-bob"))
    assert c.wait_state(job, "FAILED")[0] == "FAILED"
    q = c.run(["tqueue", "-h", "-t", "all", "-j", str(job), "-o", "%T %R"], user="tessera-bob").stdout
    assert q.strip() == f"FAILED ({reason})"
    show = c.run(["tcontrol", "show", "job", str(job)], user="tessera-bob").stdout
    assert f" Reason={reason.replace(' ', '_')} " in show, show
    acct = c.run(["tacct", "-n", "-P", "-X", "-j", str(job), "-o", "JobID,State,Reason"],
                 user="tessera-bob").stdout
    assert acct.strip() == f"{job}|FAILED|{reason}"


def test_cancel_by_filter_reports_another_users_jobs(c):
    alice = c.submit(["--hold", "-J", "shared-name", "--wrap", "true"], user="tessera-alice",
                     cwd=c.user_dir("tessera-alice"))
    for args in (["-u", "tessera-alice"], ["--name", "shared-name"], [str(alice)]):
        p = c.run(["tcancel"] + args, user="tessera-bob", check=False)
        assert p.returncode == 1, (args, p.stderr)
        assert p.stderr == f"tcancel: error: Kill job error on job id {alice}: Access/permission denied\n", p.stderr
    # Bob's own job matching the same filter is cancelled; Alice's is reported; exit 1.
    bob = c.submit(["--hold", "-J", "shared-name", "--wrap", "true"], user="tessera-bob",
                   cwd=c.user_dir("tessera-bob"))
    p = c.run(["tcancel", "--name", "shared-name"], user="tessera-bob", check=False)
    assert p.returncode == 1 and f"job id {alice}: Access/permission denied" in p.stderr
    assert c.wait_state(bob, "CANCELLED")[0] == "CANCELLED"
    assert c.acct_state(alice)[0] == "PENDING"
    # Nothing of another user's matched (none of Alice's left): silent success, as scancel.
    c.run(["tcancel", str(alice)], user="tessera-alice")
    assert c.run(["tcancel", "-u", "tessera-alice"], user="tessera-bob").stderr == ""

"""End to end: a real munged, tessera-ctld (TLS) and two tessera-noded on loopback."""
import os
import pwd
import time

from harness import wait_for


def test_job_runs_as_its_submitter_and_is_accounted(cluster):
    user = "tessera-alice"
    pw = pwd.getpwnam(user)
    work = cluster.user_dir(user)
    script = ("#!/bin/bash\n#SBATCH -J whoami\n#SBATCH -o out-%j.txt\n"
              "echo uid=$(id -u) gid=$(id -g) user=$(id -un)\n"
              "echo job=$SLURM_JOB_ID name=$SLURM_JOB_NAME nodes=$SLURM_JOB_NODELIST\n"
              "echo twin=$TESSERA_JOB_ID cwd=$(pwd)\nexit 3\n")
    job = cluster.submit([], user=user, cwd=work, input=script)
    state, code = cluster.wait_state(job, ["FAILED", "COMPLETED"])
    assert state == "FAILED" and code == "3:0"
    out_path = os.path.join(work, f"out-{job}.txt")
    out = open(out_path).read()
    assert f"uid={pw.pw_uid} gid={pw.pw_gid} user={user}" in out
    assert f"job={job} name=whoami" in out
    assert f"twin={job} cwd={work}" in out
    assert os.stat(out_path).st_uid == pw.pw_uid  # written as the user, not root
    # tacct shows it to its owner with the exit code.
    p = cluster.run(["tacct", "-j", str(job), "-P", "-n", "-o", "JobID,JobName,State,ExitCode"], user=user)
    assert f"{job}|whoami|FAILED|3:0" in p.stdout


def test_tbatch_without_the_local_socket_goes_through_grpc(cluster):
    """The remote path (gRPC + munge, as from a login node) with a script on stdin."""
    user = "tessera-alice"
    work = cluster.user_dir(user)
    remote = {"TESSERA_NO_LOCAL_SOCKET": "1"}
    script = "#!/bin/sh\n#SBATCH -o remote-%j.txt\necho remote $(id -un)\n"
    p = cluster.run(["tbatch", "--parsable"], user=user, cwd=work, input=script, env=remote)
    job = int(p.stdout.strip())
    state, _ = cluster.wait_state(job, ["COMPLETED", "FAILED"])
    assert state == "COMPLETED"
    assert open(os.path.join(work, f"remote-{job}.txt")).read() == f"remote {user}\n"
    p = cluster.run(["tbatch", "--no-such-option"], check=False, env=remote)
    assert p.returncode != 0 and p.stderr.startswith("tbatch: "), p.stderr


def test_successful_job_completes(cluster):
    work = cluster.user_dir("tessera-bob")
    job = cluster.submit(["--wrap", "echo hello", "-o", "hello.out"], user="tessera-bob", cwd=work)
    assert cluster.wait_state(job, "COMPLETED") == ("COMPLETED", "0:0")
    assert open(os.path.join(work, "hello.out")).read() == "hello\n"


def test_cancel_a_running_job(cluster):
    work = cluster.user_dir("tessera-alice")
    job = cluster.submit(["--wrap", "sleep 300"], user="tessera-alice", cwd=work)
    wait_for(lambda: cluster.acct_state(job)[0] == "RUNNING", what="job to run")
    cluster.run(["tcancel", str(job)], user="tessera-alice")
    state, _ = cluster.wait_state(job, "CANCELLED")
    assert state == "CANCELLED"


def test_time_limit_gives_timeout(cluster):
    work = cluster.user_dir("tessera-alice")
    # "0:3" is 3 seconds in Slurm's M:S form; KillWait=1 in the test config.
    job = cluster.submit(["-t", "0:3", "--wrap", "trap '' TERM; sleep 300"], user="tessera-alice", cwd=work)
    started = time.time()
    state, _ = cluster.wait_state(job, "TIMEOUT", timeout=30)
    assert state == "TIMEOUT"
    assert time.time() - started < 25


def test_users_cannot_cancel_each_others_jobs(cluster):
    work = cluster.user_dir("tessera-alice")
    job = cluster.submit(["--hold", "--wrap", "true"], user="tessera-alice", cwd=work)
    p = cluster.run(["tcancel", str(job)], user="tessera-bob", check=False)
    assert p.returncode != 0
    assert "permission denied" in p.stderr.lower()
    p = cluster.run(["tqueue", "-h", "-j", str(job), "-o", "%T %r"])
    assert p.stdout.split() == ["PENDING", "JobHeldUser"]
    # Its owner can; and root can too.
    cluster.run(["tcancel", str(job)], user="tessera-alice")
    assert cluster.wait_state(job, "CANCELLED")[0] == "CANCELLED"


def test_hold_and_release(cluster):
    work = cluster.user_dir("tessera-bob")
    job = cluster.submit(["-H", "--wrap", "echo released", "-o", "rel.out"], user="tessera-bob", cwd=work)
    time.sleep(1.5)
    assert cluster.acct_state(job)[0] == "PENDING"
    cluster.run(["tcontrol", "release", str(job)], user="tessera-bob")
    assert cluster.wait_state(job, "COMPLETED")[0] == "COMPLETED"


def test_malformed_directive_submits_nothing(cluster):
    work = cluster.user_dir("tessera-alice")
    before = cluster.run(["tacct", "-n", "-X", "-P", "-a", "-o", "JobID"], check=False).stdout
    script = "#!/bin/bash\n#SBATCH -J ok\n#SBATCH --time=60:\necho never\n"
    p = cluster.run(["tbatch"], user="tessera-alice", cwd=work, input=script, check=False)
    assert p.returncode != 0
    assert "line 3" in p.stderr and "--time" in p.stderr
    after = cluster.run(["tacct", "-n", "-X", "-P", "-a", "-o", "JobID"], check=False).stdout
    assert before == after


def test_unsatisfiable_request_is_rejected_at_submit(cluster):
    p = cluster.run(["tbatch", "-c", "64", "--wrap", "true"], check=False)
    assert p.returncode != 0
    assert "CPU" in p.stderr


def test_multi_node_job_environment(cluster):
    work = cluster.user_dir("tessera-bob")
    job = cluster.submit(["-N", "2", "--ntasks-per-node", "2", "-o", "mn.out", "--wrap",
                          "echo $SLURM_NNODES $SLURM_NTASKS $SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE"],
                         user="tessera-bob", cwd=work)
    assert cluster.wait_state(job, "COMPLETED")[0] == "COMPLETED"
    assert open(os.path.join(work, "mn.out")).read().split() == ["2", "4", "it[1-2]", "2(x2)"]


def test_tinfo_formats(cluster):
    assert cluster.run(["tinfo", "-h", "-o", "%R %D %c %a"]).stdout == "debug 2 2 up\n"
    lines = cluster.run(["tinfo", "-l"]).stdout.splitlines()
    assert lines[1].split()[:4] == ["PARTITION", "AVAIL", "TIMELIMIT", "JOB_SIZE"]
    p = cluster.run(["tinfo", "-o", "%P %y"], check=False)
    assert p.returncode != 0 and "invalid format code" in p.stderr

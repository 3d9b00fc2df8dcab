"""Issue 19 (h19b), "around jobs" and "output that scripts parse", through the Slurm names on
a real cluster: array ids in every command, sacct's rows, scancel's silence, EnforcePartLimits,
scontrol's records, sbatch's messages (formats from Slurm 22.05's sources)."""
import pwd
import re

import pytest

from harness import BIN, wait_for, install_slurm_names


@pytest.fixture(scope="module")
def names(cluster):
    return install_slurm_names(cluster, "compat")


USER = "tessera-alice"


def slurm(cluster, names, argv, user=None, check=True):
    env = {"PATH": f"{names}:{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    return cluster.run([f"{names}/{argv[0]}"] + list(argv[1:]), user=user, check=check, env=env,
                       cwd=cluster.user_dir(USER) if user else None)


def sbatch(cluster, names, args):
    p = slurm(cluster, names, ["sbatch", "--parsable"] + list(args), user=USER)
    return int(p.stdout.strip())


def squeue_field(cluster, names, ref, fmt):
    return slurm(cluster, names, ["squeue", "-h", "-t", "all", "-j", ref, "-o", fmt]).stdout.strip()


def test_array_ids_in_every_command(cluster, names):
    a = sbatch(cluster, names, ["--array=0-3%1", "--wrap", "sleep 2"])
    # the pending element 3 is found inside the remainder, as squeue narrows it
    wait_for(lambda: squeue_field(cluster, names, f"{a}_3", "%i %t") == f"{a}_3 PD",
             what="element 3 pending")
    show = slurm(cluster, names, ["scontrol", "show", "job", str(a)]).stdout
    assert f"ArrayJobId={a} ArrayTaskId=" in show
    assert "ArrayTaskThrottle=1" in show
    slurm(cluster, names, ["scontrol", "hold", f"{a}_3"], user=USER)
    # As in Slurm, the held element leaves the throttled remainder: its own line, JobHeldUser.
    assert squeue_field(cluster, names, f"{a}_3", "%r") == "JobHeldUser"
    slurm(cluster, names, ["scontrol", "release", f"{a}_3"], user=USER)
    def all_done():
        out = slurm(cluster, names, ["sacct", "-n", "-P", "-X", "-j", str(a), "-o", "JobID,State"]).stdout
        rows = sorted(out.split())
        return rows if rows == [f"{a}_{i}|COMPLETED" for i in range(4)] else None
    wait_for(all_done, timeout=60, what="every element COMPLETED in sacct -j ARRAY_ID")
    one = slurm(cluster, names, ["sacct", "-n", "-P", "-X", "-j", f"{a}_2", "-o", "JobID"]).stdout
    assert one.split() == [f"{a}_2"]


def test_squeue_finished_and_unknown_jobs(cluster, names):
    job = sbatch(cluster, names, ["--wrap", "true"])
    cluster.wait_state(job, "COMPLETED")
    wait_for(lambda: squeue_field(cluster, names, str(job), "%T") == "COMPLETED", what="completed")
    q = slurm(cluster, names, ["squeue", "-h", "-j", str(job)])
    assert q.stdout == ""  # not shown unless -t asks
    bad = slurm(cluster, names, ["squeue", "-j", "99999999"], check=False)
    assert bad.returncode == 1
    assert bad.stderr == "slurm_load_jobs error: Invalid job id specified\n"
    c = slurm(cluster, names, ["scancel", str(job)], user=USER, check=False)
    assert (c.returncode, c.stdout, c.stderr) == (0, "", "")
    c = slurm(cluster, names, ["scancel", "99999999"], user=USER, check=False)
    assert (c.returncode, c.stderr) == (0, "")
    v = slurm(cluster, names, ["scancel", "-v", str(job)], user=USER, check=False)
    assert v.returncode == 0
    assert f"Kill job error on job id {job}: Job/step already completing or completed" in v.stderr


def test_sacct_cancelled_by_uid_and_batch_step(cluster, names):
    job = sbatch(cluster, names, ["--wrap", "sleep 60"])
    wait_for(lambda: squeue_field(cluster, names, str(job), "%T") == "RUNNING", what="running")
    slurm(cluster, names, ["scancel", str(job)], user=USER)
    cluster.wait_state(job, "CANCELLED")
    uid = pwd.getpwnam(USER).pw_uid
    def rows():
        out = slurm(cluster, names, ["sacct", "-n", "-P", "-j", str(job), "-o",
                                     "JobID,JobName,Partition,State,ExitCode"]).stdout.splitlines()
        return out if len(out) >= 2 else None
    out = wait_for(rows, what="sacct rows")
    assert out[0] == f"{job}|wrap|debug|CANCELLED by {uid}|0:0"
    assert out[1].startswith(f"{job}.batch|batch||CANCELLED|0:")
    long = slurm(cluster, names, ["sacct", "-l", "-j", str(job)])
    assert long.stdout.split()[:4] == ["JobID", "JobIDRaw", "JobName", "Partition"]
    js = slurm(cluster, names, ["sacct", "--json", "-j", str(job)], check=False)
    assert js.returncode == 1 and "not supported" in js.stderr


def test_partition_time_limit_waits_as_slurm(cluster, names):
    # EnforcePartLimits=NO (Slurm's default): over MaxTime=1:00:00 the job waits.
    job = sbatch(cluster, names, ["--time=2:00:00", "--wrap", "true"])
    wait_for(lambda: squeue_field(cluster, names, str(job), "%T %r") == "PENDING PartitionTimeLimit",
             what="reason PartitionTimeLimit")
    slurm(cluster, names, ["scancel", str(job)], user=USER)


def test_submit_refusals_in_slurm_words(cluster, names):
    x = slurm(cluster, names, ["sbatch", "-x", "nosuchnode", "--wrap", "true"], user=USER, check=False)
    assert x.returncode != 0 and "Invalid node name specified" in x.stderr
    p = slurm(cluster, names, ["sbatch", "-p", "nosuch", "--wrap", "true"], user=USER, check=False)
    assert "Batch job submission failed: Invalid partition name specified" in p.stderr
    u = slurm(cluster, names, ["sbatch", "--bogus", "--wrap", "true"], user=USER, check=False)
    assert u.returncode == 255
    assert u.stderr.endswith('Try "sbatch --help" for more information\n')
    t = slurm(cluster, names, ["sbatch", "--test-only", "--wrap", "true"], user=USER)
    m = re.match(r"sbatch: Job (\d+) to start at", t.stderr)
    assert m, t.stderr
    assert sbatch(cluster, names, ["--wrap", "true"]) == int(m.group(1))


def test_scontrol_show_partition_node_and_sinfo(cluster, names):
    part = slurm(cluster, names, ["scontrol", "show", "partition", "debug"]).stdout
    assert "   Nodes=it[1-2]\n" in part
    assert "TRES=cpu=4,mem=4G,node=2,billing=4" in part
    def node():
        out = slurm(cluster, names, ["scontrol", "show", "node", "it1"]).stdout
        return out if re.search(r"CPULoad=\d+\.\d\d", out) else None
    out = wait_for(node, what="a heartbeat's load")
    for key in ("Sockets=2 Boards=1", "ThreadsPerCore=1", "Weight=1", "   OS=Linux ", "Arch="):
        assert key in out
    s = slurm(cluster, names, ["sinfo", "-s"]).stdout.splitlines()
    assert s[0] == "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T)  NODELIST"
    assert s[1].split()[-2:] == ["0/2/0/2", "it[1-2]"] or s[1].split()[-1] == "it[1-2]"
    n = slurm(cluster, names, ["sinfo", "-h", "-o", "%n %T %C %m"]).stdout.split("\n")
    assert n[0].split()[0] == "it1" and n[0].split()[3] == "2048"

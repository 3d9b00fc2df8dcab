"""Scheduling features through the real controller: arrays, dependencies, limits, backfill
expectations, test-only, sdiag, suspend/resume and job updates."""
import os
import time

import pytest

from harness import Cluster, wait_for

QOS = ("QOSName=normal Priority=10 Default=YES\n"
       "QOSName=capped Priority=10 MaxJobsPerUser=1 MaxSubmitJobsPerUser=3\n"
       "PartitionName=long Nodes=it1 MaxTime=2-00:00:00 DefaultTime=1:00:00 State=UP\n")


@pytest.fixture(scope="module")
def sc():
    c = Cluster(nodes=2, extra_conf=QOS)
    try:
        yield c.start()
    finally:
        c.stop()


def states(c, *ids):
    out = c.run(["tqueue", "-h", "-t", "all", "-r", "-o", "%i %T %r"]).stdout
    return {l.split()[0]: l.split()[1:] for l in out.splitlines() if l.strip()}


def test_array_with_concurrency_limit(sc):
    work = sc.user_dir("tessera-alice")
    job = sc.submit(["--array=0-5%2", "-o", "arr-%A_%a.out", "--wrap",
                     "echo $SLURM_ARRAY_JOB_ID $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_COUNT; sleep 1"],
                    user="tessera-alice", cwd=work)
    # While pending, the remainder shows as one line, squeue-style.
    out = sc.run(["tqueue", "-h", "-o", "%i %T"]).stdout
    assert any(l.startswith(f"{job}_[") for l in out.splitlines()), out
    max_running = 0
    def all_done():
        nonlocal max_running
        q = sc.run(["tqueue", "-h", "-r", "-t", "all", "-o", "%i %T"]).stdout.splitlines()
        mine = [l.split() for l in q if l.startswith(f"{job}_")]
        max_running = max(max_running, sum(1 for _, st in mine if st == "RUNNING"))
        return len(mine) == 6 and all(st == "COMPLETED" for _, st in mine)
    wait_for(all_done, timeout=60, interval=0.2, what="array to finish")
    assert max_running <= 2
    for i in range(6):
        text = open(os.path.join(work, f"arr-{job}_{i}.out")).read().split()
        assert text == [str(job), str(i), "6"]


def test_cancelling_an_array_cancels_its_elements(sc):
    work = sc.user_dir("tessera-bob")
    job = sc.submit(["--array=1-4", "--hold", "--wrap", "true"], user="tessera-bob", cwd=work)
    sc.run(["tcancel", str(job)], user="tessera-bob")
    q = sc.run(["tqueue", "-h", "-r", "-t", "all", "-o", "%i %T"]).stdout.splitlines()
    mine = [l.split()[1] for l in q if l.startswith(f"{job}_")]
    assert mine == ["CANCELLED"] * 4


def test_dependencies_afterok_and_never_satisfied(sc):
    work = sc.user_dir("tessera-alice")
    first = sc.submit(["--wrap", "sleep 1; exit 1"], user="tessera-alice", cwd=work)
    ok_dep = sc.submit(["-d", f"afternotok:{first}", "--wrap", "true"], user="tessera-alice", cwd=work)
    never = sc.submit(["-d", f"afterok:{first}", "--wrap", "true"], user="tessera-alice", cwd=work)
    assert sc.run(["tqueue", "-h", "-j", str(never), "-o", "%r"]).stdout.strip() == "Dependency"
    assert sc.wait_state(ok_dep, "COMPLETED")[0] == "COMPLETED"
    wait_for(lambda: sc.run(["tqueue", "-h", "-j", str(never), "-o", "%r"]).stdout.strip()
             == "DependencyNeverSatisfied", what="DependencyNeverSatisfied")
    sc.run(["tcancel", str(never)])


def test_qos_limits(sc):
    work = sc.user_dir("tessera-bob")
    a = sc.submit(["-q", "capped", "--wrap", "sleep 20"], user="tessera-bob", cwd=work)
    b = sc.submit(["-q", "capped", "--wrap", "true"], user="tessera-bob", cwd=work)
    wait_for(lambda: sc.acct_state(a)[0] == "RUNNING", what="first capped job to run")
    wait_for(lambda: sc.run(["tqueue", "-h", "-j", str(b), "-o", "%r"]).stdout.strip()
             == "QOSMaxJobsPerUserLimit", what="second capped job to wait on the QoS")
    c = sc.submit(["-q", "capped", "--hold", "--wrap", "true"], user="tessera-bob", cwd=work)
    p = sc.run(["tbatch", "-q", "capped", "--wrap", "true"], user="tessera-bob", cwd=work, check=False)
    assert p.returncode != 0 and "QOSMaxSubmitJobPerUserLimit" in p.stderr
    p = sc.run(["tbatch", "-q", "nosuchqos", "--wrap", "true"], user="tessera-bob", cwd=work, check=False)
    assert p.returncode != 0 and "qos" in p.stderr.lower()
    for j in (a, b, c):
        sc.run(["tcancel", str(j)])


def test_backfill_reservation_and_start_estimate(sc):
    work = sc.user_dir("tessera-alice")
    # Fill both nodes for ~30 s, then a 2-node job must wait: it gets a reservation.
    fillers = [sc.submit(["-t", "1", "-w", n, "-c", "2", "--wrap", "sleep 30"], user="tessera-alice", cwd=work)
               for n in ("it1", "it2")]
    for f in fillers:
        wait_for(lambda f=f: sc.acct_state(f)[0] == "RUNNING", what="fillers to run")
    big = sc.submit(["-N", "2", "-c", "2", "-t", "5", "--wrap", "true"], user="tessera-alice", cwd=work)
    def estimated():
        out = sc.run(["tqueue", "-h", "--start", "-j", str(big), "-o", "%i %S %r"]).stdout.split()
        return out if len(out) >= 2 and out[1] not in ("N/A", "") else None
    fields = wait_for(estimated, what="an expected start time")
    assert fields[2] == "Resources"
    # test-only answers without submitting.
    p = sc.run(["tbatch", "--test-only", "-c", "1", "--wrap", "true"], user="tessera-alice", cwd=work)
    assert "to start at" in (p.stdout + p.stderr)
    for j in fillers + [big]:
        sc.run(["tcancel", str(j)])


def test_sdiag_counts_cycles(sc):
    out = sc.run(["tcontrol", "sdiag"]).stdout
    assert "cycles" in out.lower() or "Total cycles" in out
    assert "SubmitJob" in out


def test_suspend_resume_and_update(sc):
    work = sc.user_dir("tessera-bob")
    job = sc.submit(["-o", "sus.out", "--wrap", "for i in $(seq 100); do echo $i; sleep 0.1; done"],
                    user="tessera-bob", cwd=work)
    wait_for(lambda: sc.acct_state(job)[0] == "RUNNING", what="job to run")
    p = sc.run(["tcontrol", "suspend", str(job)], user="tessera-bob", check=False)
    assert p.returncode != 0  # users may not suspend
    sc.run(["tcontrol", "suspend", str(job)])
    assert sc.run(["tqueue", "-h", "-j", str(job), "-o", "%T"]).stdout.strip() == "SUSPENDED"
    time.sleep(0.5)
    n1 = len(open(os.path.join(work, "sus.out")).read().split())
    time.sleep(1.0)
    n2 = len(open(os.path.join(work, "sus.out")).read().split())
    assert n1 == n2, "a suspended job must not make progress"
    sc.run(["tcontrol", "resume", str(job)])
    wait_for(lambda: len(open(os.path.join(work, "sus.out")).read().split()) > n2, what="progress after resume")
    sc.run(["tcancel", str(job)])
    # Pending jobs can move partitions; to a partition that does not exist they cannot.
    held = sc.submit(["--hold", "--wrap", "true"], user="tessera-bob", cwd=work)
    sc.run(["tcontrol", "update", "job", str(held), "Partition=long"], user="tessera-bob")
    assert sc.run(["tqueue", "-h", "-j", str(held), "-o", "%P"]).stdout.strip() == "long"
    p = sc.run(["tcontrol", "update", "job", str(held), "Partition=nope"], user="tessera-bob", check=False)
    assert p.returncode != 0
    sc.run(["tcancel", str(held)])

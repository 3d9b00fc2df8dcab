"""Advance reservations (issue 17 §1) through the real controller and commands: tcontrol
create/update/delete/show reservation, tinfo -T, tbatch --reservation, a maintenance window
holding back a long job with Slurm's reason, and reservations surviving a ctld restart."""
import pytest

from harness import Cluster, wait_for

ALICE, BOB = "tessera-alice", "tessera-bob"


@pytest.fixture(scope="module")
def rc():
    c = Cluster(nodes=2)
    try:
        yield c.start()
    finally:
        c.stop()


def show(c, name=None):
    """{key: value} of `tcontrol show reservation NAME -o` (one line)."""
    argv = ["tcontrol", "-o", "show", "reservation"] + ([name] if name else [])
    out = c.run(argv).stdout.strip()
    return dict(f.split("=", 1) for f in out.split() if "=" in f)


def reason(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%r"]).stdout.strip()


def node_of(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%N"]).stdout.strip()


def test_create_show_and_submit_into_a_reservation(rc):
    rc.run(["tcontrol", "create", "reservation", "ReservationName=alice_r", "StartTime=now",
            "Duration=30", "Nodes=it1", f"Users={ALICE}"])
    r = show(rc, "alice_r")
    assert r["Nodes"] == "it1" and r["NodeCnt"] == "1" and r["Users"] == ALICE
    assert r["State"] == "ACTIVE" and r["Duration"] == "00:30:00"
    t = rc.run(["tinfo", "-T"]).stdout.splitlines()
    assert t[0].split() == ["RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST"]
    row = [l.split() for l in t[1:] if l.startswith("alice_r")][0]
    assert row[1] == "ACTIVE" and row[4] == "30:00" and row[5] == "it1"

    work_a, work_b = rc.user_dir(ALICE), rc.user_dir(BOB)
    mine = rc.submit(["--reservation=alice_r", "-c", "1", "-t", "5", "--wrap", "sleep 60"],
                     user=ALICE, cwd=work_a)
    wait_for(lambda: rc.acct_state(mine)[0] == "RUNNING", what="the reservation's job to run")
    assert node_of(rc, mine) == "it1"
    # Bob may not use it; a name that does not exist is refused with Slurm's words.
    p = rc.run(["tbatch", "--reservation=alice_r", "--wrap", "true"], user=BOB, cwd=work_b, check=False)
    assert p.returncode != 0 and "Access denied to requested reservation" in p.stderr
    p = rc.run(["tbatch", "--reservation=nosuch", "--wrap", "true"], user=BOB, cwd=work_b, check=False)
    assert p.returncode != 0 and "Requested reservation is invalid" in p.stderr
    # Bob's job without it keeps off it1 (one CPU free there) while the reservation lasts.
    other = rc.submit(["-c", "1", "-t", "5", "--wrap", "sleep 60"], user=BOB, cwd=work_b)
    wait_for(lambda: rc.acct_state(other)[0] == "RUNNING", what="bob's job to run")
    assert node_of(rc, other) == "it2"
    # A reservation with a running job cannot be deleted; once it ended, it can.
    p = rc.run(["tcontrol", "delete", "reservation", "alice_r"], check=False)
    assert p.returncode != 0 and "Reservation busy" in p.stderr
    for j in (mine, other):
        rc.run(["tcancel", str(j)])
    rc.wait_state(mine, "CANCELLED")
    rc.run(["tcontrol", "delete", "reservation", "alice_r"])
    assert "No reservations in the system" in rc.run(["tcontrol", "show", "reservation"]).stdout


def test_maintenance_holds_back_a_long_job(rc):
    rc.run(["tcontrol", "create", "reservation", "ReservationName=maint", "StartTime=now+5minutes",
            "Duration=60", "Nodes=ALL", "Users=root", "Flags=MAINT,IGNORE_JOBS"])
    assert show(rc, "maint")["Flags"] == "MAINT,IGNORE_JOBS"
    assert show(rc, "maint")["State"] == "INACTIVE"
    work = rc.user_dir(ALICE)
    long_job = rc.submit(["-t", "10", "--wrap", "true"], user=ALICE, cwd=work)
    wait_for(lambda: reason(rc, long_job) == "ReqNodeNotAvail, Reserved for maintenance",
             what="the long job to wait for the maintenance window")
    # A job that ends before the window starts runs now.
    short = rc.submit(["-t", "2", "--wrap", "true"], user=ALICE, cwd=work)
    rc.wait_state(short, "COMPLETED")
    assert rc.acct_state(long_job)[0] == "PENDING"
    rc.run(["tcancel", str(long_job)])
    rc.run(["tcontrol", "delete", "reservation", "maint"])


def test_update_validation_and_overlap(rc):
    rc.run(["tcontrol", "create", "reservation", "ReservationName=team", "StartTime=now+1hour",
            "Duration=60", "Nodes=it[1-2]", f"Users={ALICE},{BOB}"])
    before = show(rc, "team")
    rc.run(["tcontrol", "update", "ReservationName=team", f"Users=-{BOB}"])
    assert show(rc, "team")["Users"] == ALICE
    rc.run(["tcontrol", "update", "reservation", "ReservationName=team", "Duration=2:00:00"])
    after = show(rc, "team")
    assert after["Duration"] == "02:00:00" and after["StartTime"] == before["StartTime"]
    # Refused changes name the problem and change nothing.
    p = rc.run(["tcontrol", "update", "ReservationName=team", "Nodes=it9"], check=False)
    assert p.returncode != 0 and "invalid node name specified: it9" in p.stderr
    p = rc.run(["tcontrol", "create", "reservation", "ReservationName=clash",
                "StartTime=now+1hour", "Duration=10", "Nodes=it2", "Users=root"], check=False)
    assert p.returncode != 0 and "Requested nodes are busy" in p.stderr and "team" in p.stderr
    p = rc.run(["tcontrol", "create", "reservation", "ReservationName=bad", "StartTime=now+2hours",
                "EndTime=now+1hour", "Nodes=it2", "Users=root"], check=False)
    assert p.returncode != 0 and "is not after StartTime" in p.stderr
    p = rc.run(["tcontrol", "create", "reservation", "ReservationName=x", "Duration=10",
                "Nodes=it2", "Users=root"], user=ALICE, check=False)
    assert p.returncode != 0  # administrators only
    assert show(rc, "team") == after
    names = [l.split()[0] for l in rc.run(["tinfo", "-T", "-h"]).stdout.splitlines()]
    assert names == ["team"]
    rc.run(["tcontrol", "delete", "ReservationName=team"])


def test_reservations_survive_a_controller_restart(rc):
    rc.run(["tcontrol", "create", "reservation", "ReservationName=keep", "StartTime=now+1hour",
            "Duration=1-0", "NodeCnt=1", "Accounts=physics", "Users=root", "Flags=DAILY"])
    before = show(rc, "keep")
    rc.kill("ctld")
    rc.start_ctld()
    rc.wait_nodes_up()
    assert show(rc, "keep") == before
    assert before["Flags"] == "DAILY" and before["Accounts"] == "physics"
    rc.run(["tcontrol", "delete", "reservation", "keep"])
    rc.kill("ctld")
    rc.start_ctld()
    rc.wait_nodes_up()
    assert "No reservations in the system" in rc.run(["tcontrol", "show", "reservation"]).stdout

"""Hierarchical queues with real daemons (issue 16 §2): account `qb` borrows the GPUs `qa`
leaves idle; when `qa` submits, the reclaim action takes its share back by preempting `qb`'s
newest job (REQUEUE, or CANCEL through the victim's QoS), the victim shows it in its events,
and nobody evicts anybody afterwards. Guarantees change live with tacctmgr and show in
`tacctmgr show account` and `tshare --queues`."""
import time

import pytest

from harness import Cluster, wait_for

# Written in session 4 (h16q) against the code, but never run: the daemons could not be built
# on the shared VM before the deadline. Remove this mark after a first green run.
# (h16q wrote this file before it could run; first run at the merge)

ALICE, BOB = "tessera-alice", "tessera-bob"
GRES = "NodeName=it1 Name=gpu Type=a100 Count=4 MemoryMiB=40960 Simulated=yes\n"
CONF = ("PreemptMode=REQUEUE\n"
        "QOSName=normal Default=YES\nQOSName=scratch PreemptMode=CANCEL\n"
        "AccountName=qa Guarantee=gres/gpu=2\n"
        "AccountName=qb Guarantee=gres/gpu=2\n"
        f"UserName={ALICE} Accounts=qa\nUserName={BOB} Accounts=qb\n")


@pytest.fixture(scope="module")
def qc():
    c = Cluster(nodes=1, node_extra="Gres=gpu:a100:4", gres=GRES, extra_conf=CONF)
    try:
        yield c.start()
    finally:
        c.stop()


def state(c, job):
    return c.run(["tqueue", "-h", "-t", "all", "-j", str(job), "-o", "%T"]).stdout.strip()


def events(c, job):
    return c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout


def gpu_job(c, user, account, *extra):
    return c.submit(["-A", account, "--gres=gpu:2", "-c", "1", *extra, "--wrap", "sleep 600"],
                    user=user, cwd=c.user_dir(user))


def queues(c):
    out = c.run(["tshare", "--queues", "-P", "-n",
                 "-o", "Account,Guarantee,Allocated,Deserved,Borrowed,OverShare"]).stdout
    rows = {}
    for line in out.splitlines():
        f = line.split("|")
        rows[f[0].strip()] = f[1:]
    return rows


def gpus(tres):
    for item in tres.split(","):
        if item.startswith("gres/gpu="):
            return int(item.split("=")[1])
    return 0


def cancel(c, *jobs):
    for j in jobs:
        c.run(["tcancel", str(j)], check=False)
    for j in jobs:
        c.wait_state(j, ["CANCELLED", "COMPLETED", "PREEMPTED"], timeout=60)


def test_borrow_then_reclaim_requeues_the_newest_victim(qc):
    b1 = gpu_job(qc, BOB, "qb")
    qc.wait_state(b1, "RUNNING")
    time.sleep(1.1)  # distinct start times: the newest is the cheapest victim
    b2 = gpu_job(qc, BOB, "qb")
    qc.wait_state(b2, "RUNNING")  # qa is idle: qb borrows its 2 GPUs
    wait_for(lambda: gpus(queues(qc)["qb"][1]) == 4, what="tshare to show qb holding 4 GPUs")
    q = queues(qc)["qb"]
    assert gpus(q[0]) == 2 and gpus(q[3]) == 2, q  # guarantee 2, borrowed 2 above it
    a1 = gpu_job(qc, ALICE, "qa")
    qc.wait_state(a1, "RUNNING", timeout=60)
    wait_for(lambda: state(qc, b2) == "PENDING", timeout=30, what="the victim to be requeued")
    assert state(qc, b1) == "RUNNING"
    ev = events(qc, b2)
    assert "preempted" in ev and f'"by":{a1}' in ev and "REQUEUE" in ev and '"cause":"reclaim"' in ev, ev
    assert "requeued" in ev, ev
    assert '"cause":"reclaim"' in events(qc, a1)
    wait_for(lambda: gpus(queues(qc)["qa"][1]) == 2, what="tshare to show qa holding 2 GPUs")
    rows = queues(qc)
    assert gpus(rows["qa"][2]) == 2 and gpus(rows["qb"][2]) == 2, rows  # deserved 2 + 2
    assert gpus(rows["qb"][4]) == 0, rows  # nothing over its share: nothing to reclaim
    # No ping-pong: qb's requeued job waits at its share; nobody is evicted again.
    time.sleep(4)
    assert state(qc, a1) == "RUNNING" and state(qc, b1) == "RUNNING" and state(qc, b2) == "PENDING"
    assert events(qc, a1).count("preempted") == 0
    cancel(qc, a1, b1, b2)


def test_cancel_mode_victim_ends_preempted(qc):
    b1 = gpu_job(qc, BOB, "qb", "--qos=scratch")
    b2 = gpu_job(qc, BOB, "qb", "--qos=scratch")
    qc.wait_state(b1, "RUNNING")
    qc.wait_state(b2, "RUNNING")
    a1 = gpu_job(qc, ALICE, "qa")
    qc.wait_state(a1, "RUNNING", timeout=60)
    wait_for(lambda: len([j for j in (b1, b2) if state(qc, j) == "PREEMPTED"]) == 1, timeout=30,
             what="one CANCEL victim to end PREEMPTED")
    v = b1 if state(qc, b1) == "PREEMPTED" else b2
    ev = events(qc, v)
    assert "CANCEL" in ev and '"cause":"reclaim"' in ev, ev
    cancel(qc, a1, b1 if v == b2 else b2)


def test_guarantee_changes_live_with_tacctmgr(qc):
    qc.run(["tacctmgr", "-i", "modify", "account", "qa", "set", "Guarantee=gres/gpu=3",
            "Weight=2", "Limit=gres/gpu=4"])
    out = qc.run(["tacctmgr", "-nP", "show", "account", "where", "name=qa",
                  "format=Account,Guarantee,Limit,Weight"]).stdout.strip()
    assert out == "qa|gres/gpu=3|gres/gpu=4|2", out
    b1 = gpu_job(qc, BOB, "qb")
    qc.wait_state(b1, "RUNNING")
    wait_for(lambda: queues(qc).get("qa", [""])[0] == "gres/gpu=3", what="tshare to show the new guarantee")
    # qa now deserves 3 of 4: a 2-GPU job fits its share, and qb (2, at its demand) is not over
    # it, so it starts on the 2 idle GPUs without any eviction.
    a1 = gpu_job(qc, ALICE, "qa")
    qc.wait_state(a1, "RUNNING", timeout=60)
    assert state(qc, b1) == "RUNNING"
    qc.run(["tacctmgr", "-i", "modify", "account", "qa", "set", "Guarantee=gres/gpu=2",
            "Weight=1", "Limit=-1"])
    cancel(qc, a1, b1)

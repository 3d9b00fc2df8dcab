"""Fair share with real daemons (issue 16 §3): usage charged while a job runs, persisted so a
ctld restart changes nothing, tshare/tprio output, a heavy user ordered after a light one."""
import signal
import time

from harness import Cluster, wait_for

ALICE, BOB = "tessera-alice", "tessera-bob"


def start(cluster, extra):
    """Starts `cluster` with `extra` global lines and CPU=2 billing on the partition."""
    cluster._start_munged()
    text = cluster.default_config().replace("State=UP", "State=UP TRESBillingWeights=CPU=2.0")
    cluster.write_config(text.replace("MinJobAge=600\n", "MinJobAge=600\n" + extra + "\n"))
    cluster.start_ctld()
    for n in cluster.nodes:
        cluster.start_noded(n)
    cluster.wait_nodes_up()
    return cluster


def shares(c):
    """{(account, user): (raw usage, fairshare)} from tshare -a -P -n."""
    out = c.run(["tshare", "-a", "-P", "-n", "-o", "Account,User,RawUsage,FairShare"]).stdout
    rows = {}
    for line in out.splitlines():
        acct, user, raw, fs = line.split("|")
        rows[(acct.strip(), user)] = (int(raw), float(fs) if fs else None)
    return rows


def usage(c, acct, user):
    return shares(c).get((acct, user), (0, None))[0]


def wait_running(c, job):
    wait_for(lambda: c.run(["tqueue", "-h", "-j", str(job), "-o", "%T"]).stdout.strip() == "RUNNING",
             timeout=30, what=f"job {job} to run")


def test_usage_grows_while_running_and_survives_restart(fresh_cluster):
    c = start(fresh_cluster(nodes=1), "PriorityDecayHalfLife=0\nPriorityWeightFairshare=1000\n"
                                      "AccountName=physics\nAccountName=chem")
    job = c.submit(["-A", "physics", "-n", "1", "--wrap", "sleep 60"], user=ALICE,
                   cwd=c.user_dir(ALICE))
    wait_running(c, job)
    wait_for(lambda: usage(c, "physics", ALICE) > 0, timeout=20, what="usage to be charged")
    first = usage(c, "physics", ALICE)
    # 1 CPU x weight 2.0 per second: grows by about 2 a second while the job runs.
    wait_for(lambda: usage(c, "physics", ALICE) >= first + 10, timeout=20, what="usage to grow")
    c.run(["tcancel", str(job)])
    c.wait_state(job, ("CANCELLED",))
    time.sleep(6)  # the last charge (up to the job's end) is written within 5 s
    before = shares(c)
    assert before[("physics", ALICE)][0] > 0
    assert before[("physics", ALICE)] == shares(c)[("physics", ALICE)]  # no longer growing
    c.kill("ctld", signal.SIGKILL)  # no goodbye: what is on disk is all there is
    c.start_ctld()
    after = shares(c)
    assert after[("physics", ALICE)] == before[("physics", ALICE)]
    assert after[("physics", "")][0] == before[("physics", "")][0]


def test_tshare_and_tprio_output_and_heavy_user_after_light(fresh_cluster):
    c = start(fresh_cluster(nodes=1), "PriorityDecayHalfLife=0\nPriorityWeightFairshare=10000\n"
                                      "PriorityWeightAge=100\nAccountName=A\nAccountName=B")
    # alice (account A) builds usage: both CPUs for a few seconds.
    heavy = c.submit(["-A", "A", "-n", "2", "--wrap", "sleep 4"], user=ALICE, cwd=c.user_dir(ALICE))
    c.wait_state(heavy, ("COMPLETED",), timeout=40)
    wait_for(lambda: usage(c, "A", ALICE) >= 8, timeout=20, what="alice's usage")
    # A root job holds both CPUs while alice (first) and bob (second) queue for them.
    block = c.submit(["-n", "2", "--wrap", "sleep 6"])
    wait_running(c, block)
    a = c.submit(["-A", "A", "-n", "2", "--wrap", "sleep 1"], user=ALICE, cwd=c.user_dir(ALICE))
    b = c.submit(["-A", "B", "-n", "2", "--wrap", "sleep 1"], user=BOB, cwd=c.user_dir(BOB))

    out = c.run(["tshare", "-a"]).stdout.splitlines()
    assert out[0].split() == ["Account", "User", "RawShares", "NormShares", "RawUsage",
                              "EffectvUsage", "FairShare"]
    assert set(out[1]) == {"-", " "}
    assert out[2].startswith("root ")
    assert any(line.startswith(" A ") for line in out)
    assert any(line.startswith("  A ") and ALICE[:9] + "+" in line for line in out)  # cut at 10
    long_header = c.run(["tshare", "-a", "-l"]).stdout.splitlines()[0].split()
    assert long_header[-2:] == ["FairShare", "LevelFS"]
    rows = shares(c)
    assert rows[("B", BOB)][1] > rows[("A", ALICE)][1]  # bob: no usage, ranks first

    prio = c.run(["tprio", "-l"]).stdout.splitlines()
    assert prio[0].split() == ["JOBID", "PARTITION", "USER", "ACCOUNT", "PRIORITY", "SITE", "AGE",
                               "ASSOC", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOSNAME", "QOS",
                               "NICE", "TRES"]
    by_id = {int(line.split()[0]): line.split() for line in prio[1:]}
    assert int(by_id[b][8]) > int(by_id[a][8])            # FAIRSHARE column
    assert int(by_id[b][4]) > int(by_id[a][4])            # PRIORITY
    w = c.run(["tprio", "-w"]).stdout.splitlines()
    assert w[0].split() == ["JOBID", "PARTITION", "PRIORITY", "SITE", "AGE", "FAIRSHARE"]
    assert w[1].split() == ["Weights", "100", "10000"]
    one = c.run(["tprio", "-h", "-j", str(a)]).stdout.split()
    assert one[0] == str(a) and len(one) == 6

    # When the blocker ends, bob's job (light) starts before alice's (heavy, submitted first).
    wait_running(c, b)
    assert c.run(["tqueue", "-h", "-j", str(a), "-o", "%T"]).stdout.strip() == "PENDING"

"""The default scheduling policy with real daemons (issue 17 §2): with no PriorityWeight* lines,
ctld orders pending jobs by age + time limit (ctld/sched/sched_config.h "Default policy"), in
the same order tessera-sim gives the same jobs on the same tessera.conf, and tprio explains it
with a TIMELIMIT column."""
import json
import math
import re
import os
import subprocess

from harness import BIN, wait_for


def state(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%T"]).stdout.strip()


def tprio_rows(c, args):
    """sprio's columns are right-aligned and may be empty (ACCOUNT, QOSNAME without
    associations): cut each row at the header's column ends instead of splitting on blanks."""
    lines = c.run(["tprio"] + args).stdout.splitlines()
    head = lines[0].split()
    ends = [m.end() for m in re.finditer(r"\S+", lines[0])]
    rows = {}
    for line in lines[1:]:
        cells = [line[a:b].strip() for a, b in zip([0] + ends[:-1], ends)]
        if cells[0].isdigit():
            rows[int(cells[0])] = cells
    return head, rows


def test_default_orders_short_first_like_the_sim_and_tprio_explains(fresh_cluster):
    c = fresh_cluster(nodes=1).start()  # default_config(): no PriorityWeight* lines
    # A blocker holds both CPUs; then a 30-minute job, then (later) a 2-minute one.
    block = c.submit(["-n", "2", "-t", "5", "--wrap", "sleep 8"])
    wait_for(lambda: state(c, block) == "RUNNING", timeout=30, what="the blocker to run")
    long_job = c.submit(["-n", "2", "-t", "30", "--wrap", "sleep 20"])
    short_job = c.submit(["-n", "2", "-t", "2", "--wrap", "sleep 2"])

    head, rows = tprio_rows(c, ["-l"])
    assert head == ["JOBID", "PARTITION", "USER", "ACCOUNT", "PRIORITY", "SITE", "AGE", "ASSOC",
                    "FAIRSHARE", "JOBSIZE", "PARTITION", "QOSNAME", "QOS", "TIMELIMIT", "NICE",
                    "TRES"]
    limit = head.index("TIMELIMIT")
    # 4000 x (1 - ln(minutes) / ln(7 days in minutes)), rounded
    assert int(rows[short_job][limit]) == round(4000 * (1 - math.log(2) / math.log(10080)))
    assert int(rows[long_job][limit]) == round(4000 * (1 - math.log(30) / math.log(10080)))
    assert int(rows[short_job][4]) > int(rows[long_job][4])  # PRIORITY: the short one first
    whead, w = tprio_rows(c, ["-w"])
    assert whead == ["JOBID", "PARTITION", "PRIORITY", "SITE", "AGE", "TIMELIMIT"]
    assert c.run(["tprio", "-w"]).stdout.splitlines()[1].split() == ["Weights", "7000", "4000"]
    lines = c.run(["tprio", "-n"]).stdout.splitlines()  # no empty columns here
    norm_head = lines[0].split()
    norm = {int(l.split()[0]): l.split() for l in lines[1:] if l.split()}
    assert abs(float(norm[short_job][norm_head.index("TIMELIMIT")]) -
               (1 - math.log(2) / math.log(10080))) < 1e-6

    # ctld: when the blocker ends, the short job (submitted last) starts first.
    c.wait_state(long_job, ("COMPLETED",), timeout=90)
    c.wait_state(short_job, ("COMPLETED",), timeout=30)
    starts = {}
    out = c.run(["tacct", "-n", "-X", "-P", "-o", "JobID,Start", "-j",
                 f"{long_job},{short_job}"]).stdout
    for line in out.splitlines():
        job, start = line.split("|")
        starts[int(job)] = start
    assert starts[short_job] <= starts[long_job]  # ISO times; the short one ran first

    # tessera-sim on the same tessera.conf and the same jobs: the same order under `default`,
    # submit order under `easy` (FCFS EASY). Runtimes as above: default waits are 6 s (short)
    # and 9 s (long): max 9; easy: long at 8 (7 s), short at 28 (26 s): max 26.
    trace = os.path.join(c.dir, "policy.csv")
    with open(trace, "w") as f:
        f.write("submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos\n"
                "0,8,300,0,2,0,1,u,a,,\n"
                "1,20,1800,0,2,0,1,u,a,,\n"
                "2,2,120,0,2,0,1,u,a,,\n")
    out = os.path.join(c.dir, "policy.json")
    p = subprocess.run([f"{BIN}/tessera-sim", "--trace", trace, "--conf", c.conf,
                        "--compare", "default,easy", "--json", out],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    runs = {m["label"]: m for m in json.load(open(out))["runs"]}
    assert runs["default"]["wait_s"]["max"] == 9
    assert runs["easy"]["wait_s"]["max"] == 26


def test_sim_refuses_unknown_flags_and_warns_like_ctld(fresh_cluster, tmp_path):
    c = fresh_cluster(nodes=1)
    c.extra_conf = "SchedulerParameters=bf_reservation_depth=1,bf_typo=3"
    c.start()
    conf = c.conf
    trace = tmp_path / "t.csv"
    trace.write_text("submit,runtime,req_time,gpus,cpus,mem_mib,nodes,user,account,partition,qos\n"
                     "0,8,300,0,1,0,1,u,a,,\n")
    typo = subprocess.run([f"{BIN}/tessera-sim", "--trace", str(trace), "--conf", conf,
                           "--arival-scale", "0.5"], capture_output=True, text=True, timeout=60)
    assert typo.returncode == 2
    assert "unknown option --arival-scale" in typo.stderr
    ok = subprocess.run([f"{BIN}/tessera-sim", "--trace", str(trace), "--conf", conf],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    sim_warn = [l for l in ok.stderr.splitlines() if "bf_typo" in l]
    assert sim_warn and sim_warn[0].startswith("tessera-sim: warning: ")
    ctld_log = open(os.path.join(c.dir, "ctld.log")).read()
    ctld_warn = [l for l in ctld_log.splitlines() if "bf_typo" in l]
    assert ctld_warn
    assert ctld_warn[0].split("warning: ", 1)[1] == sim_warn[0].split("warning: ", 1)[1]

"""GPU operations (issue 14): per-GPU drain and resume (durable over ctld restarts, known to
noded, listed by tinfo -R), XID drains that survive restarts, a node reporting fewer GPUs than
gres.conf drained with Slurm's reason, and GpuFailurePolicy: an XID under a running 2-node gang
stops both nodes' tasks and requeues the job, which does not start again on the drained GPU.
Simulated GPUs (gres.conf Simulated=yes), 2 per node; XIDs are injected through the node's
spool (<spool>/inject-xid.<index>)."""
import os
import re
import signal
import time

import pytest

from harness import Cluster, wait_for

GRES = "NodeName=it[1-2] Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n"


@pytest.fixture(scope="module")
def gpus():
    c = Cluster(nodes=2, node_extra="Gres=gpu:a100:2", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def inject_xid(c, node, gpu, what="79"):
    with open(os.path.join(c.dir, "spool", node, f"inject-xid.{gpu}"), "w") as f:
        f.write(what + "\n")


def drained_gpus(c, who=False):
    """{(node, gpu index): reason} from `tinfo -R` (lines "gpuN: reason USER TIMESTAMP NODE");
    with `who`, the values are (reason, user, timestamp)."""
    out = c.run(["tinfo", "-R", "-h"]).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"gpu(\d+): (.*?)\s+(\S+)\s+(\S+)\s+(\S+)$", line)
        if m:
            found[(m.group(5), int(m.group(1)))] = m.groups()[1:4] if who else m.group(2)
    return found


def show_node(c, node):
    return c.run(["tcontrol", "show", "node", node]).stdout


def job_field(c, job, field):
    out = c.run(["tcontrol", "show", "job", str(job)]).stdout
    m = re.search(r"\b" + field + r"=(\S+)", out)
    return m.group(1) if m else None


def restart_ctld(c):
    c.kill("ctld")
    c.start_ctld()
    c.wait_nodes_up()


def gpu_update(c, node, gpu, state, reason=None, user=None, check=True):
    argv = ["tcontrol", "update", "node", node, f"Gpu={gpu}", f"State={state}"]
    if reason:
        argv.append(f"Reason={reason}")
    return c.run(argv, user=user, check=check)


def test_gpu_drain_and_resume_are_durable_and_listed(gpus):
    c = gpus
    p = gpu_update(c, "it1", 1, "DRAIN", "bad fan", user="tessera-alice", check=False)
    assert p.returncode != 0 and "requires an administrator" in p.stderr
    p = gpu_update(c, "it1", 1, "DRAIN", check=False)
    assert p.returncode != 0 and "reason" in p.stderr
    gpu_update(c, "it1", 1, "DRAIN", "bad_fan")
    assert drained_gpus(c) == {("it1", 1): "bad_fan"}
    # Issue 21: who drained it and when (sinfo -R's USER and TIMESTAMP), kept over restarts below.
    _, user, when = drained_gpus(c, who=True)[("it1", 1)]
    assert user == "root" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", when)
    assert "1:a100(DRAIN:bad_fan)" in show_node(c, "it1")
    # A job needing both GPUs of it1 cannot start while one is drained.
    work = c.user_dir("tessera-bob")
    job = c.submit(["-w", "it1", "--gpus-per-node=2", "--wrap", "true"], user="tessera-bob",
                   cwd=work)
    time.sleep(2)
    assert job_field(c, job, "JobState") == "PENDING"

    # An XID drains GPU 0 of it2; resumed, a repeated XID is reported (and drains) again.
    inject_xid(c, "it2", 0)
    wait_for(lambda: ("it2", 0) in drained_gpus(c), what="the XID drain")
    assert drained_gpus(c)[("it2", 0)].startswith("XID 79")
    gpu_update(c, "it2", 0, "RESUME")
    assert ("it2", 0) not in drained_gpus(c)
    inject_xid(c, "it2", 0)
    wait_for(lambda: ("it2", 0) in drained_gpus(c), what="the repeated XID after the resume")
    gpu_update(c, "it2", 0, "RESUME")
    # An XID drain of it2 GPU 1, left drained.
    inject_xid(c, "it2", 1, "48")
    wait_for(lambda: ("it2", 1) in drained_gpus(c), what="the XID 48 drain")

    # ctld restarts: the resumed GPU stays resumed, the drained ones stay drained.
    restart_ctld(c)
    assert drained_gpus(c) == {("it1", 1): "bad_fan", ("it2", 1): drained_gpus(c)[("it2", 1)]}
    assert drained_gpus(c)[("it2", 1)].startswith("XID 48")
    assert drained_gpus(c, who=True)[("it1", 1)] == ("bad_fan", user, when)
    assert drained_gpus(c, who=True)[("it2", 1)][1] != "Unknown"  # the controller's own user
    # noded restarts (rediscovers its GPUs healthy): ctld's drains still hold.
    c.kill("noded-it2", signal.SIGKILL)
    c.start_noded("it2")
    time.sleep(3)
    c.wait_nodes_up()
    assert set(drained_gpus(c)) == {("it1", 1), ("it2", 1)}
    assert job_field(c, job, "JobState") == "PENDING"

    gpu_update(c, "it1", 1, "RESUME")
    gpu_update(c, "it2", 1, "RESUME")
    assert drained_gpus(c) == {}
    assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
    restart_ctld(c)
    assert drained_gpus(c) == {}


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_xid_under_a_gang_requeues_the_whole_gang(gpus):
    c = gpus
    work = c.user_dir("tessera-alice")
    task = "echo $$ >> pids.$SLURMD_NODENAME; exec sleep 300"
    job = c.submit(["-N2", "--ntasks-per-node=1", "--gpus-per-node=2", "-o", "gang.out",
                    "--wrap", f"trun bash -c '{task}'"], user="tessera-alice", cwd=work)
    pidfiles = [os.path.join(work, f"pids.{n}") for n in ("it1", "it2")]
    wait_for(lambda: all(os.path.exists(f) and open(f).read().strip() for f in pidfiles),
             timeout=30, what="the gang's tasks on both nodes")
    pids = [int(open(f).read()) for f in pidfiles]
    assert all(pid_alive(p) for p in pids)

    inject_xid(c, "it2", 1)
    wait_for(lambda: job_field(c, job, "JobState") == "PENDING", timeout=30,
             what="the gang to be requeued")
    wait_for(lambda: not any(pid_alive(p) for p in pids), timeout=15,
             what="both nodes' tasks to stop")
    assert ("it2", 1) in drained_gpus(c)
    events = c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout
    failure = [l for l in events.splitlines() if "gpu_failure" in l]
    assert failure, events
    assert '"node":"it2"' in failure[0] and '"gpu":1' in failure[0] and '"xid":79' in failure[0]
    assert '"policy":"requeue"' in failure[0]
    assert "requeued" in events
    log = open(os.path.join(c.dir, "ctld.log")).read()
    assert re.search(rf"job {job}: GPU 1 of node it2 failed: XID 79.*GpuFailurePolicy=requeue",
                     log)
    # It needs 2 GPUs on each node and it2 has one healthy: it pends, not on the drained GPU.
    time.sleep(3)
    assert job_field(c, job, "JobState") == "PENDING"
    assert [len(open(f).read().split()) for f in pidfiles] == [1, 1]  # no second run
    # Resumed, the GPU serves it again (its second run).
    gpu_update(c, "it2", 1, "RESUME")
    wait_for(lambda: job_field(c, job, "JobState") == "RUNNING", timeout=30, what="the rerun")
    wait_for(lambda: all(len(open(f).read().split()) == 2 for f in pidfiles), timeout=30,
             what="the second run's tasks on both nodes")
    c.run(["tcancel", str(job)])
    c.wait_state(job, ["CANCELLED"], timeout=30)


def set_policy(c, policy):
    text = c.default_config().replace("State=UP\n", f"State=UP GpuFailurePolicy={policy}\n")
    c.write_config(text)
    c.run(["tcontrol", "reconfigure"])


def test_fail_and_ignore_policies(gpus):
    c = gpus
    work = c.user_dir("tessera-bob")
    set_policy(c, "fail")
    job = c.submit(["-w", "it1", "--gpus-per-node=1", "--wrap", "sleep 300"], user="tessera-bob",
                   cwd=work)
    wait_for(lambda: job_field(c, job, "JobState") == "RUNNING", what="the job to run")
    gres = c.run(["tqueue", "-h", "-j", str(job), "-O", "GresAlloc:80"]).stdout
    gpu = int(re.search(r"IDX:(\d+)", gres).group(1))
    inject_xid(c, "it1", gpu)
    assert c.wait_state(job, ["FAILED", "CANCELLED", "COMPLETED"], timeout=30)[0] == "FAILED"
    reason = c.run(["tcontrol", "show", "job", str(job)]).stdout
    assert f"GPU_{gpu}_of_node_it1_failed:_XID_79" in reason, reason
    gpu_update(c, "it1", gpu, "RESUME")

    set_policy(c, "ignore")
    job = c.submit(["-w", "it1", "--gpus-per-node=1", "--wrap", "sleep 300"], user="tessera-bob",
                   cwd=work)
    wait_for(lambda: job_field(c, job, "JobState") == "RUNNING", what="the job to run")
    gres = c.run(["tqueue", "-h", "-j", str(job), "-O", "GresAlloc:80"]).stdout
    gpu = int(re.search(r"IDX:(\d+)", gres).group(1))
    inject_xid(c, "it1", gpu)
    wait_for(lambda: ("it1", gpu) in drained_gpus(c), what="the GPU drain")
    wait_for(lambda: "gpu_failure" in c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout,
             what="the gpu_failure event")
    time.sleep(2)
    assert job_field(c, job, "JobState") == "RUNNING"
    c.run(["tcancel", str(job)])
    gpu_update(c, "it1", gpu, "RESUME")
    set_policy(c, "requeue")


def test_node_reporting_fewer_gpus_is_drained():
    # it2's GPUs are not simulated and there is no NVML here: it reports none of its 2.
    gres = ("NodeName=it1 Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n"
            "NodeName=it2 Name=gpu Type=a100 Count=2 MemoryMiB=40960\n")
    c = Cluster(nodes=2, node_extra="Gres=gpu:a100:2", gres=gres)
    try:
        c._start_munged()
        c.write_config()
        c.start_ctld()
        for n in c.nodes:
            c.start_noded(n)
        reason = "gres/gpu count reported lower than configured (0 < 2)"
        wait_for(lambda: f"Reason={reason}" in show_node(c, "it2"), what="the GPU count drain")
        assert c.node_states()["it2"].startswith("drain")
        assert "gres/gpu count repor" in c.run(["tinfo", "-R"]).stdout  # cut at 20 as sinfo
        work = c.user_dir("tessera-bob")
        job = c.submit(["-w", "it2", "--gpus-per-node=1", "--wrap", "true"], user="tessera-bob",
                       cwd=work)
        time.sleep(2)
        assert job_field(c, job, "JobState") == "PENDING"
        # The node comes back with its GPUs: ctld lifts its own drain and the job runs.
        c.gres = GRES
        c.write_config()
        c.kill("noded-it2", signal.SIGKILL)
        c.start_noded("it2")
        wait_for(lambda: c.node_states().get("it2", "").rstrip("*") in ("idle", "mix", "alloc"),
                 timeout=30, what="it2 to be schedulable again")
        assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
    finally:
        c.stop()


def test_simulated_gpu_lines_memory_bad_line_and_saved_layout():
    # Line 2's layout is not valid (4g.40gb and 7g.80gb overlap); line 3 is an A100 80GB by its
    # memory, so the 80 GB profiles are valid there.
    gres = ("NodeName=it1 Name=gpu Type=a100 Count=1 MemoryMiB=40960 Simulated=yes\n"
            "NodeName=it1 Name=gpu Type=a100 Count=1 MemoryMiB=81920 Simulated=yes "
            "MigEnabled=yes MigLayout=4g.40gb@0,7g.80gb\n"
            "NodeName=it1 Name=gpu Type=a100 Count=1 MemoryMiB=81920 Simulated=yes "
            "MigEnabled=yes MigLayout=3g.40gb,4g.40gb\n")
    c = Cluster(nodes=1, node_extra="Gres=gpu:a100:3", gres=gres)
    try:
        c.start()  # the bad line does not keep noded from registering
        gres_conf = os.path.join(c.dir, "etc", "gres.conf")
        wait_for(lambda: ("it1", 1) in drained_gpus(c), what="the bad line's GPU drain")
        assert set(drained_gpus(c)) == {("it1", 1)}  # tinfo -R: the reason cut at 20, as sinfo
        assert f"1:a100(DRAIN:{gres_conf}:2: MigLayout for GPU 1:" in show_node(c, "it1")
        log = open(os.path.join(c.dir, "noded-it1.log")).read()
        assert "GPU 1 reported unhealthy: " in log and "gres.conf:2" in log
        # GPU 0 (whole) and GPU 2 (80 GB MIG profiles) work.
        work = c.user_dir("tessera-bob")
        job = c.submit(["--gpus-per-node=1", "--wrap", "true"], user="tessera-bob", cwd=work)
        assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
        out = c.run(["tcontrol", "update", "node", "it1", "Gpu=2",
                     "MigLayout=3g.40gb@0,3g.40gb@4"]).stdout
        assert "3g.40gb@0,3g.40gb@4" in out
        # Restarted, noded keeps the saved layout and says that it won over gres.conf's.
        c.kill("noded-it1", signal.SIGKILL)
        c.start_noded("it1")
        wait_for(lambda: "wins over gres.conf's MigLayout" in
                 open(os.path.join(c.dir, "noded-it1.log")).read(), what="the saved-layout note")
        log = open(os.path.join(c.dir, "noded-it1.log")).read()
        assert re.search(r"GPU 2: MIG layout 3g\.40gb@0,3g\.40gb@4 saved in \S+/gpu\.2\.mig \(the "
                         r"last reconfiguration\) wins over gres\.conf's MigLayout "
                         r"3g\.40gb@\d,4g\.40gb@\d \(\S*gres\.conf:3\)", log), log
    finally:
        c.stop()

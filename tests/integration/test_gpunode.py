"""Issue 14's node/controller-side gaps (gpunode), with real daemons and simulated GPUs:

- MPS on every node of a multi-node job: the second node's trun task runs under that node's MPS
  control daemon (started there on first use, recorded by the simulated backend in
  <spool>/<node>/mps-control.log, stopped when the job left), with the job's limits and that
  node's MPS directories. The GPUs' MPS counts come from Slurm's separate gres.conf line
  `Name=mps Count=400` (200 per GPU), so `--gres=mps:50` runs at 25 percent.
- A GPU failure a node reports in its registration (noded restarted after an XID) applies the
  partition's GpuFailurePolicy to the whole gang, as an XID under a running job does.
- trun --gres=gpu:N / --gpus-per-node / --gpus inside an allocation: a step gets its own part
  of the job's GPUs on each node, concurrent steps get disjoint ones, a step asking GPUs that
  other steps hold waits (srun's "step creation temporarily disabled, retrying"), a request
  larger than the job's GPUs is refused with a clear message.
"""
import os
import re
import signal

import pytest

from harness import Cluster, wait_for

GRES = "NodeName=it[1-2] Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes\n"


@pytest.fixture(scope="module")
def gpus():
    c = Cluster(nodes=2, node_extra="CPUs=4 Gres=gpu:a100:2", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def job_field(c, job, field):
    out = c.run(["tcontrol", "show", "job", str(job)]).stdout
    m = re.search(r"\b" + field + r"=(\S+)", out)
    return m.group(1) if m else None


def read_env(path):
    def read():
        if not os.path.exists(path):
            return None
        text = open(path).read()
        return dict(l.split("=", 1) for l in text.splitlines() if "=" in l) if text else None
    return wait_for(read, timeout=30, what=f"{path} to be written")


def mps_log(c, node):
    path = os.path.join(c.dir, "spool", node, "mps-control.log")
    return open(path).read().splitlines() if os.path.exists(path) else []


def test_mps_runs_on_every_node_of_a_multi_node_job():
    gres = GRES + "NodeName=it[1-2] Name=mps Count=400\n"  # Slurm's form: 200 per GPU
    c = Cluster(nodes=2, node_extra="CPUs=4 Gres=gpu:a100:2", gres=gres)
    try:
        c.start()
        work = c.user_dir("tessera-alice")
        task = "env | grep -E ^CUDA_ | sort > env.$SLURMD_NODENAME; sleep 1"
        job = c.submit(["-N2", "--ntasks-per-node=1", "--gres=mps:50", "-o", "mps.out",
                        "--wrap", f"trun bash -c '{task}'"], user="tessera-alice", cwd=work)
        assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)[0] == "COMPLETED", \
            open(os.path.join(work, "mps.out")).read()
        for node in ("it1", "it2"):
            e = read_env(os.path.join(work, f"env.{node}"))
            assert e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "25", (node, e)  # 50 x 100 / 200
            gpu = re.search(r"/mps/gpu(\d+)/pipe$", e["CUDA_MPS_PIPE_DIRECTORY"])
            assert gpu and f"/spool/{node}/mps/" in e["CUDA_MPS_PIPE_DIRECTORY"], (node, e)
            assert e["CUDA_MPS_LOG_DIRECTORY"].endswith(f"/spool/{node}/mps/gpu{gpu.group(1)}/log")
            assert e["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=10240M", (node, e)
            # The node's own daemon was started for the job and stopped once it left.
            wait_for(lambda: mps_log(c, node)[-1:] == [f"stop gpu={gpu.group(1)}"], timeout=15,
                     what=f"the MPS daemon's stop on {node}")
            log = mps_log(c, node)
            assert log[0].startswith(f"start gpu={gpu.group(1)} "), (node, log)
            assert f"pipe={e['CUDA_MPS_PIPE_DIRECTORY']}" in log[0], (node, log)
        show = c.run(["tcontrol", "show", "node", "it2"]).stdout
        assert "mps:400" in show, show
    finally:
        c.stop()


def test_gpu_failure_reported_at_registration_requeues_the_gang(gpus):
    c = gpus
    work = c.user_dir("tessera-bob")
    job = c.submit(["-N2", "--ntasks-per-node=1", "--gpus-per-node=2", "-o", "/dev/null",
                    "--wrap", "sleep 300"], user="tessera-bob", cwd=work)
    wait_for(lambda: job_field(c, job, "JobState") == "RUNNING", timeout=30, what="the gang")
    # noded on it2 goes away; GPU 1 there fails meanwhile; noded comes back and registers.
    c.kill("noded-it2", signal.SIGKILL)
    with open(os.path.join(c.dir, "spool", "it2", "inject-xid.1"), "w") as f:
        f.write("79\n")
    c.start_noded("it2")
    wait_for(lambda: job_field(c, job, "JobState") == "PENDING", timeout=30,
             what="the gang to be requeued (GpuFailurePolicy=requeue)")
    events = c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout
    failure = [l for l in events.splitlines() if "gpu_failure" in l]
    assert failure, events
    assert '"node":"it2"' in failure[0] and '"gpu":1' in failure[0], failure
    assert '"xid":79' in failure[0] and '"policy":"requeue"' in failure[0], failure
    assert "requeued" in events, events
    log = open(os.path.join(c.dir, "ctld.log")).read()
    assert re.search(rf"job {job}: GPU 1 of node it2 failed: XID 79.*GpuFailurePolicy=requeue",
                     log), log[-3000:]
    c.run(["tcancel", str(job)])
    c.wait_state(job, ["CANCELLED"], timeout=30)
    c.run(["tcontrol", "update", "node", "it2", "Gpu=1", "State=RESUME"])


STEPS = """#!/bin/bash
trun --gpus-per-node=1 bash -c 'echo $CUDA_VISIBLE_DEVICES > a.$SLURMD_NODENAME; \
while [ ! -e release ]; do sleep 0.1; done' &
while [ ! -s a.it1 ] || [ ! -s a.it2 ]; do sleep 0.1; done
trun --gres=gpu:1 bash -c 'echo $CUDA_VISIBLE_DEVICES > b.$SLURMD_NODENAME; \
echo $SLURM_STEP_GPUS/$SLURM_JOB_GPUS > bi.$SLURMD_NODENAME'
trun --gpus-per-node=2 bash -c 'echo $CUDA_VISIBLE_DEVICES > c.$SLURMD_NODENAME' 2> c.err &
trun --gres=gpu:3 true 2> big.err; echo $? > big.rc
wait
"""


def test_trun_steps_get_disjoint_parts_of_the_jobs_gpus(gpus):
    c = gpus
    work = c.user_dir("tessera-alice")
    job = c.submit(["-N2", "--ntasks-per-node=1", "--gpus-per-node=2", "-o", "steps.out"],
                   user="tessera-alice", cwd=work, input=STEPS)
    path = lambda name: os.path.join(work, name)
    # Step c wants both GPUs of each node while step a holds one: it waits (srun's words).
    wait_for(lambda: os.path.exists(path("c.err")) and
             "step creation temporarily disabled, retrying" in open(path("c.err")).read(),
             timeout=60, what="the third step to wait for the GPUs")
    assert "Requested nodes are busy" in open(path("c.err")).read()
    assert not os.path.exists(path("c.it1"))
    for node in ("it1", "it2"):
        a, b = open(path(f"a.{node}")).read().strip(), open(path(f"b.{node}")).read().strip()
        assert a.startswith("GPU-") and b.startswith("GPU-") and "," not in a + b, (a, b)
        assert a != b, (node, a, b)  # two steps at once: disjoint GPUs
        step_gpus, job_gpus = open(path(f"bi.{node}")).read().strip().split("/")
        assert job_gpus == "0,1" and step_gpus in ("0", "1"), (step_gpus, job_gpus)
    wait_for(lambda: os.path.exists(path("big.rc")), timeout=30, what="the too-large step")
    assert open(path("big.rc")).read().strip() != "0"
    assert re.search(rf"step asks 3 GPUs on node it1 but job {job} has 2 there",
                     open(path("big.err")).read()), open(path("big.err")).read()
    # Step a ends: step c gets both GPUs of each node.
    open(path("release"), "w").close()
    assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)[0] == "COMPLETED", \
        open(path("steps.out")).read()
    for node in ("it1", "it2"):
        both = open(path(f"c.{node}")).read().strip().split(",")
        assert len(both) == 2 and len(set(both)) == 2, both
    assert "Step created for StepId=" in open(path("c.err")).read()


# Issue 19 (h19 s7): srun --gpus-per-task binds each task to its own GPUs (Slurm's implied
# --gpu-bind=per_task:N), inherited from sbatch --gpus-per-task; --gpu-bind chooses otherwise.
BIND = r"""#!/bin/bash
SHOW='echo "$SLURM_PROCID $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $SLURM_STEP_GPUS $SLURM_JOB_GPUS"'
trun bash -c "$SHOW" > inherited.out
trun --gpu-bind=none bash -c "$SHOW" > none.out
trun --gpus-per-node=2 --gpu-bind=map_gpu:1,0 bash -c "$SHOW" > map.out
trun --gpus-per-node=2 --gpu-bind=mask_gpu:0x3 bash -c "$SHOW" > mask.out
trun -n2 --ntasks-per-node=1 bash -c "$SHOW" > one.out
trun --gpu-bind=sometimes true 2> bad.err; echo $? > bad.rc
"""


def test_trun_gpus_per_task_binds_each_task_to_its_own_gpus(gpus):
    c = gpus
    work = c.user_dir("tessera-alice")
    job = c.submit(["-N2", "--ntasks-per-node=2", "--gpus-per-task=1", "-o", "bind.out"],
                   user="tessera-alice", cwd=work, input=BIND)
    state = c.wait_state(job, ["COMPLETED", "FAILED"], timeout=90)[0]
    out = lambda name: open(os.path.join(work, name)).read()
    assert state == "COMPLETED", out("bind.out")

    def rows(name):  # rank -> (node, CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS, SLURM_JOB_GPUS)
        r = {}
        for line in out(name).splitlines():
            f = line.split(" ")
            r[int(f[0])] = tuple(f[1:])
        return r
    none = rows("none.out")
    assert sorted(none) == [0, 1, 2, 3], out("none.out")
    uuid = {}  # (node, index) -> UUID, from the unbound step that sees both GPUs of a node
    for rank, (node, cvd, step, job_gpus) in none.items():
        assert step == "0,1" and job_gpus == "0,1", none
        assert len(cvd.split(",")) == 2, none
        for i, u in zip(step.split(","), cvd.split(",")):
            uuid[(node, i)] = u
    # Ranks 0,1 on it1 and 2,3 on it2 (block); local task 0 gets GPU 0, local task 1 GPU 1.
    want = {0: ("it1", "0"), 1: ("it1", "1"), 2: ("it2", "0"), 3: ("it2", "1")}
    inherited = rows("inherited.out")
    for rank, (node, gpu) in want.items():
        assert inherited[rank] == (node, uuid[(node, gpu)], gpu, "0,1"), inherited
    mapped = rows("map.out")  # map_gpu:1,0 by local id
    for rank, (node, gpu) in want.items():
        other = "1" if gpu == "0" else "0"
        assert mapped[rank][:3] == (node, uuid[(node, other)], other), mapped
    for rank, row in rows("mask.out").items():  # mask 0x3: both
        assert row[1:3] == (uuid[(row[0], "0")] + "," + uuid[(row[0], "1")], "0,1"), row
    one = rows("one.out")  # one task per node: no binding there (slurmstepd's rule)
    assert sorted(one) == [0, 1] and {r[0] for r in one.values()} == {"it1", "it2"}, one
    assert all(r[2] in ("0", "1") for r in one.values()), one  # gpus-per-task=1 x 1 task here
    assert out("bad.rc").strip() == "1"
    assert 'invalid --gpu-bind value "sometimes"' in out("bad.err"), out("bad.err")
    # sbatch --gpu-bind reaches the steps (SLURM_GPU_BIND), as Slurm: none = no binding.
    job = c.submit(["-N1", "--ntasks-per-node=2", "--gpus-per-task=1", "--gpu-bind=none",
                    "-o", "sbatch-bind.out", "--wrap", "trun bash -c 'echo $SLURM_STEP_GPUS'"],
                   user="tessera-alice", cwd=work)
    state = c.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)[0]
    assert (state, out("sbatch-bind.out")) == ("COMPLETED", "0,1\n0,1\n")

"""GPU sharing (issue 14 §3) with real daemons and simulated GPUs: gres/mps and gres/shard.
One node with two simulated a100 GPUs, each offering MPS (100 percent) and 4 shards
(gres.conf Mps=yes Replicas=4). Two `--gres=mps:50` jobs share one GPU at once and a third
waits; their environment carries the MPS limits and that GPU's MPS pipe directory; the MPS
control daemon's start (first mps job) and stop (last mps job ended) are recorded by the
simulated backend in <spool>/mps-control.log; a whole-GPU job never gets a GPU whose shares
are in use; `--gres=shard:N` takes at most Replicas per GPU; requests no GPU could ever hold are
refused at submit."""
import os
import time

import pytest

from harness import Cluster, wait_for

GRES = ("NodeName=it1 Name=gpu Type=a100 Count=2 MemoryMiB=40960 Simulated=yes Mps=yes "
        "Replicas=4\n")
ENV = "env | grep -E '^(CUDA_|SLURM_JOB_GPUS|GPU_DEVICE)' | sort > {out}; sleep 300"


@pytest.fixture(scope="module")
def share():
    c = Cluster(nodes=1, node_extra="CPUs=8 Gres=gpu:a100:2", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def job_env(path):
    """The job's variables once it has written them."""
    def read():
        if not os.path.exists(path):
            return None
        text = open(path).read()
        return dict(l.split("=", 1) for l in text.splitlines() if "=" in l) if text else None
    return wait_for(read, timeout=20, what=f"{path} to be written")


def state(c, job):
    return c.acct_state(job)[0]


def mps_log(c):
    path = os.path.join(c.dir, "spool", "it1", "mps-control.log")
    return open(path).read().splitlines() if os.path.exists(path) else []


def cancel_all(c, jobs):
    c.run(["tcancel"] + [str(j) for j in jobs], check=False)
    for j in jobs:
        c.wait_state(j, ["CANCELLED", "COMPLETED", "FAILED"])


def test_mps_jobs_share_one_gpu_and_a_whole_gpu_job_gets_the_other(share):
    c = share
    work = c.user_dir("tessera-alice")
    sub = lambda name, opts: c.submit(opts + ["-o", "/dev/null", "--wrap",
                                              ENV.format(out=os.path.join(work, name))],
                                      user="tessera-alice", cwd=work)
    m1 = sub("m1.env", ["--gres=mps:50"])
    c.wait_state(m1, "RUNNING")
    m2 = sub("m2.env", ["--gres=mps:50"])
    c.wait_state(m2, "RUNNING")
    e1, e2 = job_env(os.path.join(work, "m1.env")), job_env(os.path.join(work, "m2.env"))
    # Both on the same GPU, with their MPS limits: 50 percent, half of its 40960 MiB.
    assert e1["CUDA_VISIBLE_DEVICES"] == e2["CUDA_VISIBLE_DEVICES"], (e1, e2)
    assert e1["CUDA_VISIBLE_DEVICES"].startswith("GPU-")
    assert e1["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "50"
    assert e1["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=20480M"
    gpu = e1["SLURM_JOB_GPUS"]
    assert e1["CUDA_MPS_PIPE_DIRECTORY"].endswith(f"/mps/gpu{gpu}/pipe"), e1
    assert e2["CUDA_MPS_PIPE_DIRECTORY"] == e1["CUDA_MPS_PIPE_DIRECTORY"]
    # One daemon for that GPU, started once.
    assert [l.split(" uuid=")[0] for l in mps_log(c)] == [f"start gpu={gpu}"], mps_log(c)
    # A whole-GPU job gets the other GPU, not the shared one.
    w1 = sub("w1.env", ["--gpus-per-node=1"])
    c.wait_state(w1, "RUNNING")
    ew = job_env(os.path.join(work, "w1.env"))
    assert ew["SLURM_JOB_GPUS"] != gpu and ew["CUDA_VISIBLE_DEVICES"] != e1["CUDA_VISIBLE_DEVICES"]
    # Now: GPU `gpu` has no MPS left, the other is held whole: a third mps job and a second
    # whole-GPU job wait (CPUs are free: 3 of 8 used).
    m3 = sub("m3.env", ["--gres=mps:50"])
    w2 = sub("w2.env", ["--gpus-per-node=1"])
    time.sleep(4)  # several scheduling cycles (SchedulerInterval=1)
    assert state(c, m3) == "PENDING" and state(c, w2) == "PENDING"
    # tcontrol show node and tinfo --gpus show the shares in use.
    show = c.run(["tcontrol", "show", "node", "it1"]).stdout
    assert "Gres=gpu:a100:2,mps:200,shard:8" in show, show
    assert f"GresUsed=gpu:a100:1,mps:100(IDX:{gpu}),shard:0" in show, show
    pool = c.run(["tinfo", "--gpus"]).stdout
    assert f"{gpu}:mps[100/100]" in pool and "1 shared (mps/shard)" in pool, pool
    # The last mps job's end stops the daemon; until then it runs.
    cancel_all(c, [m3, w2, w1, m1])
    assert not any(l.startswith("stop") for l in mps_log(c)), mps_log(c)
    cancel_all(c, [m2])
    wait_for(lambda: mps_log(c)[-1:] == [f"stop gpu={gpu}"], timeout=10,
             what="the MPS daemon's stop to be recorded")


def test_shards_are_counted_per_gpu_and_refusals_at_submit(share):
    c = share
    work = c.user_dir("tessera-bob")
    sub = lambda name, opts: c.submit(opts + ["-o", "/dev/null", "--wrap",
                                              ENV.format(out=os.path.join(work, name))],
                                      user="tessera-bob", cwd=work)
    s1 = sub("s1.env", ["--gres=shard:3"])
    c.wait_state(s1, "RUNNING")
    s2 = sub("s2.env", ["--gres=shard:3"])
    c.wait_state(s2, "RUNNING")
    g1 = job_env(os.path.join(work, "s1.env"))["SLURM_JOB_GPUS"]
    g2 = job_env(os.path.join(work, "s2.env"))["SLURM_JOB_GPUS"]
    assert g1 != g2  # 3 + 3 > 4 replicas: the second takes the other GPU
    s3 = sub("s3.env", ["--gres=shard:2"])  # 1 shard left on each GPU
    w = sub("w.env", ["--gpus-per-node=1"])  # both GPUs shared
    s4 = sub("s4.env", ["--gres=shard:1"])
    c.wait_state(s4, "RUNNING")
    time.sleep(3)
    assert state(c, s3) == "PENDING" and state(c, w) == "PENDING"
    e4 = job_env(os.path.join(work, "s4.env"))
    assert "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" not in e4  # time-slicing, not MPS
    assert e4["CUDA_VISIBLE_DEVICES"].startswith("GPU-")
    cancel_all(c, [s3, w, s1, s2, s4])
    # Requests no GPU could ever hold are refused with the reason.
    for opt, why in (("--gres=shard:5", "one GPU offers at most 4 shards"),
                     ("--gres=mps:150", "one GPU offers at most 100 MPS percent"),
                     ("--gres=gpu:1,mps:50", "cannot be combined with whole GPUs")):
        p = c.run(["tbatch", opt, "--wrap", "true"], user="tessera-bob", cwd=work, check=False)
        assert p.returncode != 0 and why in p.stderr, (opt, p.stderr)


def test_trun_tasks_of_an_mps_job_keep_its_limits(share):
    c = share
    work = c.user_dir("tessera-alice")
    out = os.path.join(work, "t.env")
    job = c.submit(["--gres=mps:25", "-o", "/dev/null", "--wrap",
                    f"trun bash -c \"env | grep -E '^CUDA_' | sort > {out}\""],
                   user="tessera-alice", cwd=work)
    assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
    e = job_env(out)
    assert e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] == "25", e
    assert e["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] == "0=10240M", e
    assert e["CUDA_MPS_PIPE_DIRECTORY"].endswith("/pipe"), e
    # Its daemon was started for it and stopped after it.
    wait_for(lambda: mps_log(c)[-1:] and mps_log(c)[-1].startswith("stop gpu="), timeout=10,
             what="the daemon's stop")
    assert mps_log(c)[-2].startswith("start gpu="), mps_log(c)

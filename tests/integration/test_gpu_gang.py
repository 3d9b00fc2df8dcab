"""Multi-node GPU jobs (issue 14, the gang case): every node of a job gets its own allocation.
`trun` on each node of a `tbatch -N2 --gpus-per-node=K` job sees that node's allocated GPUs
(CUDA_VISIBLE_DEVICES by UUID, SLURM_STEP_GPUS by index) and runs inside a job cgroup of that
node whose device rules allow only those GPUs, also on the node that does not run the batch
step. Simulated GPUs (gres.conf Simulated=yes), 3 per node; GPU 0 of it2 is kept busy by another
job, so the job's GPU indices differ between its two nodes."""
import os
import re

import pytest

from harness import Cluster, wait_for

GRES = "NodeName=it[1-2] Name=gpu Type=a100 Count=3 MemoryMiB=40960 Simulated=yes\n"
CG = "/sys/fs/cgroup"
V1 = os.path.exists(os.path.join(CG, "devices", "devices.list"))  # else v2: no rules to read

# Each task prints its node, its GPU variables, its cgroup (v1: the devices one, v2: the unified
# one), the cpus of its cpuset and (v1) the device rules of its devices cgroup, readable by the
# task itself.
if V1:
    CGROUP = ("d=$(sed -n \"s/^[0-9]*:devices://p\" /proc/self/cgroup); "
              "c=$(sed -n \"s/^[0-9]*:cpuset://p\" /proc/self/cgroup); cpus=" + CG + "/cpuset$c")
else:
    CGROUP = "d=$(sed -n \"s/^0:://p\" /proc/self/cgroup); cpus=" + CG + "$d"
TASK = ("h=host=$SLURMD_NODENAME; echo $h cvd=$CUDA_VISIBLE_DEVICES nvd=$NVIDIA_VISIBLE_DEVICES "
        "jobgpus=$SLURM_JOB_GPUS stepgpus=$SLURM_STEP_GPUS ord=$GPU_DEVICE_ORDINAL; " + CGROUP +
        "; echo $h cg=$d; echo $h cpus=$(cat $cpus/cpuset.cpus.effective $cpus/cpuset.cpus "
        "2>/dev/null | head -1); "
        "sed \"s/^/$h rule=/\" " + CG + "/devices$d/devices.list 2>/dev/null")


@pytest.fixture(scope="module")
def gang():
    c = Cluster(nodes=2, node_extra="Gres=gpu:a100:3", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def node_uuids(c, node):
    """The node's GPU UUIDs by index, from a job holding all of its GPUs."""
    work = c.user_dir("tessera-bob")
    job = c.submit(["-w", node, "--gpus-per-node=3", "-o", f"all-{node}.out", "--wrap",
                    "echo $CUDA_VISIBLE_DEVICES"], user="tessera-bob", cwd=work)
    assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
    uuids = open(os.path.join(work, f"all-{node}.out")).read().strip().split(",")
    assert len(uuids) == 3 and all(u.startswith("GPU-") for u in uuids), uuids
    return uuids


def alloc_indices(c, job):
    """{node: [GPU index]} of a running job, from tqueue's GresAlloc (it1:gpu:1(IDX:0),...)."""
    out = c.run(["tqueue", "-h", "-j", str(job), "-O", "GresAlloc:80"]).stdout
    return {n: [int(i) for i in idx.split(",")]
            for n, idx in re.findall(r"(it\d):gpu:\d+\(IDX:([\d,]+)\)", out)}


def run_gang(c, gpus_per_node):
    uuids = {n: node_uuids(c, n) for n in ("it1", "it2")}
    work = c.user_dir("tessera-alice")
    busy = c.submit(["-w", "it2", "--gpus-per-node=1", "--wrap", "sleep 120"],
                    user="tessera-alice", cwd=work)
    c.wait_state(busy, "RUNNING")
    out_name = f"gang{gpus_per_node}.out"
    wrap = f"trun bash -c '{TASK}'; sleep 2"
    job = c.submit(["-N2", "--ntasks-per-node=1", f"--gpus-per-node={gpus_per_node}", "-o", out_name,
                    "--wrap", wrap], user="tessera-alice", cwd=work)
    c.wait_state(job, ["RUNNING", "COMPLETED", "FAILED"])
    alloc = alloc_indices(c, job)
    state = c.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED"], timeout=60)
    out = open(os.path.join(work, out_name)).read()
    c.run(["tcancel", str(busy)])
    assert state == ("COMPLETED", "0:0"), out
    assert set(alloc) == {"it1", "it2"} and all(len(v) == gpus_per_node for v in alloc.values()), alloc
    assert 0 not in alloc["it2"], alloc  # it2's GPU 0 is the busy job's
    return uuids, alloc, out


def fields(out, host):
    f = {}
    for line in out.splitlines():
        if line.startswith(f"host={host} "):
            for kv in line.split()[1:]:
                k, _, v = kv.partition("=")
                if k == "rule":
                    f.setdefault("rules", []).append(line.split("rule=", 1)[1])
                    break
                f[k] = v
    return f


@pytest.mark.parametrize("gpus_per_node", [1, 2])
def test_every_node_gets_its_own_gpus_and_job_cgroup(gang, gpus_per_node):
    uuids, alloc, out = run_gang(gang, gpus_per_node)
    for node in ("it1", "it2"):
        f = fields(out, node)
        want = ",".join(uuids[node][i] for i in alloc[node])
        idx = ",".join(str(i) for i in alloc[node])
        assert f.get("cvd") == want, (node, out)
        assert f.get("nvd") == want, (node, out)
        assert f.get("jobgpus") == idx and f.get("stepgpus") == idx and f.get("ord") == idx, (node, out)
        # A job cgroup of this node (its name has the node and the job), not the root.
        assert re.search(rf"/tessera/{node}-[0-9a-f]+/job_\d+$", f.get("cg", "")), (node, out)
        assert f.get("cpus"), (node, out)
        if not V1:
            continue  # v2: the device rules are a BPF program, not readable here
        rules = f.get("rules", [])
        assert "a *:* rwm" not in rules, (node, out)
        gpu_rules = sorted(r for r in rules if r.startswith("c 195:") and r != "c 195:255 rwm")
        # Simulated GPU i is /dev/nvidia<i>: only the allocated ones are allowed.
        assert gpu_rules == sorted(f"c 195:{i} rwm" for i in alloc[node]), (node, out)
    # The second node's job cgroup is gone once the job has ended.
    for node in ("it1", "it2"):
        cg = (CG + "/devices" if V1 else CG) + fields(out, node)["cg"]
        wait_for(lambda: not os.path.exists(cg), what=f"{cg} to be removed")

"""Static MIG (issue 14 §1, §2): a GPU in MIG mode is schedulable only as its instances.
One node with two simulated H100s (gres.conf Simulated=yes): GPU 0 whole, GPU 1 in MIG mode
with 3g.40gb@0, 1g.10gb@4 and 1g.10gb@5. Profile requests (--gres=gpu:PROFILE:N, --gpus=PROFILE:N)
run on instances and see CUDA_VISIBLE_DEVICES=MIG-... (batch step and trun step alike), their
isolation opens the parent GPU and the instance's nvidia-caps devices; whole-GPU requests never
land on the MIG GPU; a re-slice of a GPU in use is refused; tinfo --gpus and tcontrol show node
show who holds what."""
import glob
import os
import re

import pytest

from harness import Cluster, wait_for

GRES = ("NodeName=it1 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes\n"
        "NodeName=it1 Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes MigEnabled=yes "
        "MigLayout=3g.40gb@0,1g.10gb@4,1g.10gb@5\n")


@pytest.fixture(scope="module")
def mig():
    c = Cluster(nodes=1, node_extra="Gres=gpu:h100:2", gres=GRES)
    try:
        yield c.start()
    finally:
        c.stop()


def show_node(c):
    return c.run(["tcontrol", "show", "node", "it1"]).stdout


def layout(c):
    """[(profile@start, uuid, holder)] of GPU 1, from tcontrol show node's MigLayout[1]=."""
    line = re.search(r"MigLayout\[1\]=(.+)", show_node(c)).group(1)
    return re.findall(r"([\w.]+@\d+)\((MIG-[\w-]+),(job \d+|free)\)", line)


def out_of(work, name):
    return open(os.path.join(work, name)).read()


def submit_sleeper(c, work, args, name, extra="sleep 60"):
    job = c.submit(args + ["-o", name, "--wrap",
                           f"echo cvd=$CUDA_VISIBLE_DEVICES; {extra}"],
                   user="tessera-alice", cwd=work)
    c.wait_state(job, "RUNNING")
    wait_for(lambda: os.path.exists(os.path.join(work, name)) and "cvd=" in out_of(work, name),
             what=f"{name} output")
    return job


def test_layout_is_reported_and_listed(mig):
    lay = layout(mig)
    assert [p for p, _, _ in lay] == ["3g.40gb@0", "1g.10gb@4", "1g.10gb@5"], lay
    assert all(h == "free" for _, _, h in lay)
    show = show_node(mig)
    assert "Gres=gpu:1g.10gb:2,gpu:3g.40gb:1,gpu:h100:1" in show, show


def test_profile_job_runs_on_an_instance_with_its_devices(mig):
    work = mig.user_dir("tessera-alice")
    uuid3g = layout(mig)[0][1]
    job = mig.submit(["--gres=gpu:3g.40gb:1", "-o", "p3g.out", "--wrap",
                      "echo batch=$CUDA_VISIBLE_DEVICES; "
                      "trun bash -c 'echo step=$CUDA_VISIBLE_DEVICES'; "
                      "cat /proc/self/status >/dev/null; sleep 3"],
                     user="tessera-alice", cwd=work)
    mig.wait_state(job, "RUNNING")
    iso_files = glob.glob(os.path.join(mig.dir, "spool", "*", f"job.{job}", "isolation"))
    iso = open(iso_files[0]).read() if iso_files else ""
    assert mig.wait_state(job, ["COMPLETED", "FAILED"], timeout=30)[0] == "COMPLETED"
    out = out_of(work, "p3g.out")
    assert f"batch={uuid3g}\n" in out, out
    assert f"step={uuid3g}\n" in out, out
    if "restrict_devices=1" in iso:  # cgroups available: only GPU 1 and this instance's caps
        rules = re.findall(r"device=(c \d+:\d+ rwm)", iso)
        assert "c 195:1 rwm" in rules and "c 195:0 rwm" not in rules, iso
        caps = [r for r in rules if re.match(r"c \d+:1\d\d\d rwm", r)]
        assert len(caps) == 2, iso  # the GI and CI access devices of one instance


def test_whole_gpu_jobs_never_take_the_mig_gpu(mig):
    work = mig.user_dir("tessera-alice")
    whole = submit_sleeper(mig, work, ["--gpus=1"], "whole1.out")
    assert re.search(r"cvd=GPU-[\w-]+\n", out_of(work, "whole1.out"))
    second = mig.submit(["--gpus=1", "--wrap", "true"], user="tessera-alice", cwd=work)
    # GPU 1 is free (all its instances are) but in MIG mode: the second whole job waits.
    wait_for(lambda: "Resources" in mig.run(["tqueue", "-h", "-j", str(second), "-o", "%r"]).stdout,
             what="the second whole-GPU job to wait for Resources")
    gpus = mig.run(["tinfo", "--gpus"]).stdout
    assert re.search(r"it1 +\S+ +\[#m\]", gpus), gpus
    assert "1 allocated, 1 free" in gpus, gpus
    mig.run(["tcancel", str(whole)])
    assert mig.wait_state(second, ["COMPLETED"], timeout=30)[0] == "COMPLETED"


def test_two_1g_jobs_get_different_instances_and_busy_gpu_is_not_resliced(mig):
    work = mig.user_dir("tessera-alice")
    a = submit_sleeper(mig, work, ["--gpus=1g.10gb:1"], "g1a.out")
    b = submit_sleeper(mig, work, ["--gres=gpu:1g.10gb:1"], "g1b.out")
    cva = re.search(r"cvd=(\S+)", out_of(work, "g1a.out")).group(1)
    cvb = re.search(r"cvd=(\S+)", out_of(work, "g1b.out")).group(1)
    assert cva.startswith("MIG-") and cvb.startswith("MIG-") and cva != cvb
    holders = {u: h for _, u, h in layout(mig)}
    assert holders[cva] == f"job {a}" and holders[cvb] == f"job {b}", holders
    gpus = mig.run(["tinfo", "--gpus"]).stdout
    assert re.search(r"it1 +\S+ +\[\.M\]", gpus), gpus
    assert f"1g.10gb@4:{a}" in gpus or f"1g.10gb@4:{b}" in gpus, gpus
    assert "2 of 3 instances in use" in gpus and "1g.10gb 0/2" in gpus, gpus
    assert "GresUsed=gpu:1g.10gb:2,gpu:3g.40gb:0,gpu:h100:0" in show_node(mig)
    before = layout(mig)
    for new in ("7g.80gb", "none"):
        p = mig.run(["tcontrol", "update", "node", "it1", "Gpu=1", f"MigLayout={new}"], check=False)
        assert p.returncode != 0, p.stdout
        assert re.search(rf"in use by job ({a}|{b})", p.stderr), p.stderr
    assert layout(mig) == before
    mig.run(["tcancel", str(a), str(b)])
    mig.wait_state(a, ["CANCELLED"])
    mig.wait_state(b, ["CANCELLED"])


def test_a_profile_no_node_has_is_refused_at_submit(mig):
    work = mig.user_dir("tessera-alice")
    p = mig.run(["tbatch", "--gres=gpu:2g.20gb:1", "--wrap", "true"], user="tessera-alice",
                cwd=work, check=False)
    assert p.returncode != 0
    assert "profile 2g.20gb" in p.stderr, p.stderr
    # More instances of an existing profile than any node has: refused too.
    p = mig.run(["tbatch", "--gpus=1g.10gb:3", "--wrap", "true"], user="tessera-alice",
                cwd=work, check=False)
    assert p.returncode != 0 and "profile 1g.10gb" in p.stderr, p.stderr


def test_reslice_of_an_idle_gpu_serves_the_new_profile_with_its_devices(mig):
    """Runs last (it changes the layout): an idle GPU may be re-sliced; jobs then run on the
    new instances, and their isolation opens the new instances' caps devices."""
    work = mig.user_dir("tessera-alice")
    mig.run(["tcontrol", "update", "node", "it1", "Gpu=1", "MigLayout=2g.20gb@0,3g.40gb@4"])
    wait_for(lambda: [p for p, _, _ in layout(mig)] == ["2g.20gb@0", "3g.40gb@4"],
             what="the new layout")
    uuid2g = layout(mig)[0][1]
    job = submit_sleeper(mig, work, ["--gres=gpu:2g.20gb:1"], "p2g.out", extra="sleep 30")
    assert f"cvd={uuid2g}\n" in out_of(work, "p2g.out")
    iso_files = glob.glob(os.path.join(mig.dir, "spool", "*", f"job.{job}", "isolation"))
    iso = open(iso_files[0]).read() if iso_files else ""
    mig.run(["tcancel", str(job)])
    if "restrict_devices=1" in iso:
        rules = re.findall(r"device=(c \d+:\d+ rwm)", iso)
        assert "c 195:1 rwm" in rules, iso
        assert len([r for r in rules if re.match(r"c \d+:1\d\d\d rwm", r)]) == 2, iso


GRES2 = ("NodeName=it[1-2] Name=gpu Type=h100 Count=1 MemoryMiB=81920 Simulated=yes MigEnabled=yes "
         "MigLayout=1g.10gb@0,1g.10gb@1\n")


def test_a_two_node_job_gets_each_nodes_own_instance_in_batch_and_trun_steps():
    c = Cluster(nodes=2, node_extra="Gres=gpu:h100:1", gres=GRES2)
    try:
        c.start()
        work = c.user_dir("tessera-alice")
        task = "echo $SLURMD_NODENAME=$CUDA_VISIBLE_DEVICES"
        job = c.submit(["-N2", "--ntasks-per-node=1", "--gpus-per-node=1g.10gb:1", "-o", "n2.out",
                        "--wrap", f"trun bash -c '{task}'"], user="tessera-alice", cwd=work)
        assert c.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)[0] == "COMPLETED"
        seen = dict(re.findall(r"(it\d)=(\S+)", out_of(work, "n2.out")))
        assert set(seen) == {"it1", "it2"}, seen
        for node in ("it1", "it2"):
            show = c.run(["tcontrol", "show", "node", node]).stdout
            uuids = re.findall(r"1g\.10gb@\d+\((MIG-[\w-]+),", show)
            assert seen[node] in uuids, (node, seen, show)  # that node's own instance
        assert seen["it1"] != seen["it2"]
    finally:
        c.stop()

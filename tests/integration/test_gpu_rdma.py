"""RDMA per job (issue 14 §5) with real daemons, simulated GPUs and a fake sysfs tree
(RdmaSysfsRoot=): two GPUs on different NUMA nodes (gres.conf NumaNode=), two InfiniBand HCAs
(one per NUMA node) and a RoCE port. A 1-GPU job gets the HCA of its GPU's NUMA node and its
NCCL_IB_HCA / UCX_NET_DEVICES list only that one; a CPU-only job gets the InfiniBand ports,
never mixed with RoCE; `tcontrol show node` lists the HCAs with NUMA node, RoCE interface and
the GPUs near them."""
import os
import shutil
import tempfile

import pytest

from harness import Cluster, wait_for

GRES = ("NodeName=it1 Name=gpu Type=a100 Count=1 Simulated=yes NumaNode=0\n"
        "NodeName=it1 Name=gpu Type=a100 Count=1 Simulated=yes NumaNode=1\n")
ENV = "env | grep -E '^(NCCL_|UCX_|SLURM_JOB_GPUS)' | sort > {out}; sleep 300"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fake_sysfs(root):
    for i, (name, ll, numa) in enumerate([("mlx5_0", "InfiniBand", 0), ("mlx5_1", "InfiniBand", 1),
                                          ("mlx5_2", "Ethernet", 0)]):
        dev = os.path.join(root, "devices", f"pci0000:{i}0", f"0000:{i}0:01.0")
        write(os.path.join(dev, "numa_node"), f"{numa}\n")
        write(os.path.join(dev, "infiniband_verbs", f"uverbs{i}", "ibdev"), name + "\n")
        write(os.path.join(dev, "infiniband_mad", f"umad{i}", "port"), "1\n")
        cls = os.path.join(root, "class", "infiniband", name)
        os.makedirs(cls)
        os.symlink(dev, os.path.join(cls, "device"))
        write(os.path.join(cls, "ports", "1", "state"), "4: ACTIVE\n")
        write(os.path.join(cls, "ports", "1", "rate"), "200 Gb/sec (4X HDR)\n")
        write(os.path.join(cls, "ports", "1", "link_layer"), ll + "\n")
        if ll == "Ethernet":
            write(os.path.join(cls, "ports", "1", "gid_attrs", "ndevs", "0"), "eth9\n")


@pytest.fixture(scope="module")
def rdma():
    root = tempfile.mkdtemp(prefix="tessera-sysfs-")
    fake_sysfs(root)
    c = Cluster(nodes=1, node_extra="CPUs=4 Gres=gpu:a100:2", gres=GRES,
                extra_conf=f"RdmaSysfsRoot={root}\n")
    try:
        yield c.start()
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


def job_env(path):
    def read():
        if not os.path.exists(path):
            return None
        text = open(path).read()
        return dict(l.split("=", 1) for l in text.splitlines() if "=" in l) if text else None
    return wait_for(read, timeout=20, what=f"{path} to be written")


def test_a_job_gets_the_hca_of_its_gpus_numa_node(rdma):
    c = rdma
    work = c.user_dir("tessera-alice")
    sub = lambda name, opts: c.submit(opts + ["-o", "/dev/null", "--wrap",
                                              ENV.format(out=os.path.join(work, name))],
                                      user="tessera-alice", cwd=work)
    a = sub("a.env", ["--gpus-per-node=1"])
    c.wait_state(a, "RUNNING")
    b = sub("b.env", ["--gpus-per-node=1"])
    c.wait_state(b, "RUNNING")
    cpu = sub("cpu.env", [])
    c.wait_state(cpu, "RUNNING")
    ea, eb, ec = (job_env(os.path.join(work, n)) for n in ("a.env", "b.env", "cpu.env"))
    for e in (ea, eb):
        gpu = e["SLURM_JOB_GPUS"]  # GPU g sits on NUMA node g, as mlx5_g does
        assert e["NCCL_IB_HCA"] == f"mlx5_{gpu}:1", e
        assert e["UCX_NET_DEVICES"] == f"mlx5_{gpu}:1", e
    assert {ea["SLURM_JOB_GPUS"], eb["SLURM_JOB_GPUS"]} == {"0", "1"}
    # CPU-only: the InfiniBand ports, not the RoCE one.
    assert ec["NCCL_IB_HCA"] == "mlx5_0:1,mlx5_1:1", ec
    assert "NCCL_SOCKET_IFNAME" not in ec
    show = c.run(["tcontrol", "show", "node", "it1"]).stdout
    assert ("HCAs=mlx5_0:1(InfiniBand,ACTIVE,numa=0,gpus=0) mlx5_1:1(InfiniBand,ACTIVE,numa=1,"
            "gpus=1) mlx5_2:1(Ethernet,ACTIVE,numa=0,netdev=eth9,gpus=0)") in show, show
    c.run(["tcancel", str(a), str(b), str(cpu)])
    for j in (a, b, cpu):
        c.wait_state(j, ["CANCELLED", "COMPLETED", "FAILED"])

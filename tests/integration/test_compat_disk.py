"""Issue 19 (h19 s6): sacct/sstat disk fields (MaxDiskRead/Write with node and task,
AveDiskRead/Write, fs/disk in TRESUsageIn*/Out*) on a real cluster, through the Slurm names.
As Slurm's jobacct_gather, the figures are /proc/<pid>/io rchar/wchar of each task (its reaped
children included); energy stays empty (no energy plugin)."""

import pytest

from harness import BIN, wait_for, install_slurm_names

USER = "tessera-alice"
UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


@pytest.fixture(scope="module")
def names(cluster):
    return install_slurm_names(cluster, "compat-disk")


def slurm(cluster, names, argv, check=True):
    env = {"PATH": f"{names}:{BIN}:/usr/sbin:/usr/bin:/sbin:/bin"}
    return cluster.run([f"{names}/{argv[0]}"] + list(argv[1:]), user=USER, check=check, env=env,
                       cwd=cluster.user_dir(USER))


def size(text):
    """sacct's bytes ("3M", "4096", "2K") as a number."""
    unit = text[-1] if text and text[-1] in "KMG" else ""
    return int(text[: len(text) - len(unit)]) * UNITS[unit]


# Rank 1 writes 3 MiB and reads 5 MiB (dd: children of the task's shell, reaped by it); rank 0
# does almost nothing.
TASK = ("bash -c 'if [ $SLURM_PROCID = 1 ]; then dd if=/dev/zero of=f-$SLURM_JOB_ID bs=1M count=3 "
        "status=none; dd if=/dev/zero of=/dev/null bs=1M count=5 status=none; "
        "rm f-$SLURM_JOB_ID; fi'")


def test_sacct_disk_fields_per_step(cluster, names):
    p = slurm(cluster, names, ["sbatch", "--parsable", "-n2", "-N2", "-o", "disk-%j.out",
                               "--wrap", f"srun -n2 {TASK}"])
    job = int(p.stdout.strip())
    state, _ = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED"], timeout=90)
    assert state == "COMPLETED"
    fields = ("JobID,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,"
              "MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageOutTot,ConsumedEnergy")

    def row():
        out = slurm(cluster, names, ["sacct", "-P", "-n", "-j", str(job), "-o", fields]).stdout
        rows = {line.split("|")[0]: line.split("|") for line in out.splitlines()}
        r = rows.get(f"{job}.0")
        return r if r and len(r) == 11 and r[1] else None
    r = wait_for(row, timeout=20, what="sacct disk fields")
    assert size(r[1]) >= 5 << 20 and r[3] == "1", r          # MaxDiskRead: rank 1's
    assert r[2] in ("it1", "it2"), r
    assert size(r[5]) >= 3 << 20 and r[7] == "1", r          # MaxDiskWrite
    assert size(r[4]) >= (5 << 20) // 2, r                   # AveDiskRead over 2 tasks
    assert size(r[8]) >= (3 << 20) // 2, r
    tot = dict(kv.split("=") for kv in r[9].split(","))
    assert int(tot["fs/disk"]) >= 3 << 20, r
    assert r[10] == "", r                                    # no energy plugin

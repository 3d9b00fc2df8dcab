"""Issue 19: Debian's Open MPI as a client. `mpirun` inside a 2-node job finds the allocation
from the SLURM_* variables (ras/slurm: SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE,
SLURM_CPUS_PER_TASK) and starts its daemons (orted) on the job's nodes through `srun` (plm/slurm
runs `srun --ntasks-per-node=1 --kill-on-bad-exit --mpi=none --ntasks=2 orted ...`); a small MPI
program then all-reduces across both nodes. The dev cluster's nodes are processes on one host,
so ranks talk over TCP on the host's own addresses (Open MPI sees two nodes: no shared memory).
Needs openmpi-bin and libopenmpi-dev (scripts/install-deps)."""
import os
import shutil
import subprocess

import pytest

from harness import BIN, install_slurm_names

USER = "tessera-alice"

pytestmark = pytest.mark.skipif(not shutil.which("mpirun") or not shutil.which("mpicc"),
                                reason="Open MPI (openmpi-bin, libopenmpi-dev) is not installed")

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const char* node = getenv("SLURMD_NODENAME");
  printf("rank %d of %d on %s sum=%d\n", rank, size, node ? node : "?", sum);
  MPI_Finalize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def slurm_bin(cluster):
    return install_slurm_names(cluster)


def test_mpirun_allreduces_across_two_nodes_through_srun(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    src = os.path.join(work, "allreduce.c")
    with open(src, "w") as f:
        f.write(PROGRAM)
    exe = os.path.join(work, "allreduce")
    subprocess.run(["mpicc", "-O1", "-o", exe, src], check=True)
    os.chmod(exe, 0o755)
    script = os.path.join(work, "mpi.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n#SBATCH -N2 --ntasks-per-node=1 -c 2 -o mpi-%j.out\n"
                "mpirun --mca btl self,tcp ./allreduce\necho mpirun=$?\n")
    env = {"PATH": f"{slurm_bin}:{BIN}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    p = cluster.run(["sbatch", "--parsable", script], user=USER, cwd=work, env=env)
    job = int(p.stdout.strip())
    state, code = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"],
                                     timeout=120)
    out = open(os.path.join(work, f"mpi-{job}.out")).read()
    assert (state, code) == ("COMPLETED", "0:0"), out
    assert "mpirun=0" in out, out
    lines = sorted(l for l in out.splitlines() if l.startswith("rank "))
    assert lines == ["rank 0 of 2 on it1 sum=3", "rank 1 of 2 on it2 sum=3"], out
    # The daemons ran as a step of the job (srun), on both nodes. mpirun ends its srun once the
    # daemons are told to exit, so the step may be recorded CANCELLED (not FAILED).
    acct = cluster.run(["tacct", "-j", str(job), "-P", "-n", "-o", "JobID,JobName,State,NodeList"]).stdout
    step = [l.split("|") for l in acct.splitlines() if l.startswith(f"{job}.0|")]
    assert step and step[0][1] == "orted" and step[0][3] == "it[1-2]", acct
    assert step[0][2] in ("COMPLETED", "CANCELLED"), acct


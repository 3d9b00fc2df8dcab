"""submitit (from PyPI, unchanged) drives a real Tessera cluster through the Slurm command
names installed by scripts/install-slurm-compat: it writes an sbatch script with #SBATCH lines
(--signal, --open-mode, --wckey, ...), submits it with `sbatch`, polls
`sacct -o JobID,State,NodeList --parsable2 -j ID`, and reads the pickled result the job wrote.
Its default settings run the function through `srun` (trun) inside the batch script (issue 19;
more in test_compat_submitit.py)."""
import os
import subprocess

import pytest

from harness import BIN, ROOT

submitit = pytest.importorskip("submitit")


@pytest.fixture(scope="module")
def slurm_names(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("slurm-compat")
    env = dict(os.environ, TESSERA_BUILD_DIR=os.path.dirname(BIN))
    p = subprocess.run([os.path.join(ROOT, "scripts", "install-slurm-compat"), str(prefix)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    for name in ("sbatch", "squeue", "scancel", "sinfo", "scontrol", "sacct"):
        link = prefix / "bin" / name
        assert link.is_symlink(), name
    # Issue 19: srun is trun; submitit runs its function through it (its default).
    assert (prefix / "bin" / "srun").is_symlink()
    submitit.slurm.slurm.SlurmJob.watcher.clear()  # process-wide; job ids restart per cluster
    return str(prefix / "bin")


def add(a, b):
    return a + b


def test_submitit_roundtrip(cluster, slurm_names, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{slurm_names}:{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    monkeypatch.setenv("TESSERA_CONF", cluster.conf)
    folder = os.path.join(cluster.dir, "submitit")
    os.makedirs(folder, exist_ok=True)
    executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
    # submitit's defaults: the function runs through `srun --unbuffered --output ... --error ...`.
    executor.update_parameters(timeout_min=5, slurm_partition="debug")
    job = executor.submit(add, 2, 40)
    assert int(job.job_id) > 0
    import time
    deadline = time.time() + 90
    while not job.done() and time.time() < deadline:
        time.sleep(1)
    assert job.done(), f"job {job.job_id} did not finish: {job.state}"
    assert job.result() == 42
    # The result pickle appears before the batch script exits; sacct then reports COMPLETED.
    deadline = time.time() + 30
    while job.watcher.get_state(job.job_id, mode="force") != "COMPLETED" and time.time() < deadline:
        time.sleep(0.5)
    assert job.state == "COMPLETED"
    # The Slurm-name commands answer in Slurm's formats.
    p = cluster.run(["sacct", "-P", "-n", "-X", "-j", job.job_id, "-o", "JobID,State,ExitCode"],
                    env={"PATH": f"{slurm_names}:{BIN}:/usr/bin:/bin"})
    assert p.stdout.strip() == f"{job.job_id}|COMPLETED|0:0"


def test_submitit_cancel(cluster, slurm_names, monkeypatch):
    monkeypatch.setenv("PATH", f"{slurm_names}:{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    monkeypatch.setenv("TESSERA_CONF", cluster.conf)
    folder = os.path.join(cluster.dir, "submitit-cancel")
    os.makedirs(folder, exist_ok=True)
    executor = submitit.AutoExecutor(folder=folder, cluster="slurm")
    executor.update_parameters(timeout_min=5)
    import time
    job = executor.submit(time.sleep, 120)
    job.cancel(check=True)  # scancel JOBID
    deadline = time.time() + 30
    while time.time() < deadline and job.watcher.get_state(job.job_id, mode="force") not in (
            "CANCELLED", "CANCELLED+"):
        time.sleep(0.5)
    assert job.watcher.get_state(job.job_id, mode="force").startswith("CANCELLED")

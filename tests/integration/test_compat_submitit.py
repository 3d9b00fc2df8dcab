"""Issue 19: submitit (from PyPI, unchanged) with its DEFAULT settings: it runs the function
through `srun --unbuffered --output FOLDER/%j_%t_log.out --error FOLDER/%j_%t_log.err` inside
the batch script. Single task, several tasks per node (one result per task), map_array (a state
and result per element) and cancel, through the Slurm names (scripts/install-slurm-compat)."""
import os
import subprocess
import time

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
    assert os.path.realpath(prefix / "bin" / "srun") == os.path.realpath(os.path.join(BIN, "trun"))
    return str(prefix / "bin")


@pytest.fixture
def executor(cluster, slurm_names, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{slurm_names}:{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    monkeypatch.setenv("TESSERA_CONF", cluster.conf)
    folder = os.path.join(cluster.dir, f"submitit-{tmp_path.name}")
    os.makedirs(folder, exist_ok=True)
    # submitit's job watcher is process-wide and keeps finished ids; every test cluster numbers
    # its jobs from 1 again.
    submitit.slurm.slurm.SlurmJob.watcher.clear()
    ex = submitit.AutoExecutor(folder=folder, cluster="slurm")
    ex.update_parameters(timeout_min=5, slurm_partition="debug")  # srun: submitit's default
    return ex


def wait_done(jobs, timeout=120):
    deadline = time.time() + timeout
    while not all(j.done() for j in jobs) and time.time() < deadline:
        time.sleep(1)
    assert all(j.done() for j in jobs), [(j.job_id, j.state) for j in jobs]


def rank_and_sum(a, b):
    env = submitit.JobEnvironment()
    return (env.global_rank, env.num_tasks, a + b)


def test_submitit_default_srun_single_task(executor):
    job = executor.submit(rank_and_sum, 2, 40)
    wait_done([job])
    assert job.result() == (0, 1, 42)
    assert "srun --unbuffered --output" in open(job.paths.submission_file).read()
    # The result pickle appears before the batch script exits; then sacct says COMPLETED.
    deadline = time.time() + 30
    while job.watcher.get_state(job.job_id, mode="force") != "COMPLETED" and time.time() < deadline:
        time.sleep(0.5)
    assert job.state == "COMPLETED"


def test_submitit_multi_task_per_node(executor):
    executor.update_parameters(tasks_per_node=2, nodes=1)
    job = executor.submit(rank_and_sum, 1, 1)
    wait_done([job])
    assert sorted(job.results()) == [(0, 2, 2), (1, 2, 2)]
    for t in (0, 1):  # srun --output %j_%t: one log per task
        assert os.path.exists(str(job.paths.stdout).replace("%t", str(t))), t


def test_submitit_map_array_states_and_results(executor):
    jobs = executor.map_array(rank_and_sum, [1, 2, 3], [10, 20, 30])
    wait_done(jobs)
    assert [j.result()[2] for j in jobs] == [11, 22, 33]
    deadline = time.time() + 30
    while time.time() < deadline and any(
            j.watcher.get_state(j.job_id, mode="force") != "COMPLETED" for j in jobs):
        time.sleep(0.5)
    assert [j.state for j in jobs] == ["COMPLETED"] * 3, [(j.job_id, j.state) for j in jobs]


def test_submitit_cancel_with_defaults(executor):
    job = executor.submit(time.sleep, 120)
    deadline = time.time() + 60
    while job.watcher.get_state(job.job_id, mode="force") != "RUNNING" and time.time() < deadline:
        time.sleep(0.5)
    job.cancel(check=True)
    deadline = time.time() + 30
    while time.time() < deadline and not job.watcher.get_state(
            job.job_id, mode="force").startswith("CANCELLED"):
        time.sleep(0.5)
    assert job.watcher.get_state(job.job_id, mode="force").startswith("CANCELLED")

"""The Slurm command names (scripts/install-slurm-compat) against a real cluster: the output
formats scripts parse, and messages under the Slurm name."""
import os
import subprocess

import pytest

from harness import BIN, ROOT


@pytest.fixture(scope="module")
def names(cluster):
    prefix = os.path.join(cluster.dir, "compat")  # readable by the test users
    env = dict(os.environ, TESSERA_BUILD_DIR=os.path.dirname(BIN))
    p = subprocess.run([os.path.join(ROOT, "scripts", "install-slurm-compat"), str(prefix)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return os.path.join(prefix, "bin")


def test_install_refuses_to_replace_a_real_file(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sbatch").write_text("#!/bin/sh\n")
    env = dict(os.environ, TESSERA_BUILD_DIR=os.path.dirname(BIN))
    p = subprocess.run([os.path.join(ROOT, "scripts", "install-slurm-compat"), str(tmp_path)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 1
    assert "sbatch exists and is not a symlink; left alone" in p.stderr
    assert (tmp_path / "bin" / "squeue").is_symlink()


def test_slurm_formats(cluster, names):
    env = {"PATH": f"{names}:{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    user = "tessera-alice"
    cwd = cluster.user_dir(user)
    p = cluster.run([f"{names}/sbatch", "--parsable", "--wrap", "sleep 30"], user=user, cwd=cwd, env=env)
    job = p.stdout.strip()
    assert job.isdigit(), p.stdout
    q = cluster.run([f"{names}/squeue", "-h", "-o", "%i,%T", "-j", job], env=env)
    assert q.stdout.strip() in (f"{job},PENDING", f"{job},RUNNING")
    cluster.run([f"{names}/scancel", job], user=user, env=env)
    cluster.wait_state(int(job), "CANCELLED")
    a = cluster.run([f"{names}/sacct", "-P", "-n", "-X", "-j", job, "-o", "JobID,State,ExitCode"],
                    env=env)
    assert a.stdout.splitlines()[0].startswith(f"{job}|CANCELLED")
    bad = cluster.run([f"{names}/sbatch", "--time=60:", "--wrap", "true"], check=False, env=env)
    assert bad.returncode == 255  # sbatch exits -1 on option errors (issue 19)
    assert bad.stderr.startswith("sbatch: error: invalid --time value \"60:\"")


def test_test_only_submits_nothing(cluster, names):
    before = cluster.run(["tqueue", "-h", "-t", "all", "-o", "%i"]).stdout
    p = cluster.run(["tbatch", "--test-only", "-N1", "--wrap", "true"])
    assert "to start at" in p.stderr and p.stdout == ""
    after = cluster.run(["tqueue", "-h", "-t", "all", "-o", "%i"]).stdout
    assert before == after

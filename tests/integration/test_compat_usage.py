"""Issue 19 (h19): usage gathered per step from cgroups (sacct MaxRSS, AveRSS, MaxVMSize,
AveCPU, TotalCPU on .batch and numbered steps), sstat's live usage of a running step,
scontrol show config from the running controller, sinfo -R's USER, sattach. Through the Slurm
names on a real cluster (munged, ctld with TLS, two noded as
root, so jobs get cgroups: v1 memory + cpuacct here, v2 where the host has it)."""
import os
import re
import subprocess
import time

import pytest

from harness import BIN, ROOT, wait_for

USER = "tessera-alice"
UNITS = {"K": 1, "M": 1024, "G": 1024 * 1024, "T": 1024 ** 3}


@pytest.fixture(scope="module")
def names(cluster):
    prefix = os.path.join(cluster.dir, "compat-usage")
    env = dict(os.environ, TESSERA_BUILD_DIR=os.path.dirname(BIN))
    p = subprocess.run([os.path.join(ROOT, "scripts", "install-slurm-compat"), str(prefix)],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert os.path.islink(os.path.join(prefix, "bin", "sstat"))
    return os.path.join(prefix, "bin")


def slurm(cluster, names, argv, user=None, check=True):
    env = {"PATH": f"{names}:{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    return cluster.run([f"{names}/{argv[0]}"] + list(argv[1:]), user=user, check=check, env=env,
                       cwd=cluster.user_dir(USER) if user else None)


def kib(text):
    """sacct's memory ("81920K", "80M", "0") in KiB."""
    m = re.fullmatch(r"(\d+)([KMGT]?)", text)
    assert m, text
    return int(m.group(1)) * UNITS.get(m.group(2) or "K", 1)


def secs(text):
    """sacct's CPU time (00:01.234, 00:00:01, 01:02:03, 1-00:00:00) in seconds."""
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
    parts = [float(x) for x in text.split(":")]
    while len(parts) < 3:
        parts.insert(0, 0.0)
    return days * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


# A task that really touches ~60 MiB, burns CPU, and lives long enough to be sampled.
TASK = ("python3 -c \"b=b'x'*(60<<20); s=sum(range(3*10**6)); import time; time.sleep(2.5); "
        "print(len(b))\"")


def test_sacct_usage_per_step_and_batch(cluster, names):
    script = ("#!/bin/bash\n"
              f"srun -n2 {TASK}\n"
              "python3 -c \"b=b'y'*(30<<20); s=sum(range(2*10**6))\"\n")
    work = cluster.user_dir(USER)
    with open(os.path.join(work, "usage.sh"), "w") as f:
        f.write(script)
    p = slurm(cluster, names, ["sbatch", "--parsable", "-n2", "-o", "usage-%j.out", "usage.sh"],
              user=USER)
    job = int(p.stdout.strip())
    state, _ = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED"], timeout=90)
    assert state == "COMPLETED", open(os.path.join(work, f"usage-{job}.out")).read()
    fields = "JobID,MaxRSS,MaxRSSNode,AveRSS,MaxVMSize,AveCPU,MinCPU,TotalCPU,NTasks"

    def rows():
        out = slurm(cluster, names, ["sacct", "-P", "-n", "-j", str(job), "-o", fields]).stdout
        got = {line.split("|")[0]: line.split("|") for line in out.splitlines()}
        return got if f"{job}.0" in got and got[f"{job}.batch"][1] else None
    r = wait_for(rows, timeout=20, what="sacct rows with usage")
    step = r[f"{job}.0"]
    assert kib(step[1]) >= 55 * 1024, step          # MaxRSS: one task's ~60 MiB
    assert step[2] in ("it1", "it2"), step          # MaxRSSNode
    assert kib(step[3]) >= 50 * 1024, step          # AveRSS
    assert kib(step[4]) >= 55 * 1024, step          # MaxVMSize (sampled): holds the 60 MiB
    assert step[8] == "2", step                     # NTasks
    assert secs(step[7]) >= 0.05 and secs(step[7]) >= secs(step[5]), step  # TotalCPU, AveCPU
    batch = r[f"{job}.batch"]
    assert kib(batch[1]) >= 25 * 1024, batch        # the script's own python: ~30 MiB
    assert secs(batch[7]) > 0, batch
    whole = r[str(job)]
    assert whole[1] == "" and secs(whole[7]) >= secs(step[7]) + secs(batch[7]) - 0.01, whole


def test_sstat_reads_a_running_step_live(cluster, names):
    job = int(slurm(cluster, names, ["sbatch", "--parsable", "-n1", "--wrap",
                                     "srun -n1 python3 -c \"b=b'x'*(50<<20); import time; "
                                     "time.sleep(60)\""], user=USER).stdout.strip())
    try:
        def live():
            p = slurm(cluster, names, ["sstat", "-P", "-n", "-j", str(job), "-o",
                                       "JobID,MaxRSS,MaxRSSNode,MaxVMSize,NTasks"],
                      user=USER, check=False)
            row = p.stdout.strip().split("|")
            return row if p.returncode == 0 and len(row) == 5 and kib(row[1] or "0") >= 45 * 1024 \
                else None
        row = wait_for(live, timeout=40, interval=0.5, what="sstat showing the step's memory")
        assert row[0] == f"{job}.0" and row[2] in ("it1", "it2") and row[4] == "1", row
        assert kib(row[3]) >= 45 * 1024, row          # MaxVMSize holds the 50 MiB
        # sstat's default fields, as Slurm's header
        head = slurm(cluster, names, ["sstat", "-j", f"{job}.0"], user=USER).stdout.splitlines()[0]
        assert head.split()[:6] == ["JobID", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask",
                                    "AveVMSize", "MaxRSS"], head
        bad = slurm(cluster, names, ["sstat", "-j", f"{job}.batch"], user=USER, check=False)
        assert bad.returncode == 1 and "not served" in bad.stderr, bad.stderr
    finally:
        slurm(cluster, names, ["scancel", str(job)], user=USER, check=False)
    cluster.wait_state(job, ["CANCELLED", "COMPLETED", "FAILED"], timeout=30)
    gone = slurm(cluster, names, ["sstat", "-j", str(job)], user=USER, check=False)
    assert gone.returncode == 1 and f"no steps running for job {job}" in gone.stderr


def test_show_config_comes_from_the_running_controller(cluster, names):
    out = slurm(cluster, names, ["scontrol", "show", "config"]).stdout
    assert out.startswith("Configuration data as of "), out
    assert "KillWait                = 1 sec\n" in out, out
    assert "MinJobAge               = 600 sec\n" in out, out
    assert f"SlurmctldPort           = {cluster.ctld_port}\n" in out, out
    assert "PriorityType            = priority/multifactor\n" in out, out
    assert "EnforcePartLimits       = NO\n" in out, out
    assert re.search(r"\nSlurmUser += root\(0\)\n", out), out
    assert out.endswith("\nSlurmctld(primary) at localhost is UP\n"), out
    # The controller's values, not the file's: an edit without reconfigure does not show.
    text = open(cluster.conf).read()
    try:
        with open(cluster.conf, "w") as f:
            f.write(text.replace("KillWait=1", "KillWait=7"))
        again = slurm(cluster, names, ["scontrol", "show", "config"]).stdout
        assert "KillWait                = 1 sec\n" in again, again
    finally:
        with open(cluster.conf, "w") as f:
            f.write(text)


def test_sinfo_R_names_who_drained_and_when(cluster, names):
    before = int(time.time())
    slurm(cluster, names, ["scontrol", "update", "NodeName=it2", "State=DRAIN", "Reason=fan"])
    try:
        out = slurm(cluster, names, ["sinfo", "-R"]).stdout.splitlines()
        assert out[0].split() == ["REASON", "USER", "TIMESTAMP", "NODELIST"], out
        row = [line for line in out if line.startswith("fan")]
        assert len(row) == 1, out
        reason, user, stamp, node = row[0].split()
        assert (reason, user, node) == ("fan", "root", "it2"), row
        t = time.mktime(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S"))
        assert before - 2 <= t <= time.time() + 2, stamp
    finally:
        slurm(cluster, names, ["scontrol", "update", "NodeName=it2", "State=RESUME"])


def test_sattach_follows_a_running_step(cluster, names):
    job = int(slurm(cluster, names, ["sbatch", "--parsable", "-n1", "--wrap",
                                     "srun -n1 bash -c 'for i in $(seq 1 24); do echo tick $i; "
                                     "echo warn $i >&2; sleep 0.5; done'"],
                    user=USER).stdout.strip())

    def step_running():
        out = slurm(cluster, names, ["sacct", "-n", "-P", "-j", str(job), "-o", "JobID,State"]).stdout
        return f"{job}.0|RUNNING" in out
    wait_for(step_running, timeout=40, interval=0.5, what="step 0 running")
    p = slurm(cluster, names, ["sattach", "-l", f"{job}.0"], user=USER, check=False)
    assert p.returncode == 0, p.stderr
    ticks = [line for line in p.stdout.splitlines() if line.startswith("0: tick ")]
    assert ticks and ticks[-1] == "0: tick 24", p.stdout     # it follows the step to its end
    assert "0: warn 24" in p.stderr, p.stderr
    cluster.wait_state(job, ["COMPLETED"], timeout=30)
    gone = slurm(cluster, names, ["sattach", f"{job}.0"], user=USER, check=False)
    assert gone.returncode == 1 and "is not running" in gone.stderr, gone.stderr

#!/usr/bin/env python3
"""Tessera-only end-to-end profile for before/after figures (bench/RESULTS.md): on the cluster of
bench/tessera/setup.sh, N held `true` jobs (4 tbatch loops), a settle (SETTLE seconds: deleted
inodes age, writeback ends), then one release and the time until every output file exists and
the queue is empty, with CPU ms per job of ctld, the noded processes, the whole machine and the
rest of it (stepds, jobs, this harness, kernel threads) (/proc, 10 ms ticks).
Usage: BIN=build/bin bench/tessera/e2e.py [N]   (env BASE, SETTLE=12)"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from vslib.util import set_aside  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
BIN = os.path.abspath(os.environ.get("BIN", "build/bin"))
BASE = os.environ.get("BASE", "/tmp/tessera-bench/tessera")
SETTLE = float(os.environ.get("SETTLE", "12"))
ENV = dict(os.environ, TESSERA_CONF=f"{BASE}/etc/tessera.conf")
JOBS = f"{BASE}/jobs"


def ticks(pid, children=False):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(f[11]) + int(f[12]) + ((int(f[13]) + int(f[14])) if children else 0)


def pids(pattern):
    p = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(x) for x in p.stdout.split()]


def snap(groups):
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    out = {k: sum(ticks(p) for p in ps) for k, ps in groups.items()}
    out["machine"] = sum(v[0:3]) + sum(v[5:8])
    # stepds, jobs, this harness, kernel threads: zygote-forked stepds now live on between jobs,
    # and each one's CPU, rounded to 10 ms ticks, would be lost.
    out["rest"] = out["machine"] - out["ctld"] - out["noded"]
    return out


def queue():
    p = subprocess.run([f"{BIN}/tqueue", "-h", "-o", "%i"], capture_output=True, text=True, env=ENV)
    return p.stdout.split()


def main():
    set_aside(JOBS, f"{BASE}/old-outputs")  # as run-vs-slurm does (vslib/util.py); rm -r when done
    loop = f"for _ in $(seq {N // 4}); do {BIN}/tbatch -Q --hold --wrap=true; done"
    subprocess.run(" & ".join([loop] * 4) + " & wait", shell=True, cwd=JOBS, env=ENV, check=True)
    subprocess.run(["sync"])
    time.sleep(SETTLE)
    groups = {"ctld": pids("tessera-ctld -f " + BASE), "noded": pids("tessera-noded -N")}
    ids = queue()
    s0, t0 = snap(groups), time.time()
    subprocess.run([f"{BIN}/tcontrol", "release", ",".join(ids)], env=ENV, check=True)
    paths, k = [f"{JOBS}/slurm-{i}.out" for i in ids], 0
    while True:  # as run-vs-slurm's drain(): the queue is asked only once every output exists
        while k < len(paths) and os.path.exists(paths[k]):
            k += 1
        if k == len(paths) and not queue():
            break
        time.sleep(0.01)
    el, s1 = time.time() - t0, snap(groups)
    parts = ", ".join(f"{k} {(s1[k] - s0[k]) * 10 / len(ids):.2f}" for k in s0)
    print(f"{len(ids)} jobs in {el:.2f}s = {len(ids) / el:.0f} jobs/s; CPU ms/job: {parts}")


if __name__ == "__main__":
    main()

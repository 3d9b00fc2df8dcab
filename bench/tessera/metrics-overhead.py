#!/usr/bin/env python3
"""Issue 20 §3: what the metrics cost on the controller's hot paths. For each configuration --
BUILD dirs given as arguments, each run with metrics off and (when the build has them) on,
with a scraper fetching /metrics every second like Prometheus -- a fresh 2-node test cluster,
N submissions one per call (tessera-bench-submit -c 64, held jobs: the SubmitJob path), then N
released at once (the scheduling cycle path: each cycle considers the pending jobs). Prints
jobs/s, ctld CPU (user+sys) per job, and sdiag's mean/max cycle time. Configurations are
interleaved, REPS times.
Usage: bench/tessera/metrics-overhead.py [-n N] [--reps R] BUILD_DIR [BUILD_DIR...]"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def one(build, metrics, n):
    """Runs in a child process (harness reads TESSERA_BUILD_DIR at import)."""
    os.environ["TESSERA_BUILD_DIR"] = build
    sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
    import re
    import threading
    import time
    import urllib.request
    from harness import BIN, Cluster, free_ports

    port = free_ports(1)[0]
    c = Cluster(nodes=2, extra_conf=f"MetricsPort={port}\nMetricsAddress=127.0.0.1\n" if metrics else "")
    c.start()
    stop = threading.Event()
    scrapes = [0]

    def scrape():
        while not stop.wait(1.0):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                r.read()
            scrapes[0] += 1
    t = threading.Thread(target=scrape, daemon=True)
    try:
        pid = c.procs["ctld"].pid
        tick = os.sysconf("SC_CLK_TCK")

        def cpu():
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick
        if metrics:
            t.start()
        c0 = cpu()
        p = subprocess.run([f"{BIN}/tessera-bench-submit", "-f", c.conf, "-n", str(n), "-c", "64"],
                           capture_output=True, text=True, env=c.env(), check=True,
                           cwd=c.dir)  # the jobs' output files go there, not here
        c1 = cpu()
        kv = dict(x.split("=") for x in p.stdout.split())
        # The cycle path: release every held job; cycles consider them until all have run.
        t0 = time.time()
        c.run(["tcontrol", "release", ",".join(str(i) for i in range(1, n + 1))], timeout=300)
        deadline = time.time() + 600
        while time.time() < deadline:
            left = c.run(["tqueue", "-h", "-t", "PD,R", "-o", "%i"]).stdout.split()
            if not left:
                break
            time.sleep(0.5)
        e2e = time.time() - t0
        c2 = cpu()
        sd = c.run(["tcontrol", "sdiag"]).stdout
        mean = int(re.search(r"Mean cycle:\s+(\d+)", sd).group(1))
        mx = int(re.search(r"Max cycle:\s+(\d+)", sd).group(1))
        cycles = int(re.search(r"Total cycles:\s+(\d+)", sd).group(1))
        return {"submit_jobs_per_s": float(kv["jobs_per_s"]), "submit_cpu_ms_per_job": (c1 - c0) * 1000 / n,
                "run_all_s": e2e, "run_cpu_ms_per_job": (c2 - c1) * 1000 / n, "cycles": cycles,
                "mean_cycle_us": mean, "max_cycle_us": mx, "scrapes": scrapes[0]}
    finally:
        stop.set()
        c.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--child", nargs=2)
    ap.add_argument("builds", nargs="*")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(one(a.child[0], a.child[1] == "on", a.n)))
        return
    configs = []
    for b in a.builds:
        b = os.path.abspath(b)
        with open(os.path.join(b, "bin", "tessera-ctld"), "rb") as f:
            has = b"cannot serve metrics on" in f.read()  # a build with metrics (issue 20)
        configs.append((b, "off"))
        if has:
            configs.append((b, "on"))
    for rep in range(a.reps):
        for b, m in configs:
            with open("/proc/loadavg") as f:
                load = f.read().split()[0]
            p = subprocess.run([sys.executable, __file__, "-n", str(a.n), "--child", b, m],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"{b} metrics={m}: failed\n{p.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(p.stdout.strip().splitlines()[-1])
            print(f"rep={rep} build={b} metrics={m} load={load} " +
                  " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
                  flush=True)


if __name__ == "__main__":
    main()

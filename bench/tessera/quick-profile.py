#!/usr/bin/env python3
"""Quick single-system profile of Tessera (no Slurm): a 2-node test cluster, N held jobs through
the API load client, then controller RSS per pending job, tqueue (full and -j) and tbatch call
times, and idle submit-to-start latency with the queue full. Used for the before/after figures of
performance changes in bench/RESULTS.md.  Usage: bench/tessera/quick-profile.py [N]"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from harness import BIN, Cluster  # noqa: E402


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    c = Cluster(nodes=2)
    c.start()
    try:
        pid = c.procs["ctld"].pid

        def rss():
            with open(f"/proc/{pid}/status") as f:
                return int(next(l for l in f if l.startswith("VmRSS")).split()[1])
        r0 = rss()
        p = subprocess.run([f"{BIN}/tessera-bench-submit", "-f", c.conf, "-n", str(n), "-c", "64"],
                           capture_output=True, text=True, env=c.env())
        print("api submit:", p.stdout.strip())
        time.sleep(2)
        r1 = rss()
        print(f"ctld RSS empty={r0} kB, with {n} held={r1} kB -> {(r1 - r0) * 1024 / n:.0f} B/job")
        for args in (["tqueue"], ["tqueue", "-j", "5"], ["tbatch", "--hold", "--wrap=true"]):
            ts = []
            for _ in range(5):
                t0 = time.time()
                c.run(args)
                ts.append((time.time() - t0) * 1000)
            print(" ".join(args), "median ms", f"{sorted(ts)[2]:.1f}")
        ts = []
        for i in range(5):
            m = f"{c.dir}/m{i}"
            t0 = time.time()
            c.run(["tbatch", f"--wrap=date +%s.%N > {m}.t; mv {m}.t {m}"])
            while not os.path.exists(m):
                time.sleep(0.001)
            with open(m) as f:
                ts.append((float(f.read()) - t0) * 1000)
        print("submit-to-start ms (sorted):", " ".join(f"{t:.1f}" for t in sorted(ts)))
    finally:
        c.stop()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cost of ctld's start-up check of its state database (hardening, part 3): a 2-node test
cluster, N held jobs through the API load client, ctld stopped; then the database size, the
time of SQLite's `PRAGMA quick_check` and `PRAGMA integrity_check` on it (median of 5, page
cache warm, as on a ctld restart) and ctld's restart time until it answers (quick_check
included). Usage: bench/tessera/state-check.py [N]"""
import os
import sqlite3
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from harness import BIN, Cluster  # noqa: E402


def timed(db, pragma, reps=5):
    ts = []
    for _ in range(reps):
        con = sqlite3.connect(db)
        t0 = time.perf_counter()
        verdict = con.execute(pragma).fetchone()[0]
        ts.append((time.perf_counter() - t0) * 1000)
        con.close()
    return verdict, statistics.median(ts), min(ts), max(ts)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    c = Cluster(nodes=2)
    c.start()
    try:
        p = subprocess.run([f"{BIN}/tessera-bench-submit", "-f", c.conf, "-n", str(n), "-c", "64"],
                           capture_output=True, text=True, env=c.env())
        print("api submit:", p.stdout.strip(), p.stderr.strip()[-200:])
        c.kill("ctld")
        db = os.path.join(c.dir, "state", "tessera.db")
        print(f"database: {os.path.getsize(db) / 1e6:.1f} MB for {n} jobs")
        for pragma in ("PRAGMA quick_check", "PRAGMA quick_check(1)", "PRAGMA integrity_check"):
            verdict, med, lo, hi = timed(db, pragma)
            print(f"{pragma}: {verdict}; median {med:.0f} ms [{lo:.0f}-{hi:.0f}] (n=5)")
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            c.start_ctld()
            ts.append((time.perf_counter() - t0) * 1000)
            c.kill("ctld")
        print("ctld restart until it answers, ms:", " ".join(f"{t:.0f}" for t in ts))
    finally:
        c.stop()


if __name__ == "__main__":
    main()

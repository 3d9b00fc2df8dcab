#!/usr/bin/env python3
"""tessera-ctld with 1,000 and 10,000 emulated nodes (issue 20 §2). See bench/nodeemu/README.md.

    BUILD=build bench/nodeemu/scale.py                     # NODES="16 1000 10000" REPS=3
    NODES=1000 REPS=1 SECTIONS="storm idle cli" BUILD=build bench/nodeemu/scale.py
    PER_CHANNEL=10 NODES=10000 ...   # 10 node streams per TCP connection (fewer handshakes)

Per node count: a private munged, tessera-ctld (port $PORT, state under $BASE) with NodeName=e[1-N]
(16 CPUs each) and one tessera-nodeemu holding the N streams. Sections:
  storm  ctld restarted (SIGTERM, start): time until every node is registered again
  idle   ctld CPU with every node heartbeating (IDLE_S windows), RSS, threads
  cli    tinfo, tinfo -N, tqueue latency (wall and the command's CPU), LAT_REPS each
  e2e    JOBS held jobs (run RUN_MS each on the emulator) released at once: until every end is
         acknowledged (durable); jobs/s and ctld CPU per job
  cycle  every node filled with one exclusive long job, then NPEND one-CPU jobs pending:
         scheduling cycle (tcontrol sdiag: last/max), ctld RSS, tqueue/tinfo latency
Every figure: median [min-max] of REPS runs, with CPU time beside wall time and the load average.
"""
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from vslib.util import cpu_s, rss_kb, wait_dead, alive  # noqa: E402

E = os.environ.get
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(os.path.abspath(E("BUILD", os.path.join(ROOT, "build"))), "bin")
BASE = E("BASE", "/tmp/tessera-emu")
PORT = int(E("PORT", "46817"))
NODES = [int(x) for x in E("NODES", "16 1000 10000").split()]
REPS = int(E("REPS", "3"))
IDLE_S = float(E("IDLE_S", "20"))
LAT_REPS = int(E("LAT_REPS", "10"))
JOBS = int(E("JOBS", "5000"))
RUN_MS = int(E("RUN_MS", "10"))
NPEND = int(E("NPEND", "100000"))
SECTIONS = E("SECTIONS", "storm idle cli e2e cycle").split()
PER_CHANNEL = E("PER_CHANNEL", "1")  # node streams per TCP connection (1: as real nodes)
RESULTS = []  # (node count, measurement, unit, [values])


def say(m):
    print(time.strftime("%H:%M:%S ") + m, flush=True)


def load():
    return open("/proc/loadavg").read().split()[0]


def run(cmd, env, check=True, timeout=600):
    """(wall s, CPU s of the command, stdout)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(cmd, env=env, text=True, capture_output=True, timeout=timeout)
    t1 = time.time()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and p.returncode != 0:
        raise RuntimeError(f"{cmd}: rc={p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return t1 - t0, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), p.stdout


def record(n, what, unit, values):
    RESULTS.append((n, what, unit, values))
    say(f"RESULT N={n} {what} [{unit}]: {fmt(values)} (load {load()})")


def fmt(v):
    if not v:
        return "-"
    f = lambda x: f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"
    if len(v) == 1:
        return f(v[0])
    return f"{f(statistics.median(v))} [{f(min(v))}-{f(max(v))}]"


class Cluster:
    def __init__(self, n):
        self.n = n
        self.base = os.path.join(BASE, f"n{n}")
        self.conf = os.path.join(self.base, "etc", "tessera.conf")
        self.status = os.path.join(self.base, "run", "emu.status")
        self.env = dict(os.environ, TESSERA_CONF=self.conf)
        self.ctld = self.emu = self.munged = None

    def setup(self):
        if os.path.exists(self.base):
            shutil.rmtree(self.base)
        for d in ("etc", "state", "spool", "log", "run", "jobs", "munge"):
            os.makedirs(os.path.join(self.base, d))
        os.chmod(os.path.join(self.base, "munge"), 0o755)
        m = os.path.join(self.base, "munge")
        with open(os.path.join(m, "munge.key"), "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(os.path.join(m, "munge.key"), 0o600)
        subprocess.run(["munged", f"--key-file={m}/munge.key", f"--socket={m}/munge.sock",
                        f"--pid-file={m}/munged.pid", f"--log-file={m}/munged.log",
                        f"--seed-file={m}/munged.seed"], check=True)
        for _ in range(50):
            if os.path.exists(f"{m}/munge.sock"):
                break
            time.sleep(0.1)
        self.munged = int(open(f"{m}/munged.pid").read())
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=emu{self.n}
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={PORT}
SlurmUser=root
StateSaveLocation={self.base}/state
SlurmdSpoolDir={self.base}/spool/%n
AuthInfo=socket={m}/munge.sock
CgroupMountpoint=none
NodeName=e[1-{self.n}] NodeAddr=127.0.0.1 Port=20001-{20000 + self.n} CPUs=16 RealMemory=4000
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        os.chmod(self.conf, 0o644)

    def start_ctld(self):
        log = open(os.path.join(self.base, "log", "ctld.log"), "ab")
        self.ctld = subprocess.Popen([f"{BIN}/tessera-ctld", "-f", self.conf], stdout=log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self.env, start_new_session=True)
        for _ in range(600):
            if subprocess.run([f"{BIN}/tcontrol", "ping"], env=self.env,
                              capture_output=True).returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("tessera-ctld did not answer")

    def stop_ctld(self):
        if self.ctld and alive(self.ctld.pid):
            self.ctld.send_signal(signal.SIGTERM)
            self.ctld.wait(timeout=60)

    def start_emu(self, run_ms):
        log = open(os.path.join(self.base, "log", "emu.log"), "ab")
        self.emu = subprocess.Popen([f"{BIN}/tessera-nodeemu", "-f", self.conf, "--run-ms",
                                     str(run_ms), "--status-file", self.status, "--report-s", "10",
                                     "--per-channel", PER_CHANNEL],
                                    stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)

    def emu_status(self):
        try:
            return {k: int(v.split("/")[0]) for k, v in
                    re.findall(r"(\w+)=([\d/]+)", open(self.status).read())}
        except (OSError, ValueError):
            return {}

    def wait_registered(self, since_ms, timeout=300):
        t0 = time.time()
        while time.time() - t0 < timeout:
            s = self.emu_status()
            if s.get("registered") == self.n and s.get("all_registered_ms", 0) >= since_ms:
                return s["all_registered_ms"]
            time.sleep(0.05)
        raise RuntimeError(f"not every node registered after {timeout} s: {self.emu_status()}")

    def stop(self):
        for p in (self.emu, self.ctld):
            if p and alive(p.pid):
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
        if self.munged and alive(self.munged):
            os.kill(self.munged, signal.SIGTERM)
            wait_dead(self.munged)

    def sdiag(self):
        out = run([f"{BIN}/tcontrol", "sdiag"], self.env)[2]
        g = lambda k: int(re.search(k + r":\s+(\d+)", out).group(1))
        return {"cycles": g("Total cycles"), "last": g("Last cycle"), "max": g("Max cycle"),
                "mean": g("Mean cycle")}

    def submit(self, n, hold, name="wrap", exclusive=False):
        cmd = [f"{BIN}/tessera-bench-submit", "-f", self.conf, "-n", str(n), "-c", "8",
               "--batch", "500", "--name", name, "--ids-out", os.path.join(self.base, "ids")]
        if not hold:
            cmd.append("--no-hold")
        if exclusive:
            cmd.append("--exclusive")
        run(cmd, self.env)
        return [int(x) for x in open(os.path.join(self.base, "ids")).read().split()]


def sec_storm(c):
    walls, cpus = [], []
    for rep in range(REPS):
        c.stop_ctld()
        cpu0 = 0.0
        t0 = time.time()
        c.start_ctld()
        done = c.wait_registered(int(t0 * 1000))
        cpu = cpu_s(c.ctld.pid) - cpu0
        walls.append(done / 1000 - t0)
        cpus.append(cpu)
        say(f"   storm rep{rep + 1}: {walls[-1]:.2f} s until {c.n} nodes registered; ctld CPU "
            f"since start {cpu:.2f} s; load {load()}")
    record(c.n, "restart: ctld start -> every node registered", "s", walls)
    record(c.n, "restart: ctld CPU from start until every node registered", "s", cpus)


def sec_idle(c):
    time.sleep(3)
    pct, emu_pct = [], []
    for rep in range(REPS):
        a, e = cpu_s(c.ctld.pid), cpu_s(c.emu.pid)
        t = time.time()
        time.sleep(IDLE_S)
        el = time.time() - t
        pct.append((cpu_s(c.ctld.pid) - a) / el * 100)
        emu_pct.append((cpu_s(c.emu.pid) - e) / el * 100)
        say(f"   idle rep{rep + 1}: ctld {pct[-1]:.2f} % of a core over {el:.0f} s, emulator "
            f"{emu_pct[-1]:.2f} %; load {load()}")
    record(c.n, "idle ctld CPU, every node heartbeating", "% of a core", pct)
    record(c.n, "idle emulator CPU (the instrument)", "% of a core", emu_pct)
    record(c.n, "ctld RSS, idle", "MiB", [rss_kb(c.ctld.pid) / 1024])
    record(c.n, "ctld threads, idle", "threads", [rss_kb(c.ctld.pid, "Threads")])


def latency(c, label):
    for cmd in (["tinfo"], ["tinfo", "-N"], ["tqueue"]):
        walls, cpus = [], []
        for _ in range(LAT_REPS):
            w, u, out = run([f"{BIN}/{cmd[0]}"] + cmd[1:], c.env)
            walls.append(w * 1000)
            cpus.append(u * 1000)
        record(c.n, f"`{' '.join(cmd)}` {label} ({len(out.splitlines())} lines)", "ms", walls)
        record(c.n, f"`{' '.join(cmd)}` {label}: command CPU", "ms", cpus)


def sec_e2e(c):
    rates, cpj = [], []
    for rep in range(REPS):
        ids = c.submit(JOBS, hold=True)
        subprocess.run(["sync"])
        time.sleep(2)
        s0 = c.emu_status()
        a = cpu_s(c.ctld.pid)
        t0 = time.time()
        run([f"{BIN}/tcontrol", "release", ",".join(map(str, ids))], c.env)
        while c.emu_status().get("acked", 0) < s0.get("acked", 0) + len(ids):
            if time.time() - t0 > 600:
                raise RuntimeError(f"e2e: not every job ended: {c.emu_status()}")
            time.sleep(0.01)
        el = time.time() - t0
        rates.append(len(ids) / el)
        cpj.append((cpu_s(c.ctld.pid) - a) * 1000 / len(ids))
        say(f"   e2e rep{rep + 1}: {len(ids)} jobs in {el:.2f} s = {rates[-1]:.0f} jobs/s, ctld "
            f"{cpj[-1]:.2f} ms CPU/job; load {load()}")
    record(c.n, f"end to end, {JOBS} held jobs ({RUN_MS} ms each) released at once, until every "
           "end is durable", "jobs/s", rates)
    record(c.n, "end to end: ctld CPU per job", "ms/job", cpj)


def sec_cycle(c):
    long_ids = c.submit(c.n, hold=False, name="emu-ms=36000000", exclusive=True)
    t0 = time.time()
    while c.emu_status().get("launches", 0) < len(long_ids) and time.time() - t0 < 300:
        time.sleep(0.1)
    say(f"   cycle: {len(long_ids)} exclusive long jobs started ({c.emu_status()})")
    c.submit(NPEND, hold=False)
    d0 = c.sdiag()
    t0 = time.time()
    lasts = []
    while len(lasts) < max(3, REPS) and time.time() - t0 < 300:
        time.sleep(0.5)
        d = c.sdiag()
        if d["cycles"] > d0["cycles"]:
            lasts.append(d["last"] / 1000)
            say(f"   cycle: {d['cycles']} cycles, last {d['last'] / 1000:.1f} ms, max "
                f"{d['max'] / 1000:.1f} ms; load {load()}")
            d0 = d
    record(c.n, f"scheduling cycle, {NPEND} pending + {c.n} running (sdiag last cycle)", "ms",
           lasts)
    record(c.n, f"ctld RSS, {NPEND} pending + {c.n} running", "MiB", [rss_kb(c.ctld.pid) / 1024])
    latency(c, f"with {NPEND} pending + {c.n} running")


def main():
    say(f"nodes {NODES}, reps {REPS}, sections {SECTIONS}, binaries {BIN}, load {load()}")
    for n in NODES:
        c = Cluster(n)
        c.setup()
        try:
            c.start_ctld()
            t0 = time.time()
            c.start_emu(RUN_MS)
            c.wait_registered(0)
            say(f"== N={n}: first registration of every node {time.time() - t0:.2f} s")
            if "storm" in SECTIONS:
                sec_storm(c)
            if "idle" in SECTIONS:
                sec_idle(c)
            if "cli" in SECTIONS:
                latency(c, "idle cluster")
            if "e2e" in SECTIONS:
                sec_e2e(c)
            if "cycle" in SECTIONS:
                sec_cycle(c)
        finally:
            c.stop()
    print("\n| nodes | measurement | unit | median [min-max] |\n|---|---|---|---|")
    for n, what, unit, v in RESULTS:
        print(f"| {n:,} | {what} | {unit} | {fmt(v)} (n={len(v)}) |")


if __name__ == "__main__":
    main()

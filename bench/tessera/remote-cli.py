#!/usr/bin/env python3
"""Tessera's commands from a login node vs on the controller's host, beside the process-start
floor (issue 20 §1). Tessera only: bench/run-vs-slurm's `remote` section puts the same figures
beside Slurm's. One command:

    BUILD=build bench/tessera/remote-cli.py          # N=1000 REPS=3 LAT_REPS=10

Sets up (bench/tessera/setup.sh, 1 node) two clusters in turn, plaintext and TLS=1, each with a
login config (etc/login.conf: no controller socket, the controller at 127.0.0.2, a second
loopback address standing in for the login node). Without TLS the login node's commands take
ctld's TCP wire (ControllerWirePort, munge per request) and, with TESSERA_NO_WIRE=1, gRPC +
munge; with TLS, gRPC + munge + TLS. Per repetition, in this order: the floor
(tessera-bench-noop, a static do-nothing program, the same shell loop), `tbatch -Q --hold
--wrap=true` N times on the local path (Unix socket), the same on the remote path(s). Then
tqueue / tacct -j / tcancel latency on every path. Wall time and the CPU
time of the loop's processes (user+sys of the children), and the load average, per figure.
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import time

E = os.environ.get
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.join(os.path.abspath(E("BUILD", os.path.join(ROOT, "build"))), "bin")
BASE = E("BASE", "/tmp/tessera-remote-cli")
N = int(E("N", "1000"))
REPS = int(E("REPS", "3"))
LAT_REPS = int(E("LAT_REPS", "10"))
PORT = E("PORT", "37817")
ROWS = []


def say(m):
    print(time.strftime("%H:%M:%S ") + m, flush=True)


def load():
    return open("/proc/loadavg").read().split()[0]


def timed(cmd, env):
    """(wall s, CPU s of the children) of one shell command."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run(["bash", "-c", cmd], env=env, cwd=os.path.join(BASE, "jobs"),
                       capture_output=True, text=True)
    t1 = time.time()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd}: {p.stderr[-500:]}")
    return t1 - t0, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def row(what, unit, vals, cpu=None):
    med = lambda v: f"{statistics.median(v):.3g} [{min(v):.3g}-{max(v):.3g}]"
    ROWS.append((what, unit, med(vals), med(cpu) if cpu else "", load()))
    say(f"RESULT {what} [{unit}]: {med(vals)}" + (f"; CPU {med(cpu)} ms" if cpu else "") +
        f" (load {load()})")


def cluster(tls):
    env = dict(os.environ, BIN=BIN, BASE=BASE, NNODES="1", TESSERA_CTLD_PORT=PORT,
               TESSERA_NODE_PORT0=str(int(PORT) + 1), TLS="1" if tls else "0")
    subprocess.run([os.path.join(ROOT, "bench", "tessera", "stop.sh")], env=env,
                   capture_output=True)
    subprocess.run(["rm", "-rf", BASE])
    subprocess.run([os.path.join(ROOT, "bench", "tessera", "setup.sh")], env=env, check=True,
                   capture_output=True)
    local = dict(env, TESSERA_CONF=os.path.join(BASE, "etc", "tessera.conf"))
    remote = dict(env, TESSERA_CONF=os.path.join(BASE, "etc", "login.conf"))
    grpc = dict(remote, TESSERA_NO_WIRE="1")
    return env, local, remote, grpc


def record_frame(local):
    """The local-socket frame of one `tbatch -Q --hold --wrap=true`, recorded with strace, as
    the command line of tessera-bench-replay; None (no row) without strace or the replay tool."""
    tool = os.path.join(BIN, "tessera-bench-replay")
    if not os.path.exists(tool) or subprocess.run(["which", "strace"], capture_output=True).returncode:
        say("no strace or tessera-bench-replay: the lightest-client row is left out")
        return None
    p = subprocess.run(["strace", "-e", "trace=connect,sendmsg", "-xx", "-s", "65536", f"{BIN}/tbatch", "-Q",
                        "--hold", "--wrap=true"], env=local, capture_output=True, text=True,
                       cwd=os.path.join(BASE, "jobs"))
    unhex = lambda h: bytes.fromhex(h.replace("\\x", ""))  # strace -xx: every byte as \xNN
    line = next(l for l in p.stderr.splitlines() if l.startswith("sendmsg("))
    data = b"".join(unhex(h) for h in re.findall(r'iov_base="((?:\\x[0-9a-f]{2})*)"', line))
    sock = unhex(re.search(r'sun_path="([^"]+)"', p.stderr).group(1)).decode()  # tbatch's socket
    frame = os.path.join(BASE, "submit.frame")
    with open(frame, "wb") as f:
        f.write(data)
    return f"{tool} {sock} {frame}"


def measure(tls):
    env, local, remote, grpc = cluster(tls)
    tag = "TLS" if tls else "no TLS"
    # Without TLS, "remote" is the TCP wire and "grpc" gRPC + munge; with TLS, only gRPC.
    paths = [("local", local), ("remote", remote)] + ([] if tls else [("grpc", grpc)])
    label = {"local": "local (Unix socket)", "grpc": "remote (gRPC + munge, no TLS)",
             "remote": "remote (gRPC + munge, TLS)" if tls else "remote (TCP wire + munge)"}
    loop = lambda prog: (f"for _ in $(seq {N}); do {prog} -Q --hold --wrap=true >/dev/null; "
                         "done")
    replay = None if tls else record_frame(local)
    rates = {k: [] for k in ["floor"] + (["replay"] if replay else []) + [p for p, _ in paths]}
    cpus = {k: [] for k in rates}
    for rep in range(REPS):
        for k, prog, e in [("floor", f"{BIN}/tessera-bench-noop", local)] + (
                [("replay", replay, local)] if replay else []) + [
                (p, f"{BIN}/tbatch", e) for p, e in paths]:
            if k == "floor" and tls:
                continue
            w, c = timed(loop(prog) if k != "replay" else
                         f"for _ in $(seq {N}); do {prog}; done", e)
            rates[k].append(N / w)
            cpus[k].append(c * 1000 / N)
        subprocess.run([f"{BIN}/tcancel", "-u", "root"], env=local, capture_output=True)
        say(f"   {tag} rep{rep + 1}: " + ", ".join(f"{k} {statistics.mean(v[-1:]):.0f}/s"
                                                     for k, v in rates.items() if v))
    if not tls:
        row(f"process-start floor (static do-nothing), N={N}", "runs/s", rates["floor"],
            cpus["floor"])
        row(f"tbatch local (Unix socket), N={N}", "jobs/s", rates["local"], cpus["local"])
        row("tbatch local as % of the floor", "%",
            [100 * a / b for a, b in zip(rates["local"], rates["floor"])])
        if replay:
            row(f"lightest local client (tessera-bench-replay: tbatch's request replayed), N={N}",
                "jobs/s", rates["replay"], cpus["replay"])
            row("lightest local client as % of the floor", "%",
                [100 * a / b for a, b in zip(rates["replay"], rates["floor"])])
    for p, _ in paths:
        if p != "local":
            row(f"tbatch {label[p]}, N={N}", "jobs/s", rates[p], cpus[p])
    timed(f"for _ in $(seq 100); do {BIN}/tbatch -Q --hold --wrap=true >/dev/null; done", local)
    ids = subprocess.run([f"{BIN}/tqueue", "-h", "-o", "%i"], env=local, capture_output=True,
                         text=True).stdout.split()
    for name, cmd in (("tqueue (100 pending)", f"{BIN}/tqueue"),
                      ("tacct -X -j one job", f"{BIN}/tacct -X -j {{id}}"),
                      ("tcancel one job", f"{BIN}/tcancel {{id}}")):
        for path, e in paths:
            if path == "local" and tls:
                continue
            ws, cs = [], []
            for _ in range(LAT_REPS):
                w, c = timed(cmd.format(id=ids.pop()) + " >/dev/null", e)
                ws.append(w * 1000)
                cs.append(c * 1000)
            row(f"{name}, {label[path]}", "ms", ws, cs)
    subprocess.run([os.path.join(ROOT, "bench", "tessera", "stop.sh")], env=env,
                   capture_output=True)


def main():
    say(f"binaries {BIN}, N={N}, reps {REPS}, load {load()}")
    measure(tls=False)
    measure(tls=True)
    print("\n| measurement | unit | median [min-max] | CPU ms per command | load |\n"
          "|---|---|---|---|---|")
    for r in ROWS:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    sys.exit(main())

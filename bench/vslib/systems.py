"""The two systems under test, behind one interface: setup, fresh controller, submission,
listing, release. Slurm via its CLI and bench/slurm/; Tessera via its CLI, bench/tessera/ and the
load client."""
import glob
import os
import re
import shutil
import signal
import subprocess
import time

from vslib.config import API_C, BASE, BIN, BUILD, HERE, ROOT
from vslib.util import alive, children_cpu_s, now, read_pid, say, set_aside, sh, wait_dead

class System:
    """What the harness needs from one batch system. Subclasses fill in the commands."""
    name = ""
    submit_cmd = ""   # the CLI submit command
    queue_cmd = ""
    base = ""
    scripts = ""        # bench/<scripts>/setup.sh and stop.sh
    ctld_pid_file = ""  # under <base>/run
    node_pid_glob = ""  # under <base>/run

    def __init__(self):
        self.jobs = os.path.join(self.base, "jobs")

    # --- lifecycle
    def setup(self, extra_env=None):
        sh([os.path.join(HERE, self.scripts, "setup.sh")], env=dict(self.env(), **(extra_env or {})),
           capture=False)

    def stop(self):
        sh([os.path.join(HERE, self.scripts, "stop.sh")], env=self.env(), check=False,
           capture=False)

    def ctld_pid(self):
        return read_pid(os.path.join(self.base, "run", self.ctld_pid_file))

    def node_pids(self):
        return [read_pid(f) for f in glob.glob(os.path.join(self.base, "run", self.node_pid_glob))]

    def ping_ok(self):
        raise NotImplementedError

    def start_ctld(self, clean):
        raise NotImplementedError

    def wait_nodes_idle(self):
        raise NotImplementedError

    def wait_ping(self, timeout=120, interval=0.01):
        t = now()
        while now() - t < timeout:
            if self.ping_ok():
                return now()
            time.sleep(interval)
        raise RuntimeError(f"{self.name}: controller did not answer within {timeout} s")

    def restart_ctld(self, sig=signal.SIGTERM, clean=True):
        """Stops the controller with `sig` and starts it again (clean: empty state). Returns
        seconds from the start command until the controller answers a ping."""
        pid = self.ctld_pid()
        if alive(pid):
            os.kill(pid, sig)
            wait_dead(pid)
        t0 = now()
        self.start_ctld(clean)
        return self.wait_ping() - t0

    def fresh(self):
        """An empty controller, all nodes idle, no job output files: the previous ones are moved
        aside (set_aside), not deleted, until drop_old_outputs() at the end of the run."""
        self.restart_ctld(signal.SIGTERM, clean=True)
        self.wait_nodes_idle()
        set_aside(self.jobs, os.path.join(self.base, "old-outputs"))

    def drop_old_outputs(self):
        shutil.rmtree(os.path.join(self.base, "old-outputs"), ignore_errors=True)

    # --- use
    def env(self):
        raise NotImplementedError

    def run(self, cmd, **kw):
        return sh(cmd, env=self.env(), cwd=self.jobs, **kw)

    def ids(self, extra=""):
        p = self.run(f"{self.queue_cmd} -h -o %i {extra}", check=False)
        if p.returncode != 0:
            return None
        return [int(x) for x in p.stdout.split() if x.strip().isdigit()]

    def release(self, ids):
        raise NotImplementedError

    def submit_cli(self, P, n, extra):
        """n jobs `submit_cmd -Q EXTRA --wrap=true` from P parallel shell loops; seconds."""
        per = n // P
        loop = (f"for _ in $(seq {per}); do {self.submit_cmd} -Q {extra} --wrap=true "
                f">/dev/null || echo submit failed >&2; done")
        script = " ".join(f"( {loop} ) &" for _ in range(P)) + " wait"
        t0, c0 = now(), children_cpu_s()
        p = self.run(script, check=False)
        el = now() - t0
        self.last_cpu_s = children_cpu_s() - c0  # the loops' processes: user+sys
        fails = p.stderr.count("submit failed")
        if fails:
            say(f"   WARN {self.name}: {fails} submissions failed: {p.stderr[-300:]}")
        return el

    def fill_held(self, n):
        """n held `true` jobs as fast as this system can take them; seconds."""
        return self.submit_cli(4, n, "--hold")

    def burst(self, n):
        """n sequential held submissions with --parsable; returns the acknowledged ids."""
        p = self.run(f"for _ in $(seq {n}); do {self.submit_cmd} --parsable --hold --wrap=true; done",
                     check=False)
        return [int(x.split(";")[0]) for x in p.stdout.split() if x.split(";")[0].isdigit()]


class Slurm(System):
    name = "Slurm"
    submit_cmd = "sbatch"
    queue_cmd = "squeue"
    base = os.path.join(BASE, "slurm")
    scripts, ctld_pid_file, node_pid_glob = "slurm", "slurmctld.pid", "slurmd-*.pid"

    def __init__(self):
        super().__init__()
        self.conf = os.path.join(self.base, "slurm.conf")

    def env(self):
        return dict(os.environ, SLURM_CONF=self.conf, BASE=self.base)

    def ping_ok(self):
        p = self.run("scontrol ping", check=False)
        return "is UP" in p.stdout

    def start_ctld(self, clean):
        if clean:
            for f in glob.glob(os.path.join(self.base, "state", "*")):
                shutil.rmtree(f) if os.path.isdir(f) else os.unlink(f)
            self.run(f"slurmctld -f {self.conf} -i -c")
        else:
            self.run(f"slurmctld -f {self.conf}")

    def wait_nodes_idle(self):
        for _ in range(600):
            p = self.run("sinfo -h -N -t idle -o %N", check=False)
            if len(p.stdout.split()) >= 16:
                return
            time.sleep(0.1)
        say("   WARN Slurm: nodes not idle")

    def release(self, ids):
        self.run(f"scontrol release {','.join(map(str, ids))}")

    def version(self):
        return self.run("sinfo -V", check=False).stdout.strip()


class Tessera(System):
    name = "Tessera"
    submit_cmd = "tbatch"
    queue_cmd = "tqueue"
    base = os.path.join(BASE, "tessera")
    scripts, ctld_pid_file, node_pid_glob = "tessera", "ctld.pid", "noded-*.pid"

    def __init__(self):
        super().__init__()
        self.conf = os.path.join(self.base, "etc", "tessera.conf")
        self.loader = os.path.join(BIN, "tessera-bench-submit")

    # True: commands as from a login node (etc/login.conf: the TCP wire + munge, issue 20 §1);
    # "grpc": the same with TESSERA_NO_WIRE=1 (gRPC + munge, the path before the wire).
    remote = False

    def env(self):
        conf = os.path.join(self.base, "etc", "login.conf") if self.remote else self.conf
        extra = {"TESSERA_NO_WIRE": "1"} if self.remote == "grpc" else {}
        return dict(os.environ, TESSERA_CONF=conf, BASE=self.base, BIN=BIN,
                    PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}", **extra)

    def setup(self, cgroups=False):
        super().setup({"CGROUPS": "1" if cgroups else "0"})

    def ping_ok(self):
        return self.run(f"{BIN}/tcontrol ping", check=False).returncode == 0

    def start_ctld(self, clean):
        if clean:
            for f in glob.glob(os.path.join(self.base, "state", "*")):
                shutil.rmtree(f) if os.path.isdir(f) else os.unlink(f)
        log = open(os.path.join(self.base, "log", "ctld.log"), "ab")
        p = subprocess.Popen([f"{BIN}/tessera-ctld", "-f", self.conf], stdout=log,
                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env(), start_new_session=True)
        with open(os.path.join(self.base, "run", "ctld.pid"), "w") as f:
            f.write(f"{p.pid}\n")

    def wait_nodes_idle(self):
        for _ in range(600):
            p = self.run(f"{BIN}/tinfo -h -N", check=False)
            idle = {l.split()[0] for l in p.stdout.splitlines()
                    if len(l.split()) >= 4 and l.split()[3].rstrip("*") == "idle"}
            if len(idle) >= 16:
                return
            time.sleep(0.1)
        say("   WARN Tessera: nodes not idle")

    def release(self, ids):
        self.run(f"{BIN}/tcontrol release {','.join(map(str, ids))}")

    def api_submit(self, n, c, ids_out=None, hold=True, batch=1):
        """Runs the gRPC load client; returns its parsed summary line as a dict."""
        cmd = [self.loader, "-f", self.conf, "-n", str(n), "-c", str(c), "--batch", str(batch)]
        if ids_out:
            cmd += ["--ids-out", ids_out]
        if not hold:
            cmd.append("--no-hold")
        p = sh(cmd, env=self.env(), cwd=self.jobs, check=False)
        m = dict(re.findall(r"(\w+)=([\d.]+)", p.stdout))
        if p.returncode != 0:
            say(f"   WARN load client rc={p.returncode}: {p.stdout.strip()} {p.stderr.strip()[-300:]}")
        return {k: float(v) for k, v in m.items()}

    def fill_held(self, n):
        if os.path.exists(self.loader):
            t0 = now()
            # One job per call, as users' tbatch calls arrive (and as Slurm's sbatch fill). A bulk
            # fill is faster but leaves its transient request memory interleaved with the new
            # records (malloc cannot return those pages): RESULTS.md notes the difference.
            r = self.api_submit(n, API_C)
            if int(r.get("acked", 0)) == n:
                return now() - t0
        return self.submit_cli(4, n, "--hold")

    def version(self):
        rev = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], check=False).stdout.strip()
        dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                   check=False).stdout.strip()
        kind = "?"
        try:
            with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
                kind = next((l.split("=", 1)[1].strip() for l in f
                             if l.startswith("CMAKE_BUILD_TYPE:")), "?") or "default"
        except OSError:
            pass
        return f"tessera {rev}{' + uncommitted changes' if dirty else ''} ({kind} build in {BUILD})"

"""A real Tessera cluster for integration tests: a private munged, tessera-ctld and N
tessera-noded processes on loopback, each test cluster in its own temporary directory with its
own ports. Commands run as a given user through runuser, exactly as a person would run them."""
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TESSERA_BUILD_DIR", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bin")
TEST_USERS = ("tessera-alice", "tessera-bob")


def ensure_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
        return pwd.getpwnam(name)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_for(pred, timeout=20.0, interval=0.1, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Cluster:
    def __init__(self, nodes=2, tls=False, node_timeout=30, extra_conf="", node_extra="", gres=""):
        self.dir = tempfile.mkdtemp(prefix="tessera-it-")
        os.chmod(self.dir, 0o755)
        self.nodes = [f"it{i + 1}" for i in range(nodes)]
        ports = free_ports(nodes + 1)
        self.ctld_port, self.node_ports = ports[0], ports[1:]
        self.tls = tls
        self.node_timeout = node_timeout
        self.extra_conf = extra_conf
        self.node_extra = node_extra  # appended to every NodeName line (e.g. "Gres=gpu:a100:2")
        self.gres = gres              # gres.conf text ("" = none)
        self.procs = {}
        self.munged_pid = None
        self.conf = os.path.join(self.dir, "etc", "tessera.conf")

    # ---- setup -------------------------------------------------------------------------
    def start(self):
        self._start_munged()
        if self.tls:
            self._make_tls()
        self.write_config()
        self.start_ctld()
        for n in self.nodes:
            self.start_noded(n)
        self.wait_nodes_up()
        return self

    def _start_munged(self):
        d = os.path.join(self.dir, "munge")
        os.makedirs(d)
        os.chmod(d, 0o755)
        key = os.path.join(d, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(d, "sock")
        subprocess.run(["munged", "-f", f"--key-file={key}", f"--socket={self.munge_socket}",
                        f"--pid-file={d}/pid", f"--log-file={d}/log", f"--seed-file={d}/seed"],
                       check=True)
        wait_for(lambda: os.path.exists(self.munge_socket), what="munged socket")
        with open(f"{d}/pid") as f:
            self.munged_pid = int(f.read().strip())

    def _make_tls(self):
        d = os.path.join(self.dir, "tls")
        os.makedirs(d)
        q = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": True}
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2", "-subj", "/CN=test CA"], **q)
        subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{d}/server.key",
                        "-out", f"{d}/server.csr", "-subj", "/CN=localhost"], **q)
        with open(f"{d}/san.ext", "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        subprocess.run(["openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem",
                        "-CAkey", f"{d}/ca.key", "-CAcreateserial", "-out", f"{d}/server.pem",
                        "-days", "2", "-extfile", f"{d}/san.ext"], **q)
        os.chmod(f"{d}/ca.pem", 0o644)

    def write_config(self, text=None):
        os.makedirs(os.path.dirname(self.conf), exist_ok=True)
        if text is None:
            text = self.default_config()
        with open(self.conf, "w") as f:
            f.write(text)
        os.chmod(self.conf, 0o644)
        if self.gres:
            gres = os.path.join(os.path.dirname(self.conf), "gres.conf")
            with open(gres, "w") as f:
                f.write(self.gres)
            os.chmod(gres, 0o644)

    def default_config(self):
        tls = ""
        if self.tls:
            d = os.path.join(self.dir, "tls")
            tls = f"TlsCertFile={d}/server.pem\nTlsKeyFile={d}/server.key\nTlsCaFile={d}/ca.pem\n"
        nodes = "\n".join(
            f"NodeName={n} NodeAddr=127.0.0.1 Port={p} CPUs=2 RealMemory=2048 {self.node_extra}"
            for n, p in zip(self.nodes, self.node_ports))
        return (f"ClusterName=it\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort={self.ctld_port}\n"
                f"StateSaveLocation={self.dir}/state\nSlurmdSpoolDir={self.dir}/spool/%n\n"
                f"AuthInfo=socket={self.munge_socket}\n{tls}"
                f"SlurmdTimeout={self.node_timeout}\nHeartbeatInterval=1\nKillWait=1\n"
                f"SchedulerInterval=1\nMinJobAge=600\n{self.extra_conf}\n{nodes}\n"
                f"PartitionName=debug Nodes={','.join(self.nodes)} Default=YES MaxTime=1:00:00 "
                f"DefaultTime=10:00 State=UP\n")

    def _spawn(self, key, argv):
        log = open(os.path.join(self.dir, f"{key}.log"), "ab")
        self.procs[key] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           env=self.env(), start_new_session=True)
        return self.procs[key]

    def start_ctld(self):
        self._spawn("ctld", [f"{BIN}/tessera-ctld", "-f", self.conf])
        wait_for(lambda: self.run(["tcontrol", "ping"], check=False).returncode == 0,
                 what="tessera-ctld to answer")

    def start_noded(self, node):
        self._spawn(f"noded-{node}", [f"{BIN}/tessera-noded", "-N", node, "-f", self.conf])

    def wait_nodes_up(self, timeout=20):
        def up():
            states = self.node_states()
            return all(states.get(n, "").rstrip("*") in ("idle", "mix", "alloc") for n in self.nodes)
        wait_for(up, timeout=timeout, what="all nodes to register")

    def node_states(self):
        """{node: sinfo-style state} from `tinfo -N -h` (NODELIST NODES PARTITION STATE)."""
        out = self.run(["tinfo", "-h", "-N"], check=False).stdout
        return {f[0]: f[3] for f in (line.split() for line in out.splitlines()) if len(f) >= 4}

    def kill(self, key, sig=signal.SIGTERM):
        p = self.procs.get(key)
        if p and p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop(self):
        for key in list(self.procs):
            self.kill(key, signal.SIGKILL if key.startswith("noded") else signal.SIGTERM)
        # Jobs outlive noded by design (stepd); stop whatever a test left running.
        subprocess.run(["pkill", "-KILL", "-f", f"tessera-stepd.*{self.dir}"], check=False)
        # and job shells still running from this cluster's spool (their scripts live there)
        subprocess.run(["pkill", "-KILL", "-f", f"{self.dir}/spool/"], check=False)
        self._remove_cgroup_pools()
        if self.munged_pid:
            try:
                os.kill(self.munged_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if os.environ.get("TESSERA_KEEP_TEST_DIRS") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)

    def _remove_cgroup_pools(self):
        """Issue 20 §2: stepds keep released v1 job cgroups in a pool (noded/cgroup.h) that noded
        removes when it stops, but stop() SIGKILLs noded: remove the pools (and each node's then
        empty cgroup parent, "tessera/<node>-<FNV-1a of its spool dir>") here."""
        for node in self.nodes:
            h = 2166136261
            for ch in f"{self.dir}/spool/{node}".encode():
                h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
            for parent in glob.glob(f"/sys/fs/cgroup/*/tessera/{node}-{h:08x}"):
                # A pooled cgroup keeps the batch script's accounting child (memory, cpuacct):
                # children first.
                pools = glob.glob(f"{parent}/pool_*")
                for d in [c for p in pools for c in glob.glob(f"{p}/*/")] + pools + [parent]:
                    try:
                        os.rmdir(d)
                    except OSError:
                        pass

    # ---- using it ----------------------------------------------------------------------
    def env(self, extra=None):
        e = {"PATH": f"{BIN}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TESSERA_CONF": self.conf,
             "HOME": "/root", "LANG": "C.UTF-8"}
        if extra:
            e.update(extra)
        return e

    def run(self, argv, user=None, check=True, cwd=None, input=None, timeout=60, env=None):
        """Runs a command (a t* command by name) as `user` (root when None)."""
        argv = list(argv)
        if os.path.basename(argv[0]) == argv[0] and os.path.exists(os.path.join(BIN, argv[0])):
            argv[0] = os.path.join(BIN, argv[0])
        e = self.env(env)
        if user:
            pw = pwd.getpwnam(user)
            e.update({"HOME": pw.pw_dir, "USER": user, "LOGNAME": user})
            argv = ["runuser", "-u", user, "--", "env"] + [f"{k}={v}" for k, v in e.items()] + argv
        p = subprocess.run(argv, capture_output=True, text=True, cwd=cwd or self.dir, env=e,
                           input=input, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"{argv} failed ({p.returncode}):\nstdout: {p.stdout}\nstderr: {p.stderr}")
        return p

    def submit(self, args, user=None, cwd=None, input=None):
        p = self.run(["tbatch", "--parsable"] + list(args), user=user, cwd=cwd, input=input)
        return int(p.stdout.strip().split(";")[0])

    def acct_state(self, job_id):
        p = self.run(["tacct", "-n", "-X", "-P", "-j", str(job_id), "-o", "JobID,State,ExitCode"],
                     check=False)
        for line in p.stdout.splitlines():
            f = line.split("|")
            if f and f[0] == str(job_id):
                # the state name only: sacct writes "CANCELLED by <uid>" (tests that check the
                # canceller read State themselves)
                return f[1].split(" by ")[0], f[2]
        return None, None

    def wait_state(self, job_id, states, timeout=30):
        states = (states,) if isinstance(states, str) else tuple(states)
        def done():
            st, code = self.acct_state(job_id)
            return (st, code) if st and st.split()[0] in states else None
        return wait_for(done, timeout=timeout, what=f"job {job_id} to reach {states}")

    def user_dir(self, user):
        """A working directory owned by `user` inside the cluster dir."""
        d = os.path.join(self.dir, "work", user)
        os.makedirs(d, exist_ok=True)
        pw = pwd.getpwnam(user)
        os.chown(d, pw.pw_uid, pw.pw_gid)
        return d


# --- Shared by test_preempt.py and test_preempt_gaps.py (issue 16 §4) ---------------------

def running_cluster(**kw):
    """A module fixture's body: `yield from running_cluster(nodes=1, extra_conf=CONF)`."""
    c = Cluster(**kw)
    try:
        yield c.start()
    finally:
        c.stop()


def job_state(c, job):
    """The job's state as tqueue prints it (%T), any state."""
    return c.run(["tqueue", "-h", "-t", "all", "-j", str(job), "-o", "%T"]).stdout.strip()


def job_events(c, job):
    return c.run(["tcontrol", "show", "job", str(job), "--events"]).stdout


def file_words(path):
    """The words of a file a job writes; [] while it does not exist."""
    try:
        with open(path) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def install_slurm_names(cluster, name="slurm-names"):
    """scripts/install-slurm-compat into <cluster dir>/<name> (mode 0755: a job's user reaches
    it); returns its bin directory."""
    prefix = os.path.join(cluster.dir, name)
    os.makedirs(prefix, mode=0o755, exist_ok=True)
    os.chmod(prefix, 0o755)
    env = dict(os.environ, TESSERA_BUILD_DIR=os.path.dirname(BIN))
    p = subprocess.run([os.path.join(ROOT, "scripts", "install-slurm-compat"), prefix],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return os.path.join(prefix, "bin")

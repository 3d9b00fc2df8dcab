"""Hosts made of Linux namespaces, for test_multihost.py (issue 21 §2).

A Host is a network namespace (its own address on a private bridge that lives in a separate
"switch" namespace, so no traffic reaches the machine's own network) plus a mount and UTS
namespace held open by an anchor process (`sleep infinity`). Inside it:
  - the hostname is the host's name;
  - /run and /tmp are fresh tmpfs (as after a boot);
  - /etc/tessera, /etc/munge, /var/lib/munge, /var/log/munge, /var/lib/tessera,
    /var/log/tessera, /var/spool/tessera, /var/backups and /etc/hosts are private bind mounts of directories
    under the test's work directory;
  - everything else (the packages installed in /usr, /etc/passwd, /home) is the machine's own
    root file system, shared by every host: like a site whose hosts run the same image with
    NSS/LDAP users and NFS homes.

Units are "started" as systemd would start them, without systemd (it is not PID 1 here):
`start_unit` reads the installed unit file and runs its ExecStart= line (with %H, $OPTIONS,
User=, Group=, RuntimeDirectory=, StateDirectory=, LogsDirectory=, PIDFile= honoured; the
sandboxing options are not applied). Steps of docs/admin-guide.md are run as written:
`guide_step(name)` returns the shell block under `<!-- multihost-step: name -->`; its
`systemctl` lines go to a shim that records the request, and the test starts the units.
"""
import grp
import os
import pwd
import re
import shlex
import signal
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GUIDE = os.path.join(ROOT, "docs", "admin-guide.md")
UNIT_DIR = "/lib/systemd/system"
PRIVATE_DIRS = ("/etc/tessera", "/etc/munge", "/var/lib/munge", "/var/log/munge",
                "/var/lib/tessera", "/var/log/tessera", "/var/spool/tessera", "/var/backups")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def sh(cmd, check=True, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=check, text=True,
                          capture_output=True, **kw)


def guide_step(name):
    """The shell block that follows `<!-- multihost-step: NAME -->` in the admin guide."""
    text = open(GUIDE).read()
    m = re.search(r"<!-- multihost-step: " + re.escape(name) + r" -->\s*```sh\n(.*?)```",
                  text, re.S)
    if not m:
        raise AssertionError(f"docs/admin-guide.md has no step '{name}'")
    return m.group(1)


def parse_unit(path, hostname):
    """The [Service] keys of a unit file that start_unit honours (last value wins)."""
    keys = {}
    section = None
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
            continue
        if section != "[Service]" or "=" not in line:
            continue
        k, v = line.split("=", 1)
        keys[k.strip()] = v.strip().replace("%H", hostname).replace("%%", "%")
    return keys


class Network:
    """The private switch: a bridge in its own network namespace."""

    def __init__(self, tag, prefix="10.77.0"):
        self.tag, self.prefix = tag, prefix
        self.ns = f"th{tag}-sw"
        sh(["ip", "netns", "add", self.ns])
        sh(["ip", "-n", self.ns, "link", "add", "br0", "type", "bridge"])
        sh(["ip", "-n", self.ns, "link", "set", "br0", "up"])

    def remove(self):
        sh(["ip", "netns", "del", self.ns], check=False)


class Host:
    @classmethod
    def this_machine(cls, work):
        """This machine itself (no namespaces): for the guide's install step."""
        h = cls.__new__(cls)
        h.name, h.dir, h.procs = "machine", work, []
        h.enter = lambda: []
        return h

    def __init__(self, net, index, name, work):
        self.net, self.name = net, name
        self.addr = f"{net.prefix}.{index}"
        self.ns = f"th{net.tag}-{index}"
        self.dir = os.path.join(work, name)
        self.procs = []  # (what, Popen) for daemons started in this host
        os.makedirs(self.dir, exist_ok=True)
        sh(["ip", "netns", "add", self.ns])
        host_end, sw_end = f"th{net.tag}h{index}", f"th{net.tag}s{index}"
        sh(["ip", "link", "add", host_end, "type", "veth", "peer", "name", sw_end])
        sh(["ip", "link", "set", host_end, "netns", self.ns])
        sh(["ip", "link", "set", sw_end, "netns", net.ns])
        sh(["ip", "-n", net.ns, "link", "set", sw_end, "master", "br0", "up"])
        sh(["ip", "-n", self.ns, "link", "set", host_end, "name", "eth0"])
        sh(["ip", "-n", self.ns, "addr", "add", f"{self.addr}/24", "dev", "eth0"])
        sh(["ip", "-n", self.ns, "link", "set", "eth0", "up"])
        sh(["ip", "-n", self.ns, "link", "set", "lo", "up"])

    def boot(self, hosts_file):
        """Private mounts and hostname, held by the anchor process; then tmpfiles.d, as at boot."""
        binds = []
        for path in PRIVATE_DIRS:
            src = os.path.join(self.dir, "fs" + path.replace("/", "_"))
            os.makedirs(src, exist_ok=True)
            if os.path.isdir(path):  # a fresh host: the packages' own owners and modes
                st = os.stat(path)
                os.chown(src, st.st_uid, st.st_gid)
                os.chmod(src, st.st_mode & 0o7777)
            binds.append(f"mount --bind {shlex.quote(src)} {path}")
        script = " && ".join(
            [f"hostname {self.name}", "mount -t tmpfs -o mode=0755 tmpfs /run",
             "mount -t tmpfs -o mode=1777 tmpfs /tmp",
             f"mount --bind {shlex.quote(hosts_file)} /etc/hosts"] + binds +
            ["echo ready", "exec sleep infinity"])
        # nsenter, not `ip netns exec`: that one mounts a fresh /sys, without the cgroup
        # file systems noded needs.
        self.anchor = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{self.ns}", "unshare", "--mount", "--uts",
             "--propagation", "private", "--", "sh", "-c", script],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        line = self.anchor.stdout.readline().strip()
        if line != "ready":
            raise AssertionError(f"host {self.name} did not boot: {self.anchor.stderr.read()}")
        # The anchor exec'd sleep in the namespaces: its pid is the host's "init".
        self.run("systemd-tmpfiles --create tessera.conf tessera-controller.conf tessera-node.conf"
                 " 2>/dev/null || true")

    def enter(self):
        return ["nsenter", "-t", str(self.anchor.pid), "-n", "-m", "-u", "--"]

    def run(self, script, user=None, cwd=None, check=True, env=None, timeout=120):
        """Runs a bash script in this host (as `user` when given); returns CompletedProcess."""
        e = {"PATH": PATH, "HOME": "/root", "LANG": "C.UTF-8"}
        if user:
            pw = pwd.getpwnam(user)
            e.update({"HOME": pw.pw_dir, "USER": user, "LOGNAME": user})
        e.update(env or {})
        prefix = f"cd {shlex.quote(cwd)}\n" if cwd else ""
        argv = self.enter()
        if user:
            argv += ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}",
                     "--init-groups", "--"]
        argv += ["env", "-i"] + [f"{k}={v}" for k, v in e.items()] + \
            ["bash", "-euo", "pipefail", "-c", prefix + script]
        p = subprocess.run(argv, text=True, capture_output=True, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"[{self.name}] `{script.strip()}` exited {p.returncode}:\n"
                                 f"{p.stdout}\n{p.stderr}")
        return p

    def run_step(self, name, cwd, env=None):
        """Runs the admin guide's step `name` here; returns the units its systemctl lines named."""
        log = os.path.join(self.dir, f"systemctl-{name}.log")
        shim = (f"systemctl() {{ echo \"$*\" >> {shlex.quote(log)}; }}\n")
        self.run(shim + guide_step(name), cwd=cwd, env=env)
        units = []
        if os.path.exists(log):
            for line in open(log):
                words = line.split()
                if words and words[0] in ("start", "restart", "enable"):
                    units += [w.removesuffix(".service") for w in words[1:] if not w.startswith("-")]
        return units

    def start_unit(self, unit):
        """Starts `unit` as systemd would (see the module docstring)."""
        keys = parse_unit(os.path.join(UNIT_DIR, unit + ".service"), self.name)
        user, group = keys.get("User", "root"), keys.get("Group")
        for kind, base in (("RuntimeDirectory", "/run"), ("StateDirectory", "/var/lib"),
                           ("LogsDirectory", "/var/log")):
            if kind in keys:
                mode = keys.get(kind + "Mode", "0755")
                self.run(f"install -d -m {mode} -o {user} -g {group or user} {base}/{keys[kind]}")
        cmd = keys["ExecStart"].lstrip("-@+!").replace("$OPTIONS", "").strip()
        log = os.path.join(self.dir, f"{unit}.log")
        argv = self.enter()
        if user != "root":
            gid = grp.getgrnam(group).gr_gid if group else pwd.getpwnam(user).pw_gid
            argv += ["setpriv", f"--reuid={user}", f"--regid={gid}", "--init-groups", "--"]
        argv += ["env", "-i", f"PATH={PATH}", "LANG=C.UTF-8"] + shlex.split(cmd)
        with open(log, "ab") as out:
            p = subprocess.Popen(argv, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        if keys.get("Type") == "forking":
            if p.wait(timeout=30) != 0:
                raise AssertionError(f"[{self.name}] {unit}: {cmd} exited {p.returncode}: "
                                     + open(log).read())
            return None
        self.procs.append((unit, p))
        return p

    def stop_unit(self, unit, timeout=60):
        """SIGTERM to the unit's main process (KillMode=process: only that one), then wait."""
        for what, p in list(self.procs):
            if what == unit and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=timeout)
            if what == unit:
                self.procs.remove((what, p))

    def log(self, unit):
        path = os.path.join(self.dir, f"{unit}.log")
        return open(path, errors="replace").read() if os.path.exists(path) else ""

    def kill_all(self):
        """Ends every process in this host's network namespace (ours only), then the host."""
        for _ in range(50):
            pids = sh(["ip", "netns", "pids", self.ns], check=False).stdout.split()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            time.sleep(0.1)
        for _, p in self.procs:
            p.poll()
        sh(["ip", "netns", "del", self.ns], check=False)

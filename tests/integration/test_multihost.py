"""A multi-host cluster from the Debian packages, set up by following docs/admin-guide.md
(issue 21 §2).

What it does, in order:
  1. builds the packages (scripts/package) and installs them with the guide's `apt-get install`
     lines ("Install from packages");
  2. creates four hosts from Linux namespaces (tests/integration/multihost.py), named
     mh<tag>-<role>: `ctl` (the
     controller), `node1`, `node2` (compute nodes) and `login` (commands only), each with its own
     address on a private bridge (10.77.0.0/24, the bridge in a namespace of its own: no traffic
     reaches this machine's network), its own hostname, /run, /tmp, /etc/hosts, /etc/tessera,
     /etc/munge, munge and Tessera state, log and spool directories;
  3. runs the guide's steps as written (the shell blocks marked `multihost-step`): one munge key
     made once and installed on every host; a site CA and one certificate per host naming its
     host name and address; tessera.conf on every host; the units started (their ExecStart=
     lines, User=, RuntimeDirectory=..., since systemd is not PID 1 here);
  4. runs, as an ordinary user: a 2-node batch job submitted from the login host whose `trun`
     reaches the other node; `trun` from the login host across both nodes; a node daemon restart
     with a job running on it; a controller restart; then purges the packages and checks that
     nothing they installed or created is left.
Upgrades from an older version's packages: test_upgrade.py (the same hosts, `running_site`).

Shared between the hosts (one root file system, as hosts installed from one image): /usr (the
packages are installed once, on this machine, and purged at the end), /etc/passwd and /home (a
site's NSS/LDAP users and NFS homes: same uids everywhere). The test refuses to run when Tessera
packages are already installed here, and never removes what existed before it.
"""
import contextlib
import glob
import os
import re
import shutil
import subprocess
import time

import pytest

from harness import ROOT, BUILD, TEST_USERS, ensure_user, wait_for
from multihost import Host, Network, sh

USER = TEST_USERS[0]
PACKAGES = ("tessera-bridge", "tessera-slurm-compat", "tessera-client", "tessera-node",
            "tessera-controller", "tessera-common")
# Paths the packages create outside their file lists (postinst, tmpfiles.d).
CREATED = ("/var/lib/tessera", "/var/log/tessera", "/var/spool/tessera", "/etc/tessera",
           "/run/tessera", "/var/backups/tessera")
ROLES = ("ctl", "node1", "node2", "login")  # host names: mh<tag>-<role>


def _tools_missing():
    if os.geteuid() != 0:
        return "needs root (namespaces, packages)"
    for t in ("unshare", "nsenter", "ip", "setpriv", "apt-get", "dpkg-deb", "cpack", "munged",
              "mungekey", "openssl"):
        if not shutil.which(t):
            return f"needs {t}"
    if subprocess.run(["unshare", "--net", "--mount", "--uts", "true"]).returncode != 0:
        return "cannot create namespaces here"
    return None


pytestmark = pytest.mark.skipif(_tools_missing() is not None, reason=str(_tools_missing()))


def installed_packages():
    p = sh(["dpkg-query", "-W", "-f", "${Package} ${Status}\n"] + list(PACKAGES), check=False)
    return [l.split()[0] for l in p.stdout.splitlines() if "installed" in l and "not-installed" not in l]


def purge():
    """apt-get purge of the Tessera packages installed (naming one apt never saw is an error:
    tessera-bridge exists only where Go built it)."""
    return sh(["apt-get", "purge", "-y", "-q"] + (installed_packages() or ["--"]), check=False,
              env={"DEBIAN_FRONTEND": "noninteractive", "PATH": os.environ["PATH"]})


class Site:
    """The four hosts, the admin's work directory and the packages."""

    def __init__(self, work):
        self.work = work
        self.admin = os.path.join(work, "admin")  # the admin's directory ("scp" = shared fs)
        self.pkgdir = os.path.join(work, "packages")
        os.makedirs(self.admin, exist_ok=True)
        self.tag = str(os.getpid() % 100000)
        self.net = None
        self.hosts = {}
        self.preexisting = {p for p in CREATED if os.path.exists(p)}

    def host(self, role):
        return self.hosts[role]

    def name(self, role):
        return f"mh{self.tag}-{role}"

    def conf(self):
        h = self.hosts
        return f"""ClusterName=mh{self.tag}
SlurmctldHost=ctl({h['ctl'].addr})
SlurmctldPort=6817
StateSaveLocation=/var/lib/tessera
SlurmdSpoolDir=/var/spool/tessera/%n
TlsCertFile=/etc/tessera/tls/host.pem
TlsKeyFile=/etc/tessera/tls/host.key
TlsCaFile=/etc/tessera/tls/ca.pem
SlurmdTimeout=30
KillWait=5
MinJobAge=600
SchedulerInterval=1
SlurmUser=root
NodeName=DEFAULT CPUs=2 RealMemory=1000 Port=6818
NodeName={self.name('node1')} NodeAddr={h['node1'].addr}
NodeName={self.name('node2')} NodeAddr={h['node2'].addr}
PartitionName=batch Nodes={self.name('node1')},{self.name('node2')} Default=YES MaxTime=1:00:00 DefaultTime=10:00 State=UP
"""

    def teardown(self):
        for h in self.hosts.values():
            h.kill_all()
        if self.net:
            self.net.remove()
        # Job cgroups left by killed stepds: <controller>/tessera/<node>/... (nodes are ours).
        for d in sorted(glob.glob(f"/sys/fs/cgroup/*/tessera/mh{self.tag}-*/**/", recursive=True),
                        key=len, reverse=True):
            if os.path.isdir(d):
                subprocess.run(["rmdir", d], capture_output=True)


@contextlib.contextmanager
def running_site(work, pkgdir):
    """Installs the packages in `pkgdir` as the admin guide says, makes the four hosts and runs
    the guide's steps on them; yields the Site with both nodes IDLE. Afterwards: the hosts are
    gone and the packages purged (test_upgrade.py starts from an older version's packages)."""
    if installed_packages():
        pytest.skip("Tessera packages are installed on this machine already: not touching them")
    ensure_user(USER)
    s = Site(work)
    s.pkgdir = pkgdir
    try:
        # "Install from packages": the guide's apt-get lines, run once (one shared /usr).
        Host.this_machine(work).run_step("install", cwd=s.pkgdir,
                                         env={"DEBIAN_FRONTEND": "noninteractive"})
        s.net = Network(s.tag)
        hosts_file = os.path.join(work, "hosts")
        for i, role in enumerate(ROLES, start=1):
            s.hosts[role] = Host(s.net, i, s.name(role), work)
        with open(hosts_file, "w") as f:
            f.write("127.0.0.1 localhost\n" +
                    "".join(f"{h.addr} {h.name}\n" for h in s.hosts.values()))
        for h in s.hosts.values():
            h.boot(hosts_file)
        ctl = s.host("ctl")
        # munge: one key, made once, installed on every host.
        ctl.run_step("munge-key", cwd=s.admin)
        for h in s.hosts.values():
            for unit in h.run_step("munge-host", cwd=s.admin):
                h.start_unit(unit)
        # TLS: a site CA, one certificate per host, installed on each.
        ctl.run_step("tls-ca", cwd=s.admin)
        for h in s.hosts.values():
            ctl.run_step("tls-cert", cwd=s.admin, env={"HOST": h.name, "ADDR": h.addr})
            h.run_step("tls-install", cwd=s.admin, env={"HOST": h.name})
        # The same tessera.conf everywhere.
        with open(os.path.join(s.admin, "tessera.conf"), "w") as f:
            f.write(s.conf())
        for h in s.hosts.values():
            h.run_step("config", cwd=s.admin)
        for unit in ctl.run_step("start-controller", cwd=s.admin):
            ctl.start_unit(unit)
        wait_for(lambda: ctl.run("tinfo", check=False).returncode == 0, timeout=30,
                 what="the controller to answer")
        for name in ("node1", "node2"):
            for unit in s.host(name).run_step("start-node", cwd=s.admin):
                s.host(name).start_unit(unit)
        wait_for(lambda: all(node_state(s, n) == "IDLE" for n in ("node1", "node2")),
                 timeout=60, what="both nodes IDLE")
        yield s
    except BaseException:
        for h in s.hosts.values():
            for unit in ("tessera-ctld", "tessera-noded"):
                print(f"--- {h.name} {unit}\n{h.log(unit)[-3000:]}")
        raise
    finally:
        s.teardown()
        if installed_packages():
            purge()


def build_packages(outdir):
    """The current tree's packages (scripts/package) in `outdir`."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "package"), outdir], text=True,
                       capture_output=True)
    assert p.returncode == 0, p.stdout + p.stderr


@pytest.fixture(scope="module")
def site():
    work = os.path.join(BUILD, "multihost")
    shutil.rmtree(work, ignore_errors=True)
    pkgdir = os.path.join(work, "packages")
    build_packages(pkgdir)
    with running_site(work, pkgdir) as s:
        yield s


def node_state(s, role):
    p = s.host("login").run(f"tcontrol show node {s.name(role)}", check=False)
    m = re.search(r"\bState=(\S+)", p.stdout)
    return m.group(1).split("+")[0] if m else None


def job_field(s, job, field, host="login"):
    p = s.host(host).run(f"tcontrol show job {job}", user=USER, check=False)
    m = re.search(r"\b" + field + r"=(\S*)", p.stdout)
    return m.group(1) if m else None


def submit(s, host, args):
    p = s.host(host).run(f"tbatch --parsable {args}", user=USER, cwd=os.path.expanduser(f"~{USER}"))
    return p.stdout.strip().split(";")[0]


def wait_state(s, job, states, timeout=60):
    return wait_for(lambda: job_field(s, job, "JobState") in states and job_field(s, job, "JobState"),
                    timeout=timeout, interval=0.5, what=f"job {job} in {states}")


def out_file(name):
    return os.path.join(os.path.expanduser(f"~{USER}"), name)


def test_packages_installed_with_units_docs_and_modes(site):
    for f in ("/usr/sbin/tessera-ctld", "/usr/sbin/tessera-noded", "/usr/sbin/tessera-stepd",
              "/usr/bin/tbatch", "/usr/bin/trun", "/usr/bin/sbatch",
              "/usr/share/bash-completion/completions/tbatch",
              "/usr/lib/tmpfiles.d/tessera.conf", "/etc/tessera/tessera.conf.example"):
        assert os.path.exists(f), f
    # Every Documentation= of the installed units names something installed.
    for unit in ("tessera-ctld", "tessera-noded"):
        text = open(f"/lib/systemd/system/{unit}.service").read()
        assert "ExecStart=/usr/sbin/" + unit in text
        assert "@" + "SBINDIR@" not in text and "@" + "DOCDIR@" not in text
        docs = re.search(r"^Documentation=(.*)$", text, re.M).group(1).split()
        for d in docs:
            if d.startswith("file:"):
                assert os.path.isfile(d[5:]), d
            elif d.startswith("man:"):
                name, sec = re.match(r"man:(.+)\((\d)\)", d).groups()
                assert os.path.isfile(f"/usr/share/man/man{sec}/{name}.{sec}"), d
    # The controller host's state directory: private (tmpfiles.d and the unit agree).
    st = os.stat(site.host("ctl").dir + "/fs_var_lib_tessera")
    assert oct(st.st_mode & 0o777) == "0o700"
    assert "tessera-ctld.conf" not in os.listdir("/usr/lib/tmpfiles.d")
    p = sh(["dpkg-deb", "-I"] + glob.glob(os.path.join(site.pkgdir, "tessera-slurm-compat_*.deb")))
    assert re.search(r"Conflicts:.*slurm-client", p.stdout)
    assert "Replaces" not in p.stdout


def test_two_node_job_from_login_host_with_trun_across_nodes(site):
    login = site.host("login")
    # The login host has no controller socket: the call goes over TLS with a munge credential.
    assert login.run("ls /run/tessera/ 2>/dev/null | wc -l").stdout.strip() == "0"
    job = submit(site, "login", "-N2 --ntasks-per-node=1 -o mh-%j.out --wrap 'trun hostname'")
    assert wait_state(site, job, ("COMPLETED", "FAILED"), timeout=90) == "COMPLETED", \
        open(out_file(f"mh-{job}.out")).read()
    lines = sorted(open(out_file(f"mh-{job}.out")).read().split())
    assert lines == [site.name("node1"), site.name("node2")]


def test_trun_from_login_host_reaches_both_nodes(site):
    p = site.host("login").run("trun -N2 --ntasks-per-node=1 hostname", user=USER,
                               cwd=os.path.expanduser(f"~{USER}"), timeout=120)
    assert sorted(p.stdout.split()) == [site.name("node1"), site.name("node2")], p.stdout + p.stderr


def test_node_daemon_restart_keeps_the_running_job(site):
    node1 = site.host("node1")
    job = submit(site, "login", f"-w {site.name('node1')} -o mh-%j.out --wrap 'sleep 8; echo survived'")
    wait_state(site, job, ("RUNNING",))
    node1.stop_unit("tessera-noded")
    node1.start_unit("tessera-noded")
    assert wait_state(site, job, ("COMPLETED", "FAILED", "NODE_FAIL"), timeout=90) == "COMPLETED"
    assert open(out_file(f"mh-{job}.out")).read().strip() == "survived"
    wait_for(lambda: node_state(site, "node1") == "IDLE", timeout=60, what="node1 IDLE again")


def test_controller_restart_keeps_state_and_serves_again(site):
    ctl = site.host("ctl")
    before = submit(site, "login", "--hold --wrap true")
    ctl.stop_unit("tessera-ctld")
    assert site.host("login").run("tqueue", user=USER, check=False).returncode != 0
    ctl.start_unit("tessera-ctld")
    wait_for(lambda: job_field(site, before, "JobState") == "PENDING", timeout=60,
             what="the held job after the restart")
    wait_for(lambda: all(node_state(site, n) == "IDLE" for n in ("node1", "node2")),
             timeout=60, what="nodes back after the controller restart")
    after = submit(site, "login", "-N2 -o mh-%j.out --wrap 'trun hostname'")
    assert int(after) > int(before)
    assert wait_state(site, after, ("COMPLETED", "FAILED"), timeout=90) == "COMPLETED"
    site.host("login").run(f"tcancel {before}", user=USER)


def test_bridge_package_installs_and_answers_version(site):
    """Issue 18: tessera-bridge's package (made where Go is installed) installs beside the
    others: the program answers --version, its unit names installed files, its options file and
    example mapping are conffiles; the unit is not enabled."""
    debs = glob.glob(os.path.join(site.pkgdir, "tessera-bridge_*.deb"))
    if not debs:
        pytest.skip("no tessera-bridge package (CMake found no Go)")
    p = sh(["apt-get", "install", "-y", "-q", "./" + os.path.basename(debs[0])], cwd=site.pkgdir,
           env={"DEBIAN_FRONTEND": "noninteractive", "PATH": os.environ["PATH"]}, check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    v = sh(["/usr/sbin/tessera-bridge", "--version"]).stdout
    assert re.fullmatch(r"tessera-bridge \d+\.\d+\.\d+\n", v), v
    text = open("/lib/systemd/system/tessera-bridge.service").read()
    assert "ExecStart=/usr/sbin/tessera-bridge $TESSERA_BRIDGE_OPTS" in text
    for d in re.search(r"^Documentation=(.*)$", text, re.M).group(1).split():
        assert d.startswith("file:") and os.path.isfile(d[5:]), d
    conf = sh(["dpkg-query", "-W", "-f", "${Conffiles}", "tessera-bridge"]).stdout
    assert "/etc/default/tessera-bridge" in conf and "/etc/tessera/bridge-mapping.yaml.example" in conf
    assert not os.path.lexists("/etc/systemd/system/multi-user.target.wants/tessera-bridge.service")


def purge_and_check_nothing_left(site, pkgdirs):
    """Ends the hosts, purges the packages; asserts nothing the packages in `pkgdirs` hold, or
    that they created, is left (test_upgrade.py: the old and the new version's)."""
    files = []
    for pkgdir in pkgdirs:
        for deb in glob.glob(os.path.join(pkgdir, "tessera-*.deb")):
            for line in sh(["dpkg-deb", "-c", deb]).stdout.splitlines():
                path = line.split()[5].lstrip(".")
                if path and not line.startswith("d"):
                    files.append(path.split(" -> ")[0])
    assert "/usr/sbin/tessera-ctld" in files
    site.teardown()
    p = purge()
    assert p.returncode == 0, p.stdout + p.stderr
    assert installed_packages() == []
    left = [f for f in files if os.path.lexists(f)]
    left += [d for d in CREATED if d not in site.preexisting and os.path.exists(d)]
    assert left == []


def test_purge_leaves_nothing(site):
    purge_and_check_nothing_left(site, [site.pkgdir])

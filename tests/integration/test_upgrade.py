"""An upgrade from an older Tessera, as docs/admin-guide.md "Upgrades" says (issue 21 §1).

The four namespace hosts of test_multihost.py are set up from the packages of an older commit,
UPGRADE_FROM (packaging/upgrade-from; built by scripts/package-at, cached by commit under
/var/cache/tessera-packages; that commit's state schema is older than this tree's, so the
upgrade migrates the database). On that older cluster: jobs run and finish (one completes, one
fails), one runs on through the upgrade, one waits for its node's CPUs and one is held. Then the
guide's steps: the backup, one `apt-get install` of every installed Tessera package with the
current ones, and the restarts the packages' postinst asks systemd for (`try-restart`; systemd
is not PID 1 here, so the test restarts the units the same way): the controller first, then
the nodes. Then:
  - the packages and every daemon are the new version; the database is at this tree's
    kSchemaVersion and ctld's log says it migrated it; the backup is the old schema;
  - the finished jobs are in tacct with their states and exit codes;
  - the job that ran through the upgrade finishes (the new noded re-adopted it), the job that
    waited for it then runs, the held job is still held and runs once released;
  - new jobs run across both nodes; the job ids go on from the old ones;
  - a purge then leaves nothing of either version.
"""
import glob
import os
import re
import sqlite3
import subprocess

import pytest

from harness import ROOT, BUILD, wait_for
from multihost import Host
from test_multihost import (USER, build_packages, job_field, node_state, out_file,
                            purge_and_check_nothing_left, running_site, submit, wait_state)
from test_multihost import _tools_missing as _multihost_tools_missing

# The commit an installed site upgrades from (packaging/upgrade-from, also read by .ci/run).
UPGRADE_FROM = [l.strip() for l in open(os.path.join(ROOT, "packaging", "upgrade-from"))
                if l.strip() and not l.startswith("#")][0]


def _tools_missing():
    why = _multihost_tools_missing()
    if why:
        return why
    if subprocess.run(["git", "-C", ROOT, "cat-file", "-e", UPGRADE_FROM + "^{commit}"],
                      capture_output=True).returncode != 0:
        return f"needs commit {UPGRADE_FROM} in the repository's history (a full clone)"
    return None


pytestmark = pytest.mark.skipif(_tools_missing() is not None, reason=str(_tools_missing()))


def schema_version(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def current_schema_version():
    text = open(os.path.join(ROOT, "ctld", "state", "store.h")).read()
    return int(re.search(r"kSchemaVersion = (\d+);", text).group(1))


def package_version(deb):
    return subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True, text=True,
                          check=True).stdout.strip()


def installed_version(package):
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package], capture_output=True,
                          text=True, check=True).stdout.strip()


class Upgrade:
    def __init__(self, site, old_dir, new_dir):
        self.site, self.old_dir, self.new_dir = site, old_dir, new_dir
        self.jobs = {}
        self.db = os.path.join(site.host("ctl").dir, "fs_var_lib_tessera", "tessera.db")


@pytest.fixture(scope="module")
def upgrade():
    work = os.path.join(BUILD, "upgrade")
    subprocess.run(["rm", "-rf", work], check=True)
    p = subprocess.run([os.path.join(ROOT, "scripts", "package-at"), UPGRADE_FROM], text=True,
                       capture_output=True)
    assert p.returncode == 0, p.stdout + p.stderr
    old_dir = p.stdout.strip().splitlines()[-1]
    new_dir = os.path.join(work, "new-packages")
    build_packages(new_dir)
    with running_site(work, old_dir) as s:
        yield Upgrade(s, old_dir, new_dir)


def ctl_run(u, cmd):
    return u.site.host("ctl").run(cmd, user=USER, cwd=os.path.expanduser(f"~{USER}"))


def test_old_cluster_runs_jobs_and_queues_more(upgrade):
    u, s = upgrade, upgrade.site
    old = package_version(glob.glob(os.path.join(u.old_dir, "tessera-controller_*.deb"))[0])
    new = package_version(glob.glob(os.path.join(u.new_dir, "tessera-controller_*.deb"))[0])
    assert installed_version("tessera-controller") == old
    # apt upgrades only to a later version: the current packages' must sort after the old ones'.
    assert subprocess.run(["dpkg", "--compare-versions", new, "gt", old]).returncode == 0, (old, new)
    assert schema_version(u.db) < current_schema_version()
    n1 = s.name("node1")
    if os.path.exists(out_file("up-go")):
        os.remove(out_file("up-go"))
    u.jobs["done"] = submit(s, "login", "-o up-%j.out --wrap 'echo before the upgrade'")
    u.jobs["failed"] = submit(s, "login", "--wrap 'exit 3'")
    assert wait_state(s, u.jobs["done"], ("COMPLETED", "FAILED")) == "COMPLETED"
    assert wait_state(s, u.jobs["failed"], ("COMPLETED", "FAILED")) == "FAILED"
    # Runs through the upgrade on node1, holding both its CPUs; "waiting" needs them too.
    # It ends when the test says (after the nodes' restarts), whatever the upgrade's speed.
    u.jobs["through"] = submit(s, "login", f"-w {n1} -c 2 -o up-%j.out --wrap 'while [ ! -e "
                                           "up-go ]; do sleep 1; done; echo survived the upgrade'")
    wait_state(s, u.jobs["through"], ("RUNNING",))
    u.jobs["waiting"] = submit(s, "login", f"-w {n1} -c 2 -o up-%j.out --wrap 'echo waited'")
    u.jobs["held"] = submit(s, "login", "--hold -o up-%j.out --wrap 'echo released'")
    wait_for(lambda: job_field(s, u.jobs["waiting"], "Reason") == "Resources", timeout=30,
             what="the waiting job pending for Resources")
    assert job_field(s, u.jobs["held"], "JobState") == "PENDING"


def test_upgrade_as_the_guide_says(upgrade):
    u, s = upgrade, upgrade.site
    ctl = s.host("ctl")
    # The guide: a backup first, on the controller.
    ctl.run_step("backup", cwd=s.admin)
    backups = glob.glob(os.path.join(ctl.dir, "fs_var_backups", "tessera", "before-upgrade-*.db"))
    assert len(backups) == 1 and os.stat(backups[0]).st_mode & 0o777 == 0o600
    old_schema = schema_version(u.db)
    assert schema_version(backups[0]) == old_schema
    # The guide's apt-get line, with the new packages (run once: the hosts share /usr).
    Host.this_machine(s.work).run_step("upgrade", cwd=u.new_dir,
                                       env={"DEBIAN_FRONTEND": "noninteractive"})
    new = package_version(glob.glob(os.path.join(u.new_dir, "tessera-controller_*.deb"))[0])
    for pkg in ("tessera-common", "tessera-controller", "tessera-node", "tessera-client"):
        assert installed_version(pkg) == new, pkg
    # What the postinst asks systemd for on an upgrade (it is not PID 1 here: done the same way
    # below), controller first, then the nodes.
    for pkg, unit in (("controller", "tessera-ctld"), ("node", "tessera-noded")):
        postinst = subprocess.run(["dpkg-deb", "--ctrl-tarfile"] +
                                  glob.glob(os.path.join(u.new_dir, f"tessera-{pkg}_*.deb")),
                                  capture_output=True, check=True).stdout
        assert f"try-restart {unit}.service".encode() in postinst
    ctl.stop_unit("tessera-ctld")
    ctl.start_unit("tessera-ctld")
    wait_for(lambda: ctl.run("tinfo", check=False).returncode == 0, timeout=60,
             what="the new controller to answer")
    for name in ("node1", "node2"):
        s.host(name).stop_unit("tessera-noded")
        s.host(name).start_unit("tessera-noded")
    assert schema_version(u.db) == current_schema_version()
    assert (f"migrated from schema version {old_schema} to {current_schema_version()}"
            in ctl.log("tessera-ctld"))
    # Every daemon runs the new program (an old one would run a deleted file; nsenter and
    # setpriv exec it a moment after the start).
    for role in ("ctl", "node1", "node2"):
        for unit, proc in s.host(role).procs:
            if unit.startswith("tessera-"):
                wait_for(lambda: os.readlink(f"/proc/{proc.pid}/exe") == f"/usr/sbin/{unit}",
                         timeout=10, what=f"{role}: {unit} running /usr/sbin/{unit}")
    assert job_field(s, u.jobs["through"], "JobState") == "RUNNING"
    wait_for(lambda: all(node_state(s, n) in ("IDLE", "MIXED", "ALLOCATED")
                         for n in ("node1", "node2")),
             timeout=60, what="both nodes back under the new version")


def test_state_kept_and_pending_jobs_run(upgrade):
    u, s = upgrade, upgrade.site
    j = u.jobs
    # Finished before the upgrade: in the accounting, as they ended.
    p = ctl_run(u, f"tacct -n -P -X -j {j['done']},{j['failed']} -o JobID,State,ExitCode")
    rows = sorted(p.stdout.split())
    assert rows == sorted([f"{j['done']}|COMPLETED|0:0", f"{j['failed']}|FAILED|3:0"]), p.stdout
    assert open(out_file(f"up-{j['done']}.out")).read().strip() == "before the upgrade"
    # Ran through it: finished under the new noded, which re-adopted it.
    open(out_file("up-go"), "w").close()
    assert wait_state(s, j["through"], ("COMPLETED", "FAILED", "NODE_FAIL"), timeout=90) == "COMPLETED"
    assert open(out_file(f"up-{j['through']}.out")).read().strip() == "survived the upgrade"
    # Waited for its CPUs: runs now.
    assert wait_state(s, j["waiting"], ("COMPLETED", "FAILED"), timeout=90) == "COMPLETED"
    assert open(out_file(f"up-{j['waiting']}.out")).read().strip() == "waited"
    # Held: still held, and runs once released.
    assert job_field(s, j["held"], "JobState") == "PENDING"
    assert job_field(s, j["held"], "Reason") == "JobHeldUser"
    s.host("login").run(f"tcontrol release {j['held']}", user=USER)
    assert wait_state(s, j["held"], ("COMPLETED", "FAILED"), timeout=90) == "COMPLETED"
    assert open(out_file(f"up-{j['held']}.out")).read().strip() == "released"


def test_new_jobs_run_across_nodes_after_the_upgrade(upgrade):
    u, s = upgrade, upgrade.site
    job = submit(s, "login", "-N2 --ntasks-per-node=1 -o up-%j.out --wrap 'trun hostname'")
    assert int(job) > max(int(v) for v in u.jobs.values())
    assert wait_state(s, job, ("COMPLETED", "FAILED"), timeout=90) == "COMPLETED"
    assert sorted(open(out_file(f"up-{job}.out")).read().split()) == \
        [s.name("node1"), s.name("node2")]


def test_purge_after_the_upgrade_leaves_nothing(upgrade):
    purge_and_check_nothing_left(upgrade.site, [upgrade.old_dir, upgrade.new_dir])

"""Accounts and associations (issue 16 §1): tacctmgr/sacctmgr against a real ctld, the
association store surviving a restart, AccountingStorageEnforce at submit and association
limits taking effect without a restart."""
import os

import pytest

from harness import BIN, Cluster, wait_for

ALICE, BOB = "tessera-alice", "tessera-bob"
ENFORCE = ("AccountingStorageEnforce=associations,limits,qos\n"
           "QOSName=normal Default=YES\nQOSName=high Priority=100\n"
           "AccountName=base Description=Base QOS=normal\n"
           f"UserName={ALICE} Accounts=base\n")


@pytest.fixture(scope="module")
def ac():
    c = Cluster(nodes=1, extra_conf=ENFORCE)
    try:
        yield c.start()
    finally:
        c.stop()


def mgr(c, *args, user=None, check=True, input=None):
    return c.run(["tacctmgr"] + list(args), user=user, check=check, input=input)


def submit(c, user, *args, check=True):
    p = c.run(["tbatch", "--parsable"] + list(args), user=user, cwd=c.user_dir(user), check=check)
    return int(p.stdout.strip().split(";")[0]) if p.returncode == 0 else p


def reason(c, job):
    return c.run(["tqueue", "-h", "-j", str(job), "-o", "%T %r"]).stdout.strip()


def test_add_account_and_user_then_show_in_sacctmgr_formats(ac):
    mgr(ac, "-i", "add", "account", "physics", "Description=Physics dept", "Parent=base",
        "Organization=sci")
    mgr(ac, "-i", "add", "user", BOB, "Account=physics", "MaxJobs=3")
    out = mgr(ac, "show", "account", "-P", "-n", "format=Account,Descr,Org,ParentName").stdout
    assert out.splitlines() == ["root|default root account|root|", "base|Base|base|root",
                                "physics|Physics dept|sci|base"]
    # -p: a '|' after every field, header included
    out = mgr(ac, "-p", "list", "user", "format=User,DefaultAccount").stdout.splitlines()
    assert out[0] == "User|Def Acct|"
    assert f"{BOB}|physics|" in out and f"{ALICE}|base|" in out
    # association rows in tree order, user rows after their account
    rows = mgr(ac, "-nP", "show", "assoc", "format=Account,User,MaxJobs,QOS").stdout.splitlines()
    assert rows[:2] == ["root|||", "base|||normal"]
    # user rows show the QoS they may use (inherited from base); account rows their own list
    assert rows.index(f"physics|{BOB}|3|normal") > rows.index("physics|||")
    # where clause
    assert mgr(ac, "-nP", "show", "assoc", "where", f"user={BOB}", "format=Account").stdout == "physics\n"
    # default columns: right-justified headers over a dashes line, as sacctmgr
    lines = mgr(ac, "show", "account", "where", "name=physics").stdout.splitlines()
    assert lines[0] == "   Account                Descr                  Org "
    assert lines[1] == "---------- -------------------- -------------------- "
    assert lines[2] == "   physics         Physics dept                  sci "
    # the compatibility name
    assert os.path.islink(os.path.join(BIN, "sacctmgr"))
    out = ac.run(["sacctmgr", "-nP", "show", "user", BOB]).stdout
    assert out == f"{BOB}|physics|None\n"


def test_submit_refused_then_accepted_after_add_user(ac):
    p = submit(ac, BOB, "--account=base", "--wrap", "true", check=False)
    assert p.returncode != 0
    assert "Invalid account or account/partition combination specified" in p.stderr
    p = submit(ac, ALICE, "--account=ghost", "--wrap", "true", check=False)
    assert "Invalid account or account/partition combination specified" in p.stderr
    p = submit(ac, ALICE, "--qos=high", "--wrap", "true", check=False)
    assert p.returncode != 0 and "Invalid qos specification" in p.stderr
    mgr(ac, "-i", "add", "user", BOB, "Account=base")
    job = submit(ac, BOB, "--account=base", "--wrap", "true")
    ac.wait_state(job, "COMPLETED")
    # without --account: the user's DefaultAccount
    job = submit(ac, ALICE, "--wrap", "true")
    ac.wait_state(job, "COMPLETED")
    acct = ac.run(["tacct", "-n", "-X", "-P", "-j", str(job), "-o", "JobID,Account"]).stdout
    assert f"{job}|base" in acct


def test_modify_limit_takes_effect_without_restart(ac):
    mgr(ac, "-i", "modify", "user", "where", f"name={ALICE}", "set", "MaxJobs=1")
    first = submit(ac, ALICE, "--wrap", "sleep 60")
    wait_for(lambda: reason(ac, first).startswith("RUNNING"), what="the first job to start")
    second = submit(ac, ALICE, "--wrap", "sleep 60")
    wait_for(lambda: reason(ac, second) == "PENDING AssocMaxJobsLimit",
             what="the second job to wait for AssocMaxJobsLimit")
    mgr(ac, "-i", "modify", "user", ALICE, "set", "MaxJobs=-1")
    wait_for(lambda: reason(ac, second).startswith("RUNNING"), what="the second job to start")
    ac.run(["tcancel", str(first), str(second)])


def test_grp_submit_jobs_counts_every_users_jobs_at_submit(ac):
    mgr(ac, "-i", "add", "account", "subm", "GrpSubmitJobs=1")
    mgr(ac, "-i", "add", "user", f"{ALICE},{BOB}", "Account=subm")
    held = submit(ac, ALICE, "--account=subm", "--hold", "--wrap", "true")
    p = submit(ac, BOB, "--account=subm", "--wrap", "true", check=False)
    assert p.returncode != 0
    assert ("Job violates accounting/QOS policy (job submit limit, user's size and/or time "
            "limits): GrpSubmitJobs of account subm (1 jobs, limit 1)") in p.stderr
    ac.run(["tcancel", str(held)])
    job = submit(ac, BOB, "--account=subm", "--wrap", "true")
    ac.wait_state(job, "COMPLETED")


def test_only_admins_change_and_bad_input_changes_nothing(ac):
    p = mgr(ac, "-i", "add", "account", "rogue", user=ALICE, check=False)
    assert p.returncode == 1 and "ChangeAssoc requires an administrator" in p.stderr
    assert "base|Base|base" in mgr(ac, "-nP", "show", "account", user=ALICE).stdout  # anyone may look
    p = mgr(ac, "-i", "add", "account", "x1", "MaxJobs=lots", check=False)
    assert p.returncode == 1 and 'Bad value "lots" for MaxJobs' in p.stderr
    p = mgr(ac, "-i", "add", "user", BOB, "Account=nowhere", check=False)
    assert p.returncode == 1 and "The account 'nowhere' doesn't exist" in p.stderr
    p = mgr(ac, "-i", "delete", "account", "base", check=False)
    assert p.returncode == 1 and "users (" in p.stderr
    p = mgr(ac, "-i", "modify", "account", "base", "set", "Colour=red", check=False)
    assert p.returncode == 1 and "Unknown option: Colour" in p.stderr
    accounts = mgr(ac, "-nP", "show", "account", "format=Account").stdout.split()
    assert "x1" not in accounts and "rogue" not in accounts and "base" in accounts


def test_without_i_asks_and_only_y_commits(ac):
    p = mgr(ac, "add", "account", "askme", input="n\n")
    assert "Would you like to commit changes? (You have 30 seconds to decide)" in p.stdout
    assert "Changes Discarded" in p.stdout
    p = mgr(ac, "add", "account", "askme", input="")  # end of input: discarded, as sacctmgr
    assert "Changes Discarded" in p.stdout
    assert "askme" not in mgr(ac, "-nP", "show", "account", "format=Account").stdout.split()
    p = mgr(ac, "add", "account", "askme", input="y\n")
    assert "Adding Account(s)" in p.stdout and "Discarded" not in p.stdout
    assert "askme" in mgr(ac, "-nP", "show", "account", "format=Account").stdout.split()


def test_store_survives_ctld_restart(fresh_cluster):
    c = fresh_cluster(nodes=1, extra_conf=ENFORCE).start()
    mgr(c, "-i", "add", "account", "chem", "GrpJobs=7")
    mgr(c, "-i", "add", "user", BOB, "Account=chem")
    mgr(c, "-i", "modify", "account", "base", "set", "MaxWall=2:00:00")
    c.kill("ctld")
    c.start_ctld()
    rows = mgr(c, "-nP", "show", "assoc", "format=Account,User,GrpJobs,MaxWall").stdout.splitlines()
    assert "chem||7|" in rows and f"chem|{BOB}||" in rows
    assert "base|||02:00:00" in rows
    # the restarted ctld enforces what the store holds: bob may submit to chem
    job = submit(c, BOB, "--account=chem", "--wrap", "true")
    c.wait_state(job, "COMPLETED")
    # a deleted entry does not come back from its config line at the next restart
    mgr(c, "-i", "delete", "user", ALICE)
    c.kill("ctld")
    c.start_ctld()
    assert ALICE not in mgr(c, "-nP", "show", "user", "format=User").stdout.split()

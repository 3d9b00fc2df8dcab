"""Issue 21 §2: the commands read only the controller, auth and TLS keys of tessera.conf, so a
typo elsewhere does not break them on any host; the daemons refuse the same file with file:line;
--check-config finds what ctld or noded would refuse later (QoS without a default, MIG keys)."""
import subprocess

from harness import BIN


def lineno(text, needle):
    return next(i + 1 for i, line in enumerate(text.splitlines()) if needle in line)


def test_typo_outside_client_keys_leaves_commands_working(fresh_cluster):
    c = fresh_cluster(nodes=1, tls=True).start()
    good = open(c.conf).read()
    bad = good + "PriorityWeightAge=lots\nSchedulerInterval=1s\nPartitionName=p2 Nodes=it1 \"MaxTime=1\n"
    c.write_config(bad)
    # gRPC + munge + TLS (as from a login host) and the local socket alike
    for env in ({"TESSERA_NO_LOCAL_SOCKET": "1"}, {}):
        job = int(c.run(["tbatch", "--parsable", "--wrap", "true"], env=env).stdout.strip())
        out = c.run(["tqueue", "-h", "-o", "%i", "-j", str(job)], env=env, check=False)
        assert out.returncode == 0, out.stderr
        c.wait_state(job, "COMPLETED")
    # ctld refuses the file, naming file:line, before start and on reconfigure
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", c.conf, "--check-config"], capture_output=True, text=True)
    assert p.returncode != 0
    quote_line = lineno(bad, '"MaxTime=1')
    quote = f"{c.conf}:{quote_line}: unterminated quote"
    assert quote in p.stderr, p.stderr
    r = c.run(["tcontrol", "reconfigure"], check=False)
    assert r.returncode != 0
    assert quote in r.stderr, r.stderr
    # and noded too
    n = subprocess.run([f"{BIN}/tessera-noded", "--check-config", "-N", "it1", "-f", c.conf],
                       capture_output=True, text=True)
    assert n.returncode != 0
    assert quote in n.stderr, n.stderr
    c.write_config(good + "SchedulerInterval=1s\n")
    n = subprocess.run([f"{BIN}/tessera-noded", "--check-config", "-N", "it1", "-f", c.conf],
                       capture_output=True, text=True)
    assert n.returncode != 0
    assert f"{c.conf}:{lineno(good, 'PartitionName') + 1}: invalid value \"1s\" for SchedulerInterval" in n.stderr, n.stderr
    # a key only the scheduler reads: ctld names it; the commands still work
    first_bad = lineno(good, "PartitionName") + 1
    c.write_config(good + "PriorityWeightAge=lots\n")
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", c.conf, "--check-config"], capture_output=True, text=True)
    assert p.returncode != 0
    assert f"{c.conf}:{first_bad}: invalid value \"lots\" for PriorityWeightAge" in p.stderr, p.stderr
    assert c.run(["tqueue"], check=False).returncode == 0


def test_malformed_controller_key_is_an_error_naming_the_line(fresh_cluster):
    c = fresh_cluster(nodes=1).start()
    bad = open(c.conf).read() + "SlurmctldPort=99999\n"
    c.write_config(bad)
    p = c.run(["tqueue"], check=False)
    assert p.returncode == 1
    assert f"{c.conf}:{lineno(bad, 'SlurmctldPort=99999')}: invalid value \"99999\" for SlurmctldPort" in p.stderr


BASE = "SlurmctldHost=localhost\nNodeName=n1 CPUs=2 RealMemory=1000\nPartitionName=p Nodes=n1 Default=YES\n"


def check(tmp_path, conf, gres=None):
    (tmp_path / "tessera.conf").write_text(conf)
    if gres is not None:
        (tmp_path / "gres.conf").write_text(gres)
    path = str(tmp_path / "tessera.conf")
    ctld = subprocess.run([f"{BIN}/tessera-ctld", "-f", path, "--check-config"], capture_output=True, text=True)
    noded = subprocess.run([f"{BIN}/tessera-noded", "-f", path, "--check-config"], capture_output=True, text=True)
    return ctld, noded


def test_check_config_qos_without_default(tmp_path):
    ctld, _ = check(tmp_path, BASE + "QOSName=high Priority=100\nQOSName=low Priority=1\n")
    assert ctld.returncode == 1
    assert f"{tmp_path}/tessera.conf:4: QOS lines define high, low but none is Default=yes or named normal" in ctld.stderr
    assert "every job submitted without --qos would be refused" in ctld.stderr
    ok, _ = check(tmp_path, BASE + "QOSName=high Priority=100 Default=yes\nQOSName=low Priority=1\n")
    assert ok.returncode == 0, ok.stderr
    ok, _ = check(tmp_path, BASE + "QOSName=normal\nQOSName=high Priority=100\n")
    assert ok.returncode == 0, ok.stderr


def test_qos_without_default_does_refuse_jobs(fresh_cluster):
    """What the check above predicts, on a live cluster."""
    c = fresh_cluster(nodes=1, extra_conf="QOSName=high Priority=100\n").start()
    p = c.run(["tbatch", "--wrap", "true"], check=False)
    assert p.returncode != 0
    assert "invalid qos specification" in p.stderr.lower()
    assert c.run(["tbatch", "--qos=high", "--wrap", "true"], check=False).returncode == 0


def test_check_config_default_time_above_max_time(tmp_path):
    conf = "SlurmctldHost=localhost\nNodeName=n1 CPUs=2 RealMemory=1000\n" \
           "PartitionName=p Nodes=n1 Default=YES MaxTime=1:00:00 DefaultTime=2:00:00\n"
    ctld, _ = check(tmp_path, conf)
    assert ctld.returncode == 1
    assert (f"{tmp_path}/tessera.conf:3: partition p has DefaultTime 2:00:00 above its MaxTime "
            "1:00:00: every job submitted there without --time would wait forever "
            "(PartitionTimeLimit)") in ctld.stderr, ctld.stderr


def test_check_config_partition_default_above_default_qos_max_wall(tmp_path):
    conf = BASE.replace("Default=YES", "Default=YES DefaultTime=4:00:00") + "QOSName=normal MaxWall=1:00:00\n"
    ctld, _ = check(tmp_path, conf)
    assert ctld.returncode == 1
    assert (f"{tmp_path}/tessera.conf:3: partition p gives jobs without --time 4:00:00, above the "
            f"MaxWall 1:00:00 of the default QOS normal ({tmp_path}/tessera.conf:4)") in ctld.stderr, ctld.stderr
    ok, _ = check(tmp_path, BASE.replace("Default=YES", "Default=YES DefaultTime=30:00") +
                  "QOSName=normal MaxWall=1:00:00\n")
    assert ok.returncode == 0, ok.stderr


GPU = "NodeName=n1 Name=gpu Type=a100 Count=1 MemoryMiB=40960 Simulated=yes "


def test_check_config_mig_layout_without_mig_enabled(tmp_path):
    ctld, noded = check(tmp_path, BASE, GPU + "MigLayout=3g.20gb\n")
    for p in (ctld, noded):
        assert p.returncode == 1
        assert f"{tmp_path}/gres.conf:1: MigLayout= needs MigEnabled=yes" in p.stderr, p.stderr


def test_check_config_reports_a_gres_problem_once_with_a_relative_path(tmp_path):
    check(tmp_path, BASE, GPU + "MigLayout=3g.20gb\n")
    p = subprocess.run([f"{BIN}/tessera-noded", "-f", "tessera.conf", "--check-config"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.count("MigLayout= needs MigEnabled=yes") == 1, p.stderr


def test_check_config_unknown_mig_profile(tmp_path):
    ctld, noded = check(tmp_path, BASE, GPU + "MigEnabled=yes MigLayout=3g.20gb,4g.30gb\n")
    for p in (ctld, noded):
        assert p.returncode == 1
        assert f"{tmp_path}/gres.conf:1: MigLayout=3g.20gb,4g.30gb: MIG profile '4g.30gb' does not exist" in p.stderr, p.stderr


def test_check_config_good_mig_layout(tmp_path):
    ctld, noded = check(tmp_path, BASE, GPU + "MigEnabled=yes MigLayout=3g.20gb,2g.10gb\n")
    assert ctld.returncode == 0, ctld.stderr
    assert noded.returncode == 0, noded.stderr
    assert "configuration OK" in noded.stdout


def test_noded_check_config_names_node_side_keys(tmp_path):
    _, noded = check(tmp_path, BASE + "CgroupPidsMax=many\n")
    assert noded.returncode == 1
    assert f"{tmp_path}/tessera.conf:4: CgroupPidsMax=many: expected a number" in noded.stderr


def test_tqueue_shows_the_qos_a_job_got(fresh_cluster):
    """Issue 21 §4: a job without --qos shows the default QoS it got, not (null), as squeue."""
    c = fresh_cluster(nodes=1, extra_conf="QOSName=low Priority=1\nQOSName=high Priority=10 Default=yes\n").start()
    job = c.submit(["--hold", "--wrap", "true"])
    assert c.run(["tqueue", "-h", "-j", str(job), "-o", "%q"]).stdout.strip() == "high"
    assert " QOS=high" in c.run(["tcontrol", "show", "job", str(job)]).stdout
    low = c.submit(["--hold", "--qos=low", "--wrap", "true"])
    assert c.run(["tqueue", "-h", "-j", str(low), "-o", "%q"]).stdout.strip() == "low"


def test_without_qos_lines_jobs_show_normal(fresh_cluster):
    c = fresh_cluster(nodes=1).start()
    job = c.submit(["--hold", "--wrap", "true"])
    assert c.run(["tqueue", "-h", "-j", str(job), "-o", "%q"]).stdout.strip() == "normal"

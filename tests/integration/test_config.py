"""The controller validates its configuration and names the file and line of an error."""
import os
import subprocess

from harness import BIN


def test_malformed_config_line_refuses_start(tmp_path):
    conf = tmp_path / "tessera.conf"
    conf.write_text("ClusterName=x\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 MaxTime=60:\n")
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", str(conf)], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0
    assert f"{conf}:3:" in p.stderr and "MaxTime" in p.stderr


def test_line_without_equals_names_the_line(tmp_path):
    conf = tmp_path / "tessera.conf"
    conf.write_text("# comment\nClusterName=x\nGarbage\nNodeName=n1\nPartitionName=p Nodes=n1\n")
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", str(conf), "--check-config"], capture_output=True, text=True)
    assert p.returncode != 0
    assert f"{conf}:3: expected Key=Value" in p.stderr


def test_unimplemented_slurm_keys_warn_with_line(tmp_path):
    conf = tmp_path / "tessera.conf"
    conf.write_text("ClusterName=x\nProctrackType=proctrack/cgroup\nNodeName=n1\nPartitionName=p Nodes=n1\n")
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", str(conf), "--check-config"], capture_output=True, text=True)
    assert p.returncode == 0
    assert f"{conf}:2: ProctrackType" in p.stderr


def test_demo_config_is_valid(tmp_path):
    root = os.path.dirname(os.path.dirname(BIN.rstrip("/")))
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "etc", "demo")
    text = open(os.path.join(src, "tessera.conf")).read().replace("@RUN@", str(tmp_path))
    (tmp_path / "tessera.conf").write_text(text)
    (tmp_path / "gres.conf").write_text(open(os.path.join(src, "gres.conf")).read())
    p = subprocess.run([f"{BIN}/tessera-ctld", "-f", str(tmp_path / "tessera.conf"), "--check-config"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "4 nodes, 2 partitions" in p.stdout

"""Issue 20 §3: the Prometheus endpoints of tessera-ctld and tessera-noded on a real cluster,
scraped by a real Prometheus server (Debian's `prometheus`, scripts/install-deps) and queried
through its HTTP API; the endpoints' content; `tcontrol sdiag` and `sdiag` under the Slurm name."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

from harness import BIN, Cluster, free_ports, wait_for

PROMETHEUS = shutil.which("prometheus")


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


def samples(text, name):
    """{labels-text: value} of the samples of metric `name` in exposition text."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^" + re.escape(name) + r"(\{[^}]*\})? (\S+)$", line)
        if m:
            out[m.group(1) or ""] = float(m.group(2))
    return out


@pytest.fixture(scope="module")
def mc():
    ports = free_ports(3)
    c = Cluster(nodes=2, extra_conf=f"MetricsPort={ports[0]}\nMetricsAddress=127.0.0.1\n")
    c.metrics_ports = ports
    base = c.default_config

    def with_node_ports():  # one metrics port per NodeName line
        text, i = [], 1
        for line in base().splitlines():
            if line.startswith("NodeName="):
                line += f" MetricsPort={ports[i]}"
                i += 1
            text.append(line)
        return "\n".join(text) + "\n"

    c.default_config = with_node_ports
    try:
        yield c.start()
    finally:
        c.stop()


def ctld_url(c):
    return f"http://127.0.0.1:{c.metrics_ports[0]}/metrics"


def run_jobs(c, n, wrap="true"):
    work = c.user_dir("tessera-alice")
    ids = [c.submit(["-o", "/dev/null", "--wrap", wrap], user="tessera-alice", cwd=work) for _ in range(n)]
    for j in ids:
        c.wait_state(j, ["COMPLETED", "FAILED"], timeout=60)
    return ids


def test_ctld_endpoint_content(mc):
    run_jobs(mc, 3)
    mc.submit(["-o", "/dev/null", "--hold", "--wrap", "true"], user="tessera-alice",
              cwd=mc.user_dir("tessera-alice"))
    status, ctype, text = get(ctld_url(mc))
    assert status == 200 and ctype.startswith("text/plain"), ctype
    for family, kind in [("tessera_jobs_submitted_total", "counter"), ("tessera_jobs_started_total", "counter"),
                         ("tessera_jobs_finished_total", "counter"), ("tessera_jobs_pending", "gauge"),
                         ("tessera_jobs_running", "gauge"), ("tessera_sched_cycle_seconds", "histogram"),
                         ("tessera_sched_cycle_jobs_considered", "histogram"),
                         ("tessera_rpc_duration_seconds", "histogram"),
                         ("tessera_store_commit_seconds", "histogram"),
                         ("tessera_store_commit_batch_size", "histogram"), ("tessera_nodes", "gauge"),
                         ("tessera_gpus", "gauge"), ("tessera_jobs_requeued_total", "counter")]:
        assert f"# TYPE {family} {kind}" in text, family
    assert samples(text, "tessera_jobs_submitted_total")['{partition="debug"}'] >= 4
    assert samples(text, "tessera_jobs_finished_total")['{partition="debug",state="COMPLETED"}'] >= 3
    pending = samples(text, "tessera_jobs_pending")
    assert any('partition="debug"' in k and 'reason="JobHeld' in k for k in pending), pending
    assert samples(text, "tessera_nodes")['{state="IDLE"}'] == 2
    assert samples(text, "tessera_sched_cycle_seconds_count")[""] >= 1
    assert samples(text, "tessera_store_commit_seconds_count")[""] >= 1
    rpc = samples(text, "tessera_rpc_duration_seconds_count")
    assert rpc['{method="SubmitJob",role="user"}'] >= 4, rpc


def test_noded_endpoint_content(mc):
    run_jobs(mc, 2)
    # Two jobs one after the other on it1: the second is taken by the first one's idle stepd.
    work = mc.user_dir("tessera-alice")
    for _ in range(2):
        j = mc.submit(["-w", "it1", "-o", "/dev/null", "--wrap", "true"], user="tessera-alice", cwd=work)
        mc.wait_state(j, ["COMPLETED"], timeout=60)
        time.sleep(0.5)  # the stepd tells the zygote it is idle after its job's end is written
    it1 = samples(get(f"http://127.0.0.1:{mc.metrics_ports[1]}/metrics")[2], "tessera_noded_stepd_starts_total")
    assert it1['{method="reused"}'] >= 1, it1
    launches = 0
    for port in mc.metrics_ports[1:]:
        status, _, text = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert "# TYPE tessera_noded_job_launches_total counter" in text
        assert samples(text, "tessera_noded_job_launch_failures_total")[""] == 0
        starts = samples(text, "tessera_noded_stepd_starts_total")
        assert set(starts) == {'{method="reused"}', '{method="fork"}', '{method="exec"}'}
        launches += samples(text, "tessera_noded_job_launches_total")[""]
        assert sum(starts.values()) == samples(text, "tessera_noded_job_launches_total")[""]
    assert launches >= 2


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (scripts/install-deps)")
def test_prometheus_scrapes_ctld_and_noded(mc):
    d = tempfile.mkdtemp(prefix="tessera-prom-")
    web = free_ports(1)[0]
    targets = ", ".join(f"'127.0.0.1:{p}'" for p in mc.metrics_ports[1:])
    with open(os.path.join(d, "prometheus.yml"), "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                "scrape_configs:\n"
                f"  - job_name: tessera-ctld\n    static_configs:\n      - targets: ['127.0.0.1:{mc.metrics_ports[0]}']\n"
                f"  - job_name: tessera-noded\n    static_configs:\n      - targets: [{targets}]\n")
    log = open(os.path.join(d, "prometheus.log"), "wb")
    prom = subprocess.Popen([PROMETHEUS, f"--config.file={d}/prometheus.yml", f"--storage.tsdb.path={d}/data",
                             f"--web.listen-address=127.0.0.1:{web}"], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)

    def query(expr):
        url = f"http://127.0.0.1:{web}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        body = json.loads(get(url)[2])
        assert body["status"] == "success", body
        return body["data"]["result"]

    def value(expr):
        r = query(expr)
        return float(r[0]["value"][1]) if r else None

    try:
        def ready():
            try:
                return get(f"http://127.0.0.1:{web}/-/ready")[0] == 200
            except OSError:
                return False
        wait_for(ready, timeout=60, what="prometheus to be ready")
        wait_for(lambda: value('count(up{job=~"tessera-.*"} == 1)') == 3, timeout=30,
                 what="prometheus to scrape ctld and both noded")
        before = value("sum(tessera_jobs_submitted_total)") or 0
        run_jobs(mc, 5)
        wait_for(lambda: (value("sum(tessera_jobs_submitted_total)") or 0) >= before + 5, timeout=30,
                 what="the submitted counter to reach +5 in Prometheus")
        assert value('sum(tessera_jobs_finished_total{state="COMPLETED"})') >= 5
        assert value("sum(tessera_sched_cycle_seconds_count)") > 0
        assert value('sum(tessera_rpc_duration_seconds_count{method="SubmitJob"})') >= 5
        assert value("sum(tessera_store_commit_seconds_count)") > 0
        q = value("histogram_quantile(0.99, sum by (le) (tessera_sched_cycle_seconds_bucket))")
        assert q is not None and q > 0
        wait_for(lambda: (value('sum(tessera_noded_job_launches_total{job="tessera-noded"})') or 0) >= 5,
                 timeout=30, what="the noded launch counters in Prometheus")
        assert value('sum(tessera_nodes{state="IDLE"})') == 2
    finally:
        os.killpg(prom.pid, signal.SIGTERM)
        prom.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def test_sdiag_by_user_and_under_the_slurm_name(mc):
    run_jobs(mc, 1)
    out = mc.run(["tcontrol", "sdiag"]).stdout
    def num(label):
        m = re.search(r"^\s*" + re.escape(label) + r":\s+(\d+)$", out, re.M)
        assert m, (label, out)
        return int(m.group(1))
    assert num("Jobs submitted") >= 1 and num("Jobs started") >= 1 and num("Jobs completed") >= 1
    assert num("Total cycles") >= 1 and num("Max cycle") >= num("Last cycle")
    assert re.search(r"^\s*SubmitJob count:\d+ ave_time:\d+ total_time:\d+$", out, re.M), out
    # By user (issue 20 §3): tessera-alice submitted, root runs this sdiag.
    users = re.findall(r"^\s*(\S+)\((\d+)\) count:(\d+) ave_time:\d+ total_time:\d+$", out, re.M)
    names = {u[0] for u in users}
    assert "tessera-alice" in names and "root" in names, out
    # The Slurm name: a link called sdiag to tcontrol prints the same report.
    d = tempfile.mkdtemp(prefix="tessera-sdiag-")
    try:
        os.symlink(os.path.join(BIN, "tcontrol"), os.path.join(d, "sdiag"))
        p = mc.run([os.path.join(d, "sdiag")])
        assert "Main schedule statistics" in p.stdout and "statistics by user" in p.stdout
        bad = mc.run([os.path.join(d, "sdiag"), "show"], check=False)
        assert bad.returncode != 0 and "unexpected argument" in bad.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)

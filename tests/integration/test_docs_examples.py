"""Issue 21 §4: the user guide's examples run, as written, on a dev cluster (etc/demo's
configuration: nodes tn1-tn4, partitions cpu and gpu, two simulated A100s on tn3 and tn4), so
the guide cannot rot again. Run by scripts/test, hence by .ci/run.

How docs/user-guide.md is read (docs_examples.py has the extractor):
- Every fenced block whose lines start with `$ ` is a session: each `$ ` line is run with bash
  in one working directory, in order, and must exit 0. The lines after a command, up to the next
  `$ `, are its shown output.
- `$ cat FILE` followed by shown output, where FILE does not exist yet, creates FILE with that
  text: the guide's scripts are the files the session runs.
- The jobs whose ids the guide shows must not end FAILED (or NODE_FAIL, OUT_OF_MEMORY, ...).
- Job ids: when a command's shown output names a job id (`Submitted batch job 42`, or a bare
  `43` after `--parsable`), later commands get the real id in its place (`42`, `42_7`).
- A command whose comment says `until Ctrl-C` runs for 3 s and is then interrupted.
- `a ; b` lines run under `bash -e` (every part must succeed), except the `cmd; echo $?` idiom.
- A block preceded by `<!-- docs-check: skip (REASON) -->` is not run (hardware the dev cluster
  lacks, fragments of a script); yaml blocks are not commands. A block with neither prompts nor
  a marker fails the check: every example is either run or explicitly excused.
"""
import os
import re
import subprocess

import pytest

from docs_examples import ROOT, extract_blocks
from harness import BIN, Cluster

GUIDE = os.path.join(ROOT, "docs", "user-guide.md")


class DevCluster(Cluster):
    """etc/demo's cluster (what scripts/dev-cluster runs) on free ports in a temporary dir."""

    def __init__(self):
        super().__init__(nodes=4, tls=True, node_timeout=30)
        self.nodes = ["tn1", "tn2", "tn3", "tn4"]
        with open(os.path.join(ROOT, "etc", "demo", "gres.conf")) as f:
            self.gres = f.read()

    def default_config(self):
        with open(os.path.join(ROOT, "etc", "demo", "tessera.conf")) as f:
            text = f.read().replace("@RUN@", self.dir)
        text = re.sub(r"(?m)^SlurmctldPort=\d+", f"SlurmctldPort={self.ctld_port}", text)
        text = re.sub(r"(?m)^AuthInfo=.*", f"AuthInfo=socket={self.munge_socket}", text)
        # No Prometheus endpoints: their fixed ports are the dev cluster's (and a node's range
        # would not fit the one-line-per-node split below).
        text = re.sub(r"(?m)^Metrics(Port|Address)=.*\n", "", text)
        text = re.sub(r" MetricsPort=[\d-]+", "", text)
        out = []
        for line in text.splitlines():  # free ports are not a range: one line per node
            m = re.match(r"NodeName=tn\[(\d)-(\d)\] (.*?)Port=\d+-\d+(.*)", line)
            if not m:
                out.append(line)
                continue
            for i in range(int(m.group(1)), int(m.group(2)) + 1):
                out.append(f"NodeName=tn{i} {m.group(3)}Port={self.node_ports[i - 1]}{m.group(4)}")
        return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def dev():
    c = DevCluster()
    try:
        yield c.start()
    finally:
        c.stop()


def run_session(dev, block, work, ids):
    for cmd in block.commands:
        line = cmd.text
        for shown, real in ids.items():
            line = re.sub(rf"(?<![0-9A-Za-z_.]){shown}(?![0-9A-Za-z])", str(real), line)
        if cmd.creates is not None and line.startswith("cat ") and not os.path.exists(
                os.path.join(work, line.split()[1])):
            with open(os.path.join(work, line.split()[1]), "w") as f:
                f.write(cmd.creates)
            os.chmod(os.path.join(work, line.split()[1]), 0o755)
        # `a ; b` must succeed in every part (bash -e), except the `cmd; echo $?` idiom
        argv = ["bash", "-c", line] if "$?" in line else ["bash", "-e", "-c", line]
        if "until Ctrl-C" in line:
            argv = ["timeout", "-s", "INT", "3"] + argv
        env = dev.env({"USER": "root"})
        p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=120)
        ok = p.returncode == 0 or ("until Ctrl-C" in line and p.returncode in (124, 130))
        assert ok, (f"{GUIDE}:{cmd.line}: `{line}` exited {p.returncode}\n"
                    f"stdout: {p.stdout}\nstderr: {p.stderr}")
        if cmd.shown_id is not None:
            m = re.search(r"(?:Submitted batch job |^)(\d+)\s*$", p.stdout.strip(), re.M)
            assert m, f"{GUIDE}:{cmd.line}: `{line}` printed no job id: {p.stdout!r}"
            ids[cmd.shown_id] = int(m.group(1))


def test_every_block_is_run_or_excused():
    blocks = extract_blocks(GUIDE)
    assert blocks, "no example blocks found"
    bad = [b for b in blocks if not b.skip and not b.commands and b.lang not in ("yaml", "json")]
    assert not bad, "blocks with neither $ commands nor a docs-check marker: " + ", ".join(
        f"{GUIDE}:{b.line}" for b in bad)
    skipped = [b for b in blocks if b.skip]
    assert len(skipped) <= 8, "keep the excused blocks few: " + ", ".join(f"{b.line} ({b.skip})" for b in skipped)


def test_user_guide_examples_run_on_the_dev_cluster(dev, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    ids = {}
    ran = 0
    for block in extract_blocks(GUIDE):
        if block.skip or not block.commands:
            continue
        run_session(dev, block, str(work), ids)
        ran += len(block.commands)
    assert ran >= 30, ran
    # The examples' jobs that ended did not fail (a broken script in the guide shows here).
    for shown, real in ids.items():
        state, _ = dev.acct_state(real)
        assert state not in ("FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT", "BOOT_FAIL"), (
            f"the guide's job {shown} (here {real}) ended {state}")


def test_bash_completion_covers_trun_and_srun(dev):
    comp = os.path.join(ROOT, "etc", "bash_completion.d", "tessera")
    for words in (["trun", "--job"], ["srun", "--job"], ["talloc", "--nod"]):
        script = (f"source {comp}; COMP_WORDS=({' '.join(words)}); COMP_CWORD={len(words) - 1}; "
                  f"_tessera_complete; echo \"${{COMPREPLY[@]}}\"")
        env = dev.env()
        env["PATH"] = f"{BIN}:{env['PATH']}"
        if words[0] == "srun":  # the Slurm name: the same binary
            os.makedirs(os.path.join(dev.dir, "compat"), exist_ok=True)
            link = os.path.join(dev.dir, "compat", "srun")
            if not os.path.exists(link):
                os.symlink(os.path.join(BIN, "trun"), link)
            env["PATH"] = f"{dev.dir}/compat:{env['PATH']}"
        p = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
        want = "--jobid" if words[1] == "--job" else "--nodes"
        assert want in p.stdout.split(), (words, p.stdout, p.stderr)


def test_missing_output_directory_shows_why_in_tqueue_and_show_job(dev, tmp_path):
    """The guide's note under the first example: without `mkdir -p logs` the job fails, and
    the cause is its reason in tqueue and tcontrol show job, not only in --events."""
    work = str(tmp_path)
    p = dev.run(["tbatch", "--parsable", "-o", "nologs/%x-%j.out", "--wrap", "true"], cwd=work)
    job = int(p.stdout.strip())
    assert dev.wait_state(job, "FAILED")[0] == "FAILED"
    out = dev.run(["tqueue", "-h", "-t", "all", "-j", str(job), "-o", "%T %R"]).stdout.strip()
    reason = f"cannot open output file {work}/nologs/wrap-{job}.out: No such file or directory"
    assert out == f"FAILED ({reason})", out
    assert f" Reason={reason.replace(' ', '_')} " in dev.run(["tcontrol", "show", "job", str(job)]).stdout

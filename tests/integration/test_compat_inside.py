"""Issue 19, "inside jobs": what a Slurm batch script does at run time, through the Slurm names
(scripts/install-slurm-compat): scontrol show hostnames, srun's options (-o/-e/-i with filename
patterns, --export, --wait, -w/-x, the accepted and the refused ones), srun and salloc outside
an allocation, the SLURM_* variables of sbatch and srun, and sbatch's filename patterns.
A real munged, tessera-ctld (TLS) and two tessera-noded (it1, it2: 2 CPUs each) on loopback."""
import os
import re

import pytest

from harness import BIN, wait_for, install_slurm_names

USER = "tessera-alice"


@pytest.fixture(scope="module")
def slurm_bin(cluster):
    bindir = install_slurm_names(cluster)
    for name in ("srun", "salloc", "scontrol", "sbatch"):
        assert os.path.islink(os.path.join(bindir, name)), name
    return bindir


def run(cluster, slurm_bin, argv, **kw):
    env = {"PATH": f"{slurm_bin}:{BIN}:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
    env.update(kw.pop("env", {}))
    return cluster.run(argv, user=kw.pop("user", USER), env=env, check=kw.pop("check", False), **kw)


def batch(cluster, slurm_bin, args, wrap, timeout=60, states=("COMPLETED",)):
    """Submits `wrap` with sbatch as alice; waits for the end; returns (work dir, job, output)."""
    work = cluster.user_dir(USER)
    p = run(cluster, slurm_bin, ["sbatch", "--parsable", "-o", "out-%j.txt", *args, "--wrap", wrap],
            cwd=work, check=True)
    job = int(p.stdout.strip().split(";")[0])
    state, code = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"],
                                     timeout=timeout)
    out = open(os.path.join(work, f"out-{job}.txt")).read()
    assert state in states, (state, code, out)
    return work, job, out


# ---- scontrol show hostnames / hostlist / hostlistsorted -----------------------------------
def test_scontrol_show_hostnames_derives_master_addr(cluster, slurm_bin):
    p = run(cluster, slurm_bin, ["scontrol", "show", "hostnames", "tux[1-3],gpu07"])
    assert (p.returncode, p.stdout) == (0, "tux1\ntux2\ntux3\ngpu07\n"), p.stderr
    p = run(cluster, slurm_bin, ["scontrol", "show", "hostlist", "tux2,tux1,tux2,tux3"])
    assert p.stdout == "tux[2,1-3]\n", p.stdout + p.stderr
    p = run(cluster, slurm_bin, ["scontrol", "show", "hostlistsorted", "tux2,tux1,tux2,tux3"])
    assert p.stdout == "tux[1-2,2-3]\n", p.stdout + p.stderr
    p = run(cluster, slurm_bin, ["scontrol", "show", "hostnames"])
    assert p.returncode == 1 and "SLURM_JOB_NODELIST is not set" in p.stderr
    # The public multi-node recipe: MASTER_ADDR from the first host of the job.
    wrap = ('MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1); '
            'echo master=$MASTER_ADDR; echo all=$(scontrol show hostnames | tr "\\n" " ")')
    _, _, out = batch(cluster, slurm_bin, ["-N2"], wrap)
    assert "master=it1\n" in out and "all=it1 it2\n" in out, out


# ---- srun -o/-e/-i and filename patterns ---------------------------------------------------
def test_srun_output_and_error_per_task_with_patterns(cluster, slurm_bin):
    wrap = ("srun -N2 --ntasks-per-node=2 --unbuffered --output=o-%j-%J-%s-%t-%n-%N-%2t.txt "
            "--error=e-%j_%3t.txt bash -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'; "
            "srun -n1 -o single-%x.txt bash -c 'echo one; echo two >&2'")
    work, job, out = batch(cluster, slurm_bin, ["-N2", "--ntasks-per-node=2", "-J", "pat"], wrap)
    nodes = {0: ("0", "it1"), 1: ("0", "it1"), 2: ("1", "it2"), 3: ("1", "it2")}
    for t, (n, host) in nodes.items():
        name = f"o-{job}-{job}.0-0-{t}-{n}-{host}-0{t}.txt"
        assert open(os.path.join(work, name)).read() == f"out {t}\n", (name, os.listdir(work))
        assert open(os.path.join(work, f"e-{job}_00{t}.txt")).read() == f"err {t}\n"
    # Without --error, stderr goes to the --output file too (srun).
    lines = sorted(open(os.path.join(work, "single-pat.txt")).read().splitlines())
    assert lines == ["one", "two"]
    assert "out 0" not in out  # nothing reached the batch output


def test_srun_output_modes_none_and_task_id(cluster, slurm_bin):
    wrap = ("srun -n2 -o none bash -c 'echo hidden'; echo ---; "
            "srun -n2 --output=1 bash -c 'echo task=$SLURM_PROCID'")
    _, _, out = batch(cluster, slurm_bin, ["-n2"], wrap)
    assert out == "---\ntask=1\n", out


def test_srun_input_file_per_task(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    for t in (0, 1):
        with open(os.path.join(work, f"in-{t}.txt"), "w") as f:
            f.write(f"line for {t}\n")
    wrap = "srun -n2 -l --input=in-%t.txt cat; srun -n1 -i none cat; echo rc=$?"
    _, _, out = batch(cluster, slurm_bin, ["-n2"], wrap)
    assert sorted(out.splitlines()[:2]) == ["0: line for 0", "1: line for 1"], out
    assert out.splitlines()[2] == "rc=0", out


# Issue 19 (h19 s7): srun's stdin goes to every task (-i all, the default), to one (-i N), or
# nowhere (-i none), on every node of the step; a task that reads slowly holds srun back, and a
# step whose tasks never read ends anyway.
def test_srun_forwards_its_stdin_to_the_tasks(cluster, slurm_bin):
    wrap = ("echo hi | srun -N2 -n2 cat; echo ---; echo hi | srun -N2 -n2 -i 1 -l cat; echo ---; "
            "echo hi | srun -n2 -i none cat; echo rc=$?; "
            "head -c 3000000 /dev/zero | srun -N2 -n2 -l bash -c 'sleep 1; wc -c'; "
            "yes | srun -N2 -n2 true; echo yes-rc=$?; "
            "srun -n2 -i 2 true; echo bad-rc=$?; "
            "printf 'x\\ny\\n' > shared-in.txt; srun -N2 -n2 -l -i shared-in.txt cat")
    _, _, out = batch(cluster, slurm_bin, ["-N2", "-n2"], wrap, timeout=90)
    parts = out.split("---\n")
    assert parts[0] == "hi\nhi\n", out
    assert parts[1] == "1: hi\n", out  # task 0 read /dev/null
    assert "rc=0\n" in parts[2], out
    assert sorted(re.findall(r"^(\d): (\d+)$", parts[2], re.M)) == [("0", "3000000"),
                                                                     ("1", "3000000")], out
    assert "yes-rc=0\n" in out, out
    # srun: 2 is no task of a 2-task step: a file name (missing here).
    assert re.search(r"Could not open stdin file \S+/2: No such file or directory", out), out
    assert "bad-rc=1" in out, out
    # A file without %t %n %N %u: srun reads it and every task gets it.
    assert sorted(out.split("bad-rc=1\n")[1].splitlines()) == ["0: x", "0: y", "1: x", "1: y"], out
    # Outside a job too (srun makes the allocation), from the caller's stdin.
    p = run(cluster, slurm_bin, ["srun", "-N2", "-n2", "-l", "cat"], input="one\ntwo\n",
            timeout=90)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.splitlines()) == ["0: one", "0: two", "1: one", "1: two"], p.stdout


def test_srun_open_mode_append(cluster, slurm_bin):
    wrap = "srun -n1 -o app.txt echo one; srun -n1 --open-mode=append -o app.txt echo two"
    work, _, _ = batch(cluster, slurm_bin, ["-n1"], wrap)
    assert open(os.path.join(work, "app.txt")).read() == "one\ntwo\n"


# ---- --export, --wait, -w/-x, accepted and refused options ---------------------------------
def test_srun_export(cluster, slurm_bin):
    wrap = ("export FOO=from-job; srun -n1 --export=NONE,BAR=1 /bin/sh -c "
            "'echo none=[$FOO][$BAR][${SLURM_JOB_ID:+job}]'; "
            "srun -n1 --export=ALL,BAR=2 /bin/sh -c 'echo all=[$FOO][$BAR]'; "
            "SLURM_EXPORT_ENV=NONE srun -n1 /bin/sh -c 'echo env=[$FOO]'")
    _, _, out = batch(cluster, slurm_bin, ["-n1"], wrap)
    assert "none=[][1][job]\n" in out and "all=[from-job][2]\n" in out, out
    assert "env=[]\n" in out, out


def test_srun_wait_ends_the_step_after_the_first_task(cluster, slurm_bin):
    wrap = ("start=$(date +%s); srun -n2 --wait=2 bash -c '[ $SLURM_PROCID = 0 ] || sleep 60'; "
            "echo rc=$? took=$(( $(date +%s) - start ))")
    _, _, out = batch(cluster, slurm_bin, ["-n2"], wrap)
    m = re.search(r"rc=(\d+) took=(\d+)", out)
    assert m and m.group(1) != "0" and int(m.group(2)) < 20, out
    assert "terminating the remaining tasks" in out, out


def test_srun_nodelist_and_exclude(cluster, slurm_bin):
    wrap = ('srun -w "$(scontrol show hostnames | head -n1)" bash -c \'echo w=$SLURMD_NODENAME\'; '
            "srun -x it2 bash -c 'echo x=$SLURMD_NODENAME'; "
            "srun -w it9 true; echo rc=$?; srun -w it2 bash -c 'echo w2=$SLURMD_NODENAME'; "
            "echo rc2=$?; srun -x it1 bash -c 'echo x2=$SLURMD_NODENAME'")
    _, _, out = batch(cluster, slurm_bin, ["-N2"], wrap)
    assert "w=it1\n" in out and "x=it1\n" in out, out
    assert "Requested node configuration is not available: node it9 is not part of job" in out
    assert "rc=1" in out, out
    # Issue 19 (h19): a step on any node of the allocation, not only its first ones.
    assert "w2=it2\n" in out and "rc2=0" in out and "x2=it2\n" in out, out


def test_srun_accepts_the_options_scripts_use(cluster, slurm_bin):
    wrap = ("srun -n1 --mem=100M --mem-per-cpu=50M --exact --overlap --exclusive "
            "--cpu-bind=cores --accel-bind=g --unbuffered --kill-on-bad-exit=1 "
            "--distribution=block --hint=nomultithread --mpi=none echo accepted")
    _, _, out = batch(cluster, slurm_bin, ["-n1"], wrap)
    assert out == "accepted\n", out


@pytest.mark.parametrize("opt,words", [
    ("--het-group=0", "heterogeneous jobs are not supported"),
    ("--container-image=nvcr.io#nvidia/pytorch:24.01-py3", "no OCI runtime is configured"),
    ("--container-mounts=/data:/data", "no OCI runtime is configured"),
    ("--mpi=pmix", "no PMIx server"),
])
def test_srun_refuses_what_it_cannot_do_clearly(cluster, slurm_bin, opt, words):
    p = run(cluster, slurm_bin, ["srun", "--jobid=1", opt, "true"])
    assert p.returncode == 1 and words in p.stderr, p.stderr
    assert p.stderr.startswith("srun: error: "), p.stderr


# ---- srun and salloc outside an allocation -------------------------------------------------
def test_srun_outside_a_job_makes_an_allocation(cluster, slurm_bin):
    p = run(cluster, slurm_bin, ["srun", "-N2", "-l", "bash", "-c",
                                 "echo $SLURMD_NODENAME $SLURM_JOB_NUM_NODES $SLURM_JOB_NODELIST "
                                 "$SLURM_JOB_ID"], timeout=90)
    assert p.returncode == 0, p.stderr
    lines = sorted(p.stdout.splitlines())
    job = lines[0].split()[-1]
    assert lines == [f"0: it1 2 it[1-2] {job}", f"1: it2 2 it[1-2] {job}"], p.stdout
    state, code = cluster.wait_state(int(job), ["COMPLETED", "FAILED", "CANCELLED"], timeout=30)
    assert (state, code) == ("COMPLETED", "0:0")  # released: the allocation ends
    p = run(cluster, slurm_bin, ["srun", "-n1", "bash", "-c", "exit 3"], timeout=90)
    assert p.returncode == 3


def test_salloc_runs_a_command_in_an_allocation(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    script = ("echo id=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST n=$SLURM_NNODES "
              "cpus=$SLURM_JOB_CPUS_PER_NODE; srun -l hostname >/dev/null; srun bash -c "
              "'echo step=$SLURM_JOB_ID.$SLURM_STEP_ID on $SLURMD_NODENAME'")
    p = run(cluster, slurm_bin, ["salloc", "-N2", "bash", "-c", script], cwd=work, timeout=90)
    assert p.returncode == 0, p.stderr
    m = re.search(r"id=(\d+) nodes=it\[1-2\] n=2 cpus=(\S+)", p.stdout)
    assert m, p.stdout
    job = m.group(1)
    assert f"salloc: Granted job allocation {job}" in p.stderr
    assert f"salloc: Relinquishing job allocation {job}" in p.stderr
    assert sorted(re.findall(r"step=(\S+) on (\S+)", p.stdout)) == [
        (f"{job}.1", "it1"), (f"{job}.1", "it2")], p.stdout
    state, _ = cluster.wait_state(int(job), ["COMPLETED"], timeout=30)
    assert state == "COMPLETED"
    p = run(cluster, slurm_bin, ["salloc", "-n1", "bash", "-c", "exit 7"], timeout=90)
    assert p.returncode == 7


# ---- SLURM_* variables ---------------------------------------------------------------------
def test_batch_and_step_variables(cluster, slurm_bin):
    names = ("SLURM_NTASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE SLURM_CPUS_PER_TASK SLURM_JOB_QOS "
             "SLURM_MEM_PER_CPU SLURM_JOB_START_TIME SLURM_JOB_END_TIME SLURM_PROCID SLURM_GTIDS")
    show = "; ".join(f'echo {n}=${n}' for n in names.split())
    wrap = (f"{show}; echo ---; srun -n1 bash -c 'echo step_cpt=$SLURM_CPUS_PER_TASK "
            "gtids=$SLURM_GTIDS'")
    _, _, out = batch(cluster, slurm_bin, ["-N2", "--ntasks-per-node=1", "-c", "2",
                                           "--mem-per-cpu=100M", "-t", "10"], wrap)
    v = dict(l.split("=", 1) for l in out.split("---")[0].splitlines())
    assert v["SLURM_NTASKS_PER_NODE"] == "1" and v["SLURM_CPUS_PER_TASK"] == "2", out
    assert v["SLURM_JOB_CPUS_PER_NODE"] == "2(x2)" and v["SLURM_JOB_QOS"] == "normal", out
    assert v["SLURM_MEM_PER_CPU"] == "100" and v["SLURM_PROCID"] == "0", out
    assert int(v["SLURM_JOB_END_TIME"]) - int(v["SLURM_JOB_START_TIME"]) == 600, out
    assert "step_cpt=2 gtids=0\n" in out, out  # a step of a -c 2 job sees 2, not 1


def test_array_task_step_and_patterns(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    p = run(cluster, slurm_bin, ["sbatch", "--parsable", "--array=1-5:2", "-o", "arr-%A_%a-%b-%3a.txt",
                                 "--wrap", "echo step=$SLURM_ARRAY_TASK_STEP"], cwd=work, check=True)
    first = int(p.stdout.strip().split(";")[0])

    def files():
        return sorted(f for f in os.listdir(work) if f.startswith(f"arr-{first}_"))
    wait_for(lambda: len(files()) == 3 and all(
        open(os.path.join(work, f)).read() for f in files()), timeout=60, what="3 array outputs")
    assert files() == [f"arr-{first}_1-1-001.txt", f"arr-{first}_3-3-003.txt",
                       f"arr-{first}_5-5-005.txt"], files()
    assert open(os.path.join(work, files()[0])).read() == "step=2\n"


def test_sbatch_filename_patterns(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    pattern = "b-%J-%s-%n-%t-%N-%u-%x-%r-%5j-100%%.txt"
    p = run(cluster, slurm_bin, ["sbatch", "--parsable", "-J", "pj", "-o", pattern, "--wrap", "echo hi"],
            cwd=work, check=True)
    job = int(p.stdout.strip())
    cluster.wait_state(job, ["COMPLETED"], timeout=60)
    name = f"b-{job}-batch-0-0-it1-{USER}-pj-0-{job:05d}-100%.txt"
    assert os.path.exists(os.path.join(work, name)), os.listdir(work)
    p = run(cluster, slurm_bin, ["sbatch", "--parsable", "-o", "esc-\\%j.txt", "--wrap", "echo hi"],
            cwd=work, check=True)
    cluster.wait_state(int(p.stdout.strip()), ["COMPLETED"], timeout=60)
    assert os.path.exists(os.path.join(work, "esc-%j.txt")), os.listdir(work)

"""trun (srun) end to end: a real munged, tessera-ctld (TLS) and two tessera-noded on loopback.
A batch job calls trun; tasks run on every node of the allocation through the nodes' StepAgent
service, as the job's user, with the per-task Slurm variables."""
import os
import re
import subprocess
import sys

import grpc
import pytest

from harness import ROOT, wait_for


@pytest.fixture(scope="module")
def step_stubs(tmp_path_factory):
    out = tmp_path_factory.mktemp("step_stubs")
    from grpc_tools import protoc
    proto_dir = os.path.join(ROOT, "proto")
    for f in ("types", "controller", "agent", "step"):
        rc = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={out}",
                          f"--grpc_python_out={out}", f"{proto_dir}/tessera/v1/{f}.proto"])
        assert rc == 0
    sys.path.insert(0, str(out))
    from tessera.v1 import step_pb2, step_pb2_grpc
    return step_pb2, step_pb2_grpc


def cred(cluster, user):
    argv = ["runuser", "-u", user, "--", "munge", "-S", cluster.munge_socket, "-n"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def node_channel(cluster, port):
    ca = open(os.path.join(cluster.dir, "tls", "ca.pem"), "rb").read()
    return grpc.secure_channel(f"127.0.0.1:{port}", grpc.ssl_channel_credentials(ca))


def test_trun_runs_every_rank_on_both_nodes(cluster):
    user = "tessera-alice"
    work = cluster.user_dir(user)
    wrap = ("trun -l bash -c 'echo rank=$SLURM_PROCID local=$SLURM_LOCALID node=$SLURM_NODEID "
            "host=$SLURMD_NODENAME n=$SLURM_NTASKS step=$SLURM_STEP_ID world=$WORLD_SIZE "
            "uid=$(id -un) cwd=$(pwd)'")
    job = cluster.submit(["-N2", "--ntasks-per-node=2", "-o", "trun-%j.out", "--wrap", wrap],
                         user=user, cwd=work)
    state, code = cluster.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED"], timeout=60)
    out = open(os.path.join(work, f"trun-{job}.out")).read()
    assert (state, code) == ("COMPLETED", "0:0"), out
    lines = re.findall(r"^(\d+): rank=(\d+) local=(\d+) node=(\d+) host=(\S+) n=(\d+) step=(\d+) "
                       r"world=(\d+) uid=(\S+) cwd=(\S+)$", out, re.M)
    assert len(lines) == 4, out
    ranks = sorted(int(l[1]) for l in lines)
    assert ranks == [0, 1, 2, 3]
    hosts = {}
    for label, rank, local, node, host, n, step, world, uid, cwd in lines:
        assert label == rank  # -l prefixes the task's own rank
        assert n == "4" and world == "4" and step == "0"
        assert uid == user and cwd == work
        hosts.setdefault(host, set()).add((int(node), int(local)))
    assert set(hosts) == {"it1", "it2"}, out
    for host, ids in hosts.items():
        assert {local for _, local in ids} == {0, 1}
        assert len({node for node, _ in ids}) == 1  # one SLURM_NODEID per node
    assert {next(iter(ids))[0] for ids in hosts.values()} == {0, 1}
    # The step is in accounting after its job, as sacct shows steps.
    acct = cluster.run(["tacct", "-j", str(job), "-P", "-n", "-o", "JobID,JobName,State,ExitCode,NodeList"],
                       user=user).stdout.splitlines()
    assert acct[0].startswith(f"{job}|wrap|COMPLETED|0:0")
    assert acct[1].startswith(f"{job}.batch|batch|COMPLETED|0:0|"), acct  # issue 19
    assert acct[2] == f"{job}.0|bash|COMPLETED|0:0|it[1-2]", acct


def test_trun_exit_code_is_the_worst_tasks(cluster):
    work = cluster.user_dir("tessera-alice")
    wrap = "trun -n2 bash -c 'exit $((SLURM_PROCID + 2))'; echo trun=$?"
    job = cluster.submit(["-n2", "-o", "exit-%j.out", "--wrap", wrap], user="tessera-alice", cwd=work)
    cluster.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)
    assert "trun=3" in open(os.path.join(work, f"exit-{job}.out")).read()
    job = cluster.submit(["-N1", "--wrap", "trun bash -c 'exit 3'"], user="tessera-alice", cwd=work)
    state, code = cluster.wait_state(job, ["COMPLETED", "FAILED"], timeout=60)
    assert (state, code) == ("FAILED", "3:0")


def test_trun_outside_a_job_makes_an_allocation(cluster):
    # Issue 19: as srun, trun outside a job first obtains an allocation, then runs the step.
    p = cluster.run(["trun", "-n1", "bash", "-c", "echo job=$SLURM_JOB_ID"], user="tessera-alice",
                    check=False, timeout=90)
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"job=\d+\n", p.stdout), p.stdout


def test_other_users_cannot_run_tasks_in_a_step(cluster, step_stubs):
    pb, rpc = step_stubs
    work = cluster.user_dir("tessera-alice")
    job = cluster.submit(["-N1", "--wrap", "trun sleep 60"], user="tessera-alice", cwd=work)
    try:
        wait_for(lambda: any(f"step {job}.0: started" in open(os.path.join(cluster.dir, f"noded-{n}.log")).read()
                             for n in cluster.nodes), timeout=30, what="the step to start")
        # trun with another user's job: the controller refuses to create a step.
        p = cluster.run(["trun", f"--jobid={job}", "true"], user="tessera-bob", check=False)
        assert p.returncode == 1
        assert f"trun: error: cannot create a step in job {job}:" in p.stderr
        # Straight to the node: bob may neither run nor signal alice's step.
        for port in cluster.node_ports:
            stub = rpc.StepAgentStub(node_channel(cluster, port))
            req = pb.RunTasksRequest(job_id=job, step_id=0, argv=["id"], cwd="/tmp")
            with pytest.raises(grpc.RpcError) as e:
                list(stub.RunTasks(req, metadata=[("x-tessera-munge", cred(cluster, "tessera-bob"))]))
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert f"step {job}.0" in e.value.details()
            with pytest.raises(grpc.RpcError) as e:
                stub.SignalTasks(pb.SignalTasksRequest(job_id=job, step_id=0, signal=9),
                                 metadata=[("x-tessera-munge", cred(cluster, "tessera-bob"))])
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
            with pytest.raises(grpc.RpcError) as e:  # no credential at all
                list(stub.RunTasks(req))
            assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert cluster.acct_state(job)[0] == "RUNNING"
    finally:
        cluster.run(["tcancel", str(job)], check=False)
    state, _ = cluster.wait_state(job, "CANCELLED", timeout=30)


def test_cancelling_the_job_ends_the_tasks_on_every_node(cluster):
    work = cluster.user_dir("tessera-alice")
    marker = "3021.5"  # a distinctive sleep argument to find the tasks by
    job = cluster.submit(["-N2", "--ntasks-per-node=1", "--wrap", f"trun sleep {marker}"],
                         user="tessera-alice", cwd=work)

    def tasks():
        p = subprocess.run(["pgrep", "-u", "tessera-alice", "-f", f"^sleep {marker}$"],
                           capture_output=True, text=True)
        return p.stdout.split()
    wait_for(lambda: len(tasks()) == 2, timeout=30, what="a task on each node")
    cluster.run(["tcancel", str(job)], user="tessera-alice")
    state, _ = cluster.wait_state(job, "CANCELLED", timeout=30)
    wait_for(lambda: not tasks(), timeout=15, what="the step's tasks to end")

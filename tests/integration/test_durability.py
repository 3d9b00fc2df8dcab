"""Crash safety: kill -9 of the controller and of a node daemon."""
import os
import signal
import time

from harness import wait_for


def test_ctld_kill9_loses_nothing_and_running_job_completes(fresh_cluster):
    c = fresh_cluster(nodes=2, node_timeout=30).start()
    work = c.user_dir("tessera-alice")
    running = c.submit(["--wrap", "sleep 4; echo finished", "-o", "run.out"], user="tessera-alice", cwd=work)
    wait_for(lambda: c.acct_state(running)[0] == "RUNNING", what="job to run")
    held = [c.submit(["--hold", "--wrap", "true"], user="tessera-alice", cwd=work) for _ in range(20)]
    c.kill("ctld", signal.SIGKILL)
    time.sleep(0.5)
    c.start_ctld()
    # Every acknowledged job is still there, in the state it had.
    out = c.run(["tqueue", "-h", "-t", "all", "-o", "%i %T"]).stdout
    states = dict(line.split() for line in out.splitlines())
    for j in held:
        assert states.get(str(j)) == "PENDING", f"held job {j} lost after kill -9: {out}"
    # The running job finished while (or after) ctld was down and is recorded.
    assert c.wait_state(running, "COMPLETED", timeout=30) == ("COMPLETED", "0:0")
    assert open(os.path.join(work, "run.out")).read().strip() == "finished"
    # New ids never reuse old ones.
    new = c.submit(["--hold", "--wrap", "true"], user="tessera-alice", cwd=work)
    assert new > max(held)


def test_dead_node_is_marked_down_and_its_job_fails(fresh_cluster):
    c = fresh_cluster(nodes=2, node_timeout=3).start()
    work = c.user_dir("tessera-bob")
    job = c.submit(["-w", "it2", "--no-requeue", "--wrap", "sleep 300"], user="tessera-bob", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    c.kill("noded-it2", signal.SIGSTOP)  # a hung node: no heartbeats, stream stays open
    state, _ = c.wait_state(job, "NODE_FAIL", timeout=20)
    assert state == "NODE_FAIL"
    assert c.node_states()["it2"].rstrip("*") == "down"
    c.procs["noded-it2"].send_signal(signal.SIGCONT)


def test_requeueable_job_moves_off_a_dead_node(fresh_cluster):
    c = fresh_cluster(nodes=2, node_timeout=3).start()
    work = c.user_dir("tessera-bob")
    # Requeue is the default (Slurm's JobRequeue=1); the job must run again elsewhere.
    job = c.submit(["-o", "rq.out", "--wrap", "echo ran on $SLURMD_NODENAME; sleep 2"], user="tessera-bob", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    first = c.run(["tqueue", "-h", "-j", str(job), "-o", "%N"]).stdout.strip()
    c.kill(f"noded-{first}", signal.SIGSTOP)
    state, _ = c.wait_state(job, "COMPLETED", timeout=40)
    assert state == "COMPLETED"
    out = c.run(["tcontrol", "show", "job", str(job)]).stdout
    assert "Restarts=1" in out
    c.procs[f"noded-{first}"].send_signal(signal.SIGCONT)


def test_noded_kill9_during_a_job_keeps_its_exit_code(fresh_cluster):
    c = fresh_cluster(nodes=1, node_timeout=30).start()
    work = c.user_dir("tessera-alice")
    job = c.submit(["--wrap", "sleep 3; echo done; exit 7", "-o", "k.out"], user="tessera-alice", cwd=work)
    wait_for(lambda: c.acct_state(job)[0] == "RUNNING", what="job to run")
    c.kill("noded-it1", signal.SIGKILL)
    time.sleep(4)  # the job ends while its node daemon is away
    assert c.acct_state(job)[0] == "RUNNING"
    c.start_noded("it1")
    assert c.wait_state(job, "FAILED", timeout=30) == ("FAILED", "7:0")
    assert open(os.path.join(work, "k.out")).read().strip() == "done"

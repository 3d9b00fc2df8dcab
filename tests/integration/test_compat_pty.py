"""Issue 19 (h19 s6): srun --pty / trun --pty. Task 0 runs on a pseudo-terminal allocated on its
node by noded; srun forwards its terminal both ways (raw mode, window size, Ctrl-C as a
character), and the task's exit code is srun's. The client side is a real pty here (os.openpty),
as a user's terminal would be. A real munged, tessera-ctld (TLS) and two tessera-noded."""
import fcntl
import os
import pwd
import select
import struct
import subprocess
import termios
import time

import pytest

from harness import BIN, install_slurm_names

USER = "tessera-alice"


@pytest.fixture(scope="module")
def slurm_bin(cluster):
    return install_slurm_names(cluster)


def user_argv(cluster, slurm_bin, argv):
    e = cluster.env({"PATH": f"{slurm_bin}:{BIN}:/usr/bin:/bin"})
    pw = pwd.getpwnam(USER)
    e.update({"HOME": pw.pw_dir, "USER": USER, "LOGNAME": USER, "PS1": "PROMPT> ",
              "TERM": "xterm"})
    return ["runuser", "-u", USER, "--", "env"] + [f"{k}={v}" for k, v in e.items()] + argv


class Terminal:
    """A process on the slave side of a real pty; the test types on the master side."""

    def __init__(self, argv, cwd, rows=30, cols=100):
        self.master, slave = os.openpty()
        self.resize(rows, cols)
        self.slave = os.dup(slave)  # kept: srun must give the terminal back as it was
        self.before = termios.tcgetattr(self.slave)
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                                     start_new_session=True)
        os.close(slave)
        self.seen = b""

    def resize(self, rows, cols):
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def type(self, text):
        os.write(self.master, text.encode())

    def expect(self, text, timeout=30):
        """Waits for `text` in the output after what earlier calls consumed."""
        want = text.encode()
        deadline = time.time() + timeout
        while want not in self.seen:
            left = deadline - time.time()
            assert left > 0, f"no {text!r} within {timeout}s; saw {self.seen!r}"
            r, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if r:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:
                    pass
        i = self.seen.index(want) + len(want)
        before, self.seen = self.seen[:i], self.seen[i:]
        return before.decode(errors="replace")

    def wait(self, timeout=60):
        rc = self.proc.wait(timeout=timeout)
        after = termios.tcgetattr(self.slave)
        os.close(self.slave)
        os.close(self.master)
        return rc, after


def test_srun_pty_outside_an_allocation_is_an_interactive_shell(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    t = Terminal(user_argv(cluster, slurm_bin,
                           ["srun", "-N1", "--pty", "bash", "--norc", "--noprofile", "-i"]), work)
    try:
        t.expect("PROMPT> ", timeout=90)
        # Each command ends with a marker only its output has (the echoed line shows $((...))).
        t.type("echo A$((6*7)) $SLURM_JOB_ID $SLURM_STEP_ID; tty; stty size; echo END$((1+1))\r")
        out = t.expect("END2")
        assert "A42 " in out and "/dev/pts/" in out and "30 100" in out, out
        # The window grows on the user's side: the remote terminal follows.
        t.resize(41, 123)
        time.sleep(0.5)
        t.type("stty size; echo END$((2+1))\r")
        assert "41 123" in t.expect("END3"), t.seen
        # Ctrl-C reaches the remote foreground job as a character of the terminal (raw mode
        # here), not as a signal to srun.
        t.type("sleep 60\r")
        time.sleep(1.0)
        t.type("\x03")
        time.sleep(0.5)
        t.type("echo after-$? END$((3+1))\r")
        assert "after-130" in t.expect("END4"), t.seen
        t.type("exit 5\r")
        rc, after = t.wait()
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
    assert rc == 5  # the task's exit code is srun's
    assert after == t.before  # the terminal is back in its own mode (echo, canonical)


def test_srun_pty_inside_salloc_reads_the_terminal(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    script = "tty; read -r x; echo got=$x on $SLURMD_NODENAME; exit 3"
    t = Terminal(user_argv(cluster, slurm_bin,
                           ["salloc", "-N2", "srun", "--pty", "bash", "-c", script]), work)
    try:
        out = t.expect("/dev/pts/", timeout=90)
        assert "Granted job allocation" in out, out
        t.type("hello there\r")
        out = t.expect("got=hello there on it1")
        rc, _ = t.wait()
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
    assert rc == 3


def test_srun_pty_with_piped_stdin_forwards_it_and_its_end(cluster, slurm_bin):
    p = cluster.run(user_argv(cluster, slurm_bin, ["srun", "-n1", "--pty", "bash"]),
                    input="echo piped-$((1+1)) tty-$([ -t 0 ] && echo yes)\nexit 4\n",
                    check=False, timeout=90)
    assert p.returncode == 4, p.stderr
    assert "piped-2 tty-yes" in p.stdout, p.stdout  # (the echoed line shows $((1+1)))


def test_srun_pty_discards_other_tasks_output(cluster, slurm_bin):
    p = cluster.run(user_argv(cluster, slurm_bin, [
        "srun", "-n2", "--pty", "bash", "-c", "echo from-$SLURM_PROCID"]), input="",
        check=False, timeout=90)
    assert p.returncode == 0, p.stderr
    assert "from-0" in p.stdout and "from-1" not in p.stdout, p.stdout


# Issue 19 (h19 s7): without --pty srun forwards its terminal's lines to every task (the
# terminal stays in its own, canonical mode: it echoes and ^D ends the input).
def test_srun_without_pty_forwards_the_terminal_to_every_task(cluster, slurm_bin):
    work = cluster.user_dir(USER)
    t = Terminal(user_argv(cluster, slurm_bin, ["salloc", "-N2", "srun", "-N2", "-n2", "-l",
                                                "bash", "-c", "echo ready$SLURM_PROCID; cat"]),
                 work)
    try:
        t.expect("ready", timeout=90)
        t.expect("ready")  # both tasks run
        t.type("hello there\r")
        out = t.expect("hello there")  # the terminal's echo
        out += t.expect("hello there") + t.expect("hello there")  # from each task
        t.type("\x04")  # ^D: end of input, the tasks' cat ends
        rc, after = t.wait()
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
    assert rc == 0, out
    assert after == t.before
    assert "0: hello there" in out and "1: hello there" in out, out

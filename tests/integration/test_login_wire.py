"""Issue 20 §1: commands from a login node over ctld's TCP wire (ControllerWirePort: the local
socket's framing with a munge credential per request, rpc/wire_tcp.h). The login node is a config
without the controller's socket that names the controller at 127.0.0.2, a second loopback
address; its SlurmctldPort points at a closed port, so only the wire can answer there."""
import os
import pwd
import re
import socket
import struct
import subprocess

import pytest

from harness import BIN, Cluster, free_ports

USER = "tessera-alice"


@pytest.fixture(scope="module")
def wired():
    port = free_ports(1)[0]
    c = Cluster(nodes=1, tls=False, extra_conf=f"ControllerWirePort={port}")
    c.wire_port = port
    try:
        yield c.start()
    finally:
        c.stop()


def login_conf(c, name, wire_port, grpc_port):
    text = open(c.conf).read()
    text = re.sub(r"(?m)^SlurmctldHost=.*$", "SlurmctldHost=localhost(127.0.0.2)", text)
    text = re.sub(r"(?m)^SlurmctldPort=.*$", f"SlurmctldPort={grpc_port}", text)
    text = re.sub(r"(?m)^ControllerWirePort=.*$", f"ControllerWirePort={wire_port}", text)
    path = os.path.join(c.dir, "etc", name)
    with open(path, "w") as f:
        f.write(text + "ControllerSocket=none\n")
    os.chmod(path, 0o644)
    return {"TESSERA_CONF": path}


def test_submit_list_and_cancel_from_a_login_node_over_the_wire(wired):
    c = wired
    closed = free_ports(1)[0]  # nothing listens there: gRPC cannot answer
    login = login_conf(c, "login-wire.conf", c.wire_port, closed)
    work = c.user_dir(USER)
    pw = pwd.getpwnam(USER)
    script = "#!/bin/sh\n#SBATCH -o wire-%j.txt\necho uid=$(id -u) user=$(id -un)\n"
    p = c.run(["tbatch", "--parsable"], user=USER, cwd=work, input=script, env=login)
    job = int(p.stdout.strip())
    state, _ = c.wait_state(job, ["COMPLETED", "FAILED"])
    assert state == "COMPLETED"
    out = os.path.join(work, f"wire-{job}.txt")
    assert open(out).read() == f"uid={pw.pw_uid} user={USER}\n"  # ran as the submitter
    assert os.stat(out).st_uid == pw.pw_uid
    held = c.submit(["--hold", "--wrap", "true"], user=USER, cwd=work)  # local socket
    p = c.run(["tqueue", "-h", "-o", "%i %u %T"], user=USER, env=login)
    assert f"{held} {USER} PENDING" in p.stdout
    p = c.run(["tacct", "-X", "-n", "-P", "-j", str(job), "-o", "JobID,User,State"], user=USER,
              env=login)
    assert f"{job}|{USER}|COMPLETED" in p.stdout
    # Another user is still not the owner over the wire.
    p = c.run(["tcancel", str(held)], user="tessera-bob", env=login, check=False)
    assert p.returncode != 0 and "permission denied" in p.stderr.lower(), p.stderr
    c.run(["tcancel", str(held)], user=USER, env=login)
    assert c.wait_state(held, "CANCELLED")[0] == "CANCELLED"
    log = open(os.path.join(c.dir, "ctld.log")).read()
    assert "commands from other hosts also on 0.0.0.0:" in log


def test_a_closed_wire_port_falls_back_to_grpc(wired):
    c = wired
    closed = free_ports(1)[0]
    login = login_conf(c, "login-grpc.conf", closed, c.ctld_port)
    work = c.user_dir(USER)
    job = c.submit(["--hold", "--wrap", "true"], user=USER, cwd=work)
    p = c.run(["tqueue", "-h", "-j", str(job), "-o", "%i %u"], user=USER, env=login)
    assert p.stdout.split() == [str(job), USER]
    # Neither path reachable: the error names the controller, nothing hangs.
    dead = login_conf(c, "login-dead.conf", closed, closed)
    p = c.run(["tqueue"], user=USER, env=dead, check=False, timeout=30)
    assert p.returncode != 0 and "tqueue: error:" in p.stderr, p.stderr
    c.run(["tcancel", str(job)], user=USER)


def frame(method, cred, body=b""):
    m = method.encode()
    payload = bytes([len(m)]) + m + struct.pack("<H", len(cred)) + cred + body
    return struct.pack("<I", len(payload)) + payload


def answer(sock):
    head = b""
    while len(head) < 4:
        got = sock.recv(4 - len(head))
        if not got:
            return None
        head += got
    n = struct.unpack("<I", head)[0]
    data = b""
    while len(data) < n:
        data += sock.recv(n - len(data))
    code, mlen = struct.unpack("<II", data[:8])
    return code, data[8:8 + mlen].decode()


def test_a_replayed_munge_credential_is_refused_by_the_real_munged(wired):
    c = wired
    cred = subprocess.run(["munge", "-n", f"--socket={c.munge_socket}"], capture_output=True,
                          check=True).stdout.strip()
    with socket.create_connection(("127.0.0.2", c.wire_port), timeout=10) as s:
        s.sendall(frame("Ping", cred))
        assert answer(s) == (0, "")
    with socket.create_connection(("127.0.0.2", c.wire_port), timeout=10) as s:
        s.sendall(frame("Ping", cred))  # captured and sent again
        code, msg = answer(s)
        assert code == 16 and "Replayed" in msg, msg  # UNAUTHENTICATED
    with socket.create_connection(("127.0.0.2", c.wire_port), timeout=10) as s:
        s.sendall(frame("Ping", b"MUNGE:forged:"))
        code, msg = answer(s)
        assert code == 16, msg
    log = open(os.path.join(c.dir, "ctld.log")).read()
    assert "auth: refused Ping from wire port" in log



def test_an_unknown_uid_is_refused_over_the_wire_as_over_grpc(wired):
    """A uid without a passwd entry on the controller (a login node's local account): its munge
    credential is valid, and the submission is refused the same way on both paths."""
    c = wired
    closed = free_ports(1)[0]
    paths = {"wire": login_conf(c, "login-w2.conf", c.wire_port, closed),
             "grpc": login_conf(c, "login-g2.conf", closed, c.ctld_port)}
    errors = {}
    for name, env in paths.items():
        p = subprocess.run(["setpriv", "--reuid=54321", "--regid=54321", "--clear-groups",
                            os.path.join(BIN, "tbatch"), "--hold", "--wrap", "true"],
                           env=c.env(env), cwd="/tmp", capture_output=True, text=True, timeout=30)
        assert p.returncode != 0, (name, p.stdout)
        errors[name] = p.stderr.strip()
    assert errors["wire"] == errors["grpc"], errors
    assert "54321" in errors["wire"], errors

"""Authentication and authorization at the RPC boundary, tested with a raw gRPC client."""
import os
import subprocess

import grpc
import pytest

from harness import BUILD, ROOT, wait_for


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    out = tmp_path_factory.mktemp("stubs")
    from grpc_tools import protoc
    proto_dir = os.path.join(ROOT, "proto")
    for f in ("types", "controller", "agent"):
        rc = protoc.main(["protoc", f"-I{proto_dir}", f"--python_out={out}", f"--grpc_python_out={out}",
                          f"{proto_dir}/tessera/v1/{f}.proto"])
        assert rc == 0
    import sys
    sys.path.insert(0, str(out))
    from tessera.v1 import controller_pb2, controller_pb2_grpc
    return controller_pb2, controller_pb2_grpc


def channel(cluster):
    ca = open(os.path.join(cluster.dir, "tls", "ca.pem"), "rb").read()
    return grpc.secure_channel(f"127.0.0.1:{cluster.ctld_port}", grpc.ssl_channel_credentials(ca))


def cred(cluster, user=None):
    argv = ["munge", "-S", cluster.munge_socket, "-n"]
    if user:
        argv = ["runuser", "-u", user, "--"] + argv
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_request_without_credential_is_refused(cluster, stubs):
    pb, rpc = stubs
    stub = rpc.ControllerStub(channel(cluster))
    with pytest.raises(grpc.RpcError) as e:
        stub.ListJobs(pb.ListJobsRequest())
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "no munge credential" in e.value.details()
    log = open(os.path.join(cluster.dir, "ctld.log")).read()
    assert "auth: refused ListJobs" in log


def test_replayed_credential_is_refused(cluster, stubs):
    pb, rpc = stubs
    stub = rpc.ControllerStub(channel(cluster))
    c = cred(cluster, "tessera-alice")
    first = stub.Ping(pb.PingRequest(), metadata=[("x-tessera-munge", c)])
    assert first.caller_uid == int(subprocess.check_output(["id", "-u", "tessera-alice"]))
    with pytest.raises(grpc.RpcError) as e:
        stub.Ping(pb.PingRequest(), metadata=[("x-tessera-munge", c)])
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "replayed" in e.value.details().lower()


def test_garbage_credential_is_refused(cluster, stubs):
    pb, rpc = stubs
    stub = rpc.ControllerStub(channel(cluster))
    with pytest.raises(grpc.RpcError) as e:
        stub.Ping(pb.PingRequest(), metadata=[("x-tessera-munge", "MUNGE:garbage:")])
    assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_users_cannot_drain_nodes_or_register_as_nodes(cluster, stubs):
    pb, rpc = stubs
    stub = rpc.ControllerStub(channel(cluster))
    with pytest.raises(grpc.RpcError) as e:
        stub.UpdateNode(pb.UpdateNodeRequest(name="it1", action=pb.UpdateNodeRequest.DRAIN, reason="x"),
                        metadata=[("x-tessera-munge", cred(cluster, "tessera-bob"))])
    assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED
    p = cluster.run(["tcontrol", "update", "node", "it1", "State=DRAIN", "Reason=x"], user="tessera-bob", check=False)
    assert p.returncode != 0


def test_plaintext_client_cannot_talk_to_tls_controller(cluster, stubs):
    pb, rpc = stubs
    stub = rpc.ControllerStub(grpc.insecure_channel(f"127.0.0.1:{cluster.ctld_port}"))
    with pytest.raises(grpc.RpcError) as e:
        stub.Ping(pb.PingRequest(), metadata=[("x-tessera-munge", cred(cluster))], timeout=5)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE


# ---- the local socket (ControllerSocket): identity from the kernel, same authorization ----

def local_socket(cluster):
    return f"/run/tessera/ctld-{cluster.ctld_port}.sock"


def test_local_socket_caller_is_who_the_kernel_says(cluster):
    path = local_socket(cluster)
    assert os.stat(path).st_mode & 0o777 == 0o666
    job = cluster.submit(["--hold", "--wrap", "true"], user="tessera-alice")
    out = cluster.run(["tqueue", "-h", "-j", str(job), "-o", "%i %u"]).stdout.split()
    assert out == [str(job), "tessera-alice"]
    # bob may not cancel alice's job, over the local socket or over gRPC + munge.
    for env in (None, {"TESSERA_NO_LOCAL_SOCKET": "1"}):
        p = cluster.run(["tcancel", str(job)], user="tessera-bob", check=False, env=env)
        assert p.returncode != 0 and "permission denied" in p.stderr.lower(), (env, p.stderr)
    p = cluster.run(["tcontrol", "update", "node", "it1", "State=DRAIN", "Reason=x"],
                    user="tessera-bob", check=False)
    assert p.returncode != 0 and "administrator" in p.stderr
    cluster.run(["tcancel", str(job)], user="tessera-alice")


def test_local_socket_refuses_malformed_frames(cluster):
    import socket
    import struct

    def call(payload):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(local_socket(cluster))
        s.sendall(payload)
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                break
            data += chunk
            if len(data) >= 4 and len(data) >= 4 + struct.unpack("<I", data[:4])[0]:
                break
        s.close()
        return data

    assert call(struct.pack("<I", 0xFFFFFFF0) + b"xx") == b""  # oversized: dropped
    log = open(os.path.join(cluster.dir, "ctld.log")).read()
    assert "local socket: dropping connection of uid 0: frame length 4294967280 is over the limit" in log
    answer = call(struct.pack("<I", 6) + b"\x05Nope!")           # unknown method
    code, mlen = struct.unpack("<II", answer[4:12])
    assert code == 12 and b"'Nope!' is not served" in answer[12:12 + mlen]
    answer = call(struct.pack("<I", 9) + b"\x04Ping\xff\xff\xff\xff")  # not a PingRequest
    code, mlen = struct.unpack("<II", answer[4:12])
    assert code == 3 and b"malformed PingRequest" in answer[12:12 + mlen]
    cluster.run(["tcontrol", "ping"])  # still answering


def test_submit_jobs_answers_each_spec(cluster, stubs):
    pb, rpc = stubs
    from tessera.v1 import types_pb2
    stub = rpc.ControllerStub(channel(cluster))

    def spec(workdir):
        s = types_pb2.JobSpec(name="bulk", script="#!/bin/sh\ntrue\n", workdir=workdir, hold=True,
                              env_block=b"A=1\0B=two words\0")
        s.task_groups.add(name="main", count=1).per_task.cpus = 1
        return s
    req = pb.SubmitJobsRequest(specs=[spec("/tmp"), spec("relative/dir"), spec("/tmp")])
    resp = stub.SubmitJobs(req, metadata=[("x-tessera-munge", cred(cluster, "tessera-alice"))])
    ok, bad, ok2 = resp.results
    assert ok.job_id > 0 and ok2.job_id > ok.job_id and ok.code == 0
    assert bad.job_id == 0 and bad.code == 3 and "workdir" in bad.error
    out = cluster.run(["tqueue", "-h", "-o", "%i %u %j", "-j", f"{ok.job_id},{ok2.job_id}"]).stdout
    assert sorted(out.split("\n")[:2]) == sorted([f"{ok.job_id} tessera-alice bulk",
                                                  f"{ok2.job_id} tessera-alice bulk"])
    broken = pb.SubmitJobsRequest(specs=[types_pb2.JobSpec(name="x", script="true", workdir="/tmp",
                                                            env_block=b"NOEQUALS\0")])
    broken.specs[0].task_groups.add(name="main", count=1)
    resp = stub.SubmitJobs(broken, metadata=[("x-tessera-munge", cred(cluster))])
    assert resp.results[0].code == 3 and "NOEQUALS" in resp.results[0].error


def test_local_socket_caps_open_connections(cluster):
    import socket
    import struct
    held = []
    try:
        for _ in range(256):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(local_socket(cluster))
            held.append(s)
        extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        extra.settimeout(10)
        extra.connect(local_socket(cluster))
        data = extra.recv(4096)  # a refusal frame (bit 31 of the code), then the close
        assert len(data) >= 8 and struct.unpack("<I", data[4:8])[0] & 0x80000000, data
        assert b"local socket is full (256 connections)" in data
        extra.close()
        wait_for(lambda: "local socket: refusing a connection of uid 0: the controller's local socket "
                 "is full (256 connections)" in open(os.path.join(cluster.dir, "ctld.log")).read(),
                 what="the refusal in the log")
    finally:
        for s in held:
            s.close()
    wait_for(lambda: cluster.run(["tcontrol", "ping"], check=False).returncode == 0,
             what="the controller to answer on its socket again")

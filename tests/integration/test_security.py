"""Authentication and authorization at the RPC boundary, tested with a raw gRPC client."""
import os
import subprocess

import grpc
import pytest

from harness import ROOT, BUILD


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

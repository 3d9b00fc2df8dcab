"""Kubernetes beside the dev cluster (scripts/dev-cluster up --with-k8s): the tests' control plane
(k8s_harness.ControlPlane: etcd, kube-apiserver, kube-scheduler, kube-controller-manager with
generated PKI, token auth, RBAC and the bridge's identity) under <run>/k8s, and tessera-bridge in
front of the dev cluster's tessera-ctld. Every process is left running, its pid in
<run>/pids/k8s-*.pid and <run>/pids/bridge.pid (scripts/dev-cluster down stops them).

Namespaces: `default` runs pods on the host as USER; `oci` (when podman is installed) runs their
images through podman as USER, with a local image built by oci-image.sh (no registry is reachable).

    python3 dev_k8s.py RUN BIN K8S_BIN USER
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from harness import free_ports, wait_for  # noqa: E402
from k8s_harness import ControlPlane  # noqa: E402

IMAGE = "localhost/tessera-busybox:1"


def alive(pidfile):
    try:
        with open(pidfile) as f:
            os.kill(int(f.read()), 0)
        return True
    except (OSError, ValueError):
        return False


def node_ready(cp, name):
    r = cp.kubectl(["get", "node", name, "-o", "json"], check=False)
    if r.returncode != 0:
        return False
    conds = json.loads(r.stdout)["status"].get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conds)


def main(run, bin_dir, k8s_bin, user):
    pids = os.path.join(run, "pids")
    if alive(os.path.join(pids, "bridge.pid")):
        print(f"Kubernetes and the bridge already run; KUBECONFIG={run}/k8s/admin.kubeconfig")
        return 0
    cp = ControlPlane(run, k8s_bin)
    cp.start()
    for key, p in cp.procs.items():
        with open(os.path.join(pids, f"k8s-{key}.pid"), "w") as f:
            f.write(str(p.pid))
    home = subprocess.run(["getent", "passwd", user], capture_output=True, text=True,
                          check=True).stdout.split(":")[5]
    work = os.path.join(home, "k8s")
    os.makedirs(work, exist_ok=True)
    shutil.chown(work, user, user)
    mapping = os.path.join(run, "etc", "bridge-mapping.yaml")
    text = f"namespaces:\n  default:\n    user: {user}\n    workdir: {work}\n"
    podman = shutil.which("podman") and os.path.exists("/bin/busybox")
    if podman:
        subprocess.run([os.path.join(HERE, "oci-image.sh"), user, IMAGE], check=True)
        text += f"  oci:\n    user: {user}\n    workdir: {work}\n    runtime: podman\n"
        cp.kubectl(["create", "namespace", "oci"], check=False)
    with open(mapping, "w") as f:
        f.write(text)
    port = free_ports(1)[0]
    argv = [f"{bin_dir}/tessera-bridge", "--ctld=localhost:16817",
            f"--ctld-tls-ca={run}/tls/ca.pem", f"--munge-socket={run}/munge/munge.sock",
            f"--mapping={mapping}", f"--kubeconfig={cp.bridge_kubeconfig}",
            f"--listen=127.0.0.1:{port}", f"--tls-cert={cp.pki}/bridge-serving.crt",
            f"--tls-key={cp.pki}/bridge-serving.key", f"--client-ca={cp.pki}/ca.crt",
            "--node-ip=127.0.0.1", f"--trun={bin_dir}/trun",  # pod groups' gang jobs
            f"--tessera-conf={run}/etc/tessera.conf"]
    if shutil.which("runc"):
        argv.append("--podman-runtime=runc")  # crun refuses hybrid cgroup v1/v2 hosts
    log = open(os.path.join(run, "log", "bridge.log"), "ab")
    bridge = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    with open(os.path.join(pids, "bridge.pid"), "w") as f:
        f.write(str(bridge.pid))
    try:
        wait_for(lambda: bridge.poll() is None and node_ready(cp, "tessera-cpu"), timeout=120,
                 interval=0.5, what="virtual node tessera-cpu Ready")
        # A pod is refused until the controller-manager has made its namespace's service
        # account (seconds after a fresh start on a loaded machine).
        for ns in ["default"] + (["oci"] if podman else []):
            wait_for(lambda: cp.kubectl(["get", "serviceaccount", "default", "-n", ns],
                                        check=False).returncode == 0,
                     timeout=120, interval=0.5, what=f"service account default in {ns}")
    except AssertionError:
        with open(os.path.join(run, "log", "bridge.log"), errors="replace") as f:
            print("".join(f.readlines()[-20:]))
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))

"""A real Kubernetes control plane for the bridge's tests: etcd, kube-apiserver, kube-scheduler
and kube-controller-manager (built by tests/bridge/k8s-binaries.sh) on loopback, with generated
certificates, token authentication, RBAC, and a dedicated RBAC identity for tessera-bridge; the
GenericWorkload feature gate (Kubernetes' own PodGroup) on; the Volcano and scheduler-plugins
PodGroup CRDs installed.

Facts this harness encodes (seen on these machines):
- the apiserver needs --endpoint-reconciler-type=none on loopback;
- the controller-manager needs --use-service-account-credentials=true, or nodes keep the
  not-ready taint;
- `kubectl logs` needs the apiserver's kubelet client certificate (--kubelet-client-*), the
  bridge's serving certificate signed by a CA the apiserver trusts
  (--kubelet-certificate-authority), and system:kubelet-api-admin bound to the apiserver's client
  identity.
"""
import json
import os
import secrets
import subprocess
import time

from harness import free_ports, wait_for

KUBECTL = os.environ.get("KUBECTL", "kubectl")

BRIDGE_RBAC = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: tessera-bridge}
rules:
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [nodes/status]
  verbs: [get, update, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, delete]
- apiGroups: [""]
  resources: [pods/status]
  verbs: [get, update, patch]
- apiGroups: [""]
  resources: [configmaps, secrets, services]
  verbs: [get, list, watch]
- apiGroups: ["", events.k8s.io]
  resources: [events]
  verbs: [create, update, patch]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [scheduling.k8s.io, scheduling.volcano.sh, scheduling.x-k8s.io]
  resources: [podgroups]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: tessera-bridge}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: tessera-bridge}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: tessera-bridge}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: apiserver-kubelet-api-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}
"""


# The PodGroup kinds of Volcano and of scheduler-plugins (coscheduling), reduced to what the
# bridge reads (spec.minMember): the projects' own CRDs need their controllers' webhooks.
GROUP_CRDS = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.scheduling.volcano.sh}
spec:
  group: scheduling.volcano.sh
  names: {kind: PodGroup, plural: podgroups, singular: podgroup, shortNames: [pg]}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              minMember: {type: integer, format: int32}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: podgroups.scheduling.x-k8s.io}
spec:
  group: scheduling.x-k8s.io
  names: {kind: PodGroup, plural: podgroups, singular: podgroup, shortNames: [pgs]}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          spec:
            type: object
            x-kubernetes-preserve-unknown-fields: true
            properties:
              minMember: {type: integer, format: int32}
"""

# Kubernetes' own PodGroup (scheduling.k8s.io/v1beta1) is beta and off by default in 1.37.
FEATURE_GATES = "--feature-gates=GenericWorkload=true"


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_cert(d, name, cn, org=None, san=None, client=False):
    """A key and a certificate signed by d/ca.{crt,key}."""
    subj = f"/CN={cn}" + (f"/O={org}" if org else "")
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
             f"{name}.csr", "-subj", subj, cwd=d)
    ext = ["basicConstraints=CA:FALSE", "keyUsage=digitalSignature,keyEncipherment",
           "extendedKeyUsage=" + ("clientAuth" if client else "serverAuth,clientAuth")]
    if san:
        ext.append("subjectAltName=" + san)
    with open(os.path.join(d, f"{name}.ext"), "w") as f:
        f.write("\n".join(ext) + "\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext", cwd=d)


def kubeconfig(path, server, ca, user, token=None, cert=None, key=None):
    u = {"token": token} if token else {"client-certificate": cert, "client-key": key}
    cfg = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": "t", "cluster": {"server": server, "certificate-authority": ca}}],
           "users": [{"name": user, "user": u}],
           "contexts": [{"name": "t", "context": {"cluster": "t", "user": user}}],
           "current-context": "t"}
    with open(path, "w") as f:
        json.dump(cfg, f)
    os.chmod(path, 0o600)
    return path


class ControlPlane:
    """etcd + kube-apiserver + kube-scheduler + kube-controller-manager under `root`."""

    def __init__(self, root, bin_dir):
        self.root = os.path.join(root, "k8s")
        self.bin = bin_dir
        self.pki = os.path.join(self.root, "pki")
        os.makedirs(self.pki, exist_ok=True)
        self.etcd_port, self.peer_port, self.api_port = free_ports(3)
        self.server = f"https://127.0.0.1:{self.api_port}"
        self.procs = {}

    # ---- setup ---------------------------------------------------------------------------
    def start(self):
        self._pki()
        self._spawn("etcd", [f"{self.bin}/etcd", "--name=default",
                             f"--data-dir={self.root}/etcd",
                             f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                             f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                             f"--listen-peer-urls=http://127.0.0.1:{self.peer_port}",
                             f"--initial-advertise-peer-urls=http://127.0.0.1:{self.peer_port}",
                             f"--initial-cluster=default=http://127.0.0.1:{self.peer_port}",
                             "--listen-metrics-urls=", "--log-level=warn"])
        p = self.pki
        self._spawn("apiserver", [
            f"{self.bin}/kube-apiserver", f"--etcd-servers=http://127.0.0.1:{self.etcd_port}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.api_port}", f"--tls-cert-file={p}/apiserver.crt",
            f"--tls-private-key-file={p}/apiserver.key", f"--client-ca-file={p}/ca.crt",
            f"--token-auth-file={p}/tokens.csv", "--authorization-mode=Node,RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={p}/sa.pub",
            f"--service-account-signing-key-file={p}/sa.key",
            "--service-cluster-ip-range=10.96.0.0/24", "--endpoint-reconciler-type=none",
            f"--kubelet-client-certificate={p}/kubelet-client.crt",
            f"--kubelet-client-key={p}/kubelet-client.key",
            f"--kubelet-certificate-authority={p}/ca.crt",
            "--kubelet-preferred-address-types=InternalIP", "--allow-privileged=false",
            "--profiling=false", FEATURE_GATES, "--runtime-config=scheduling.k8s.io/v1beta1=true",
            "--v=1"])
        wait_for(self._healthy, timeout=120, interval=0.5, what="kube-apiserver to be healthy")
        self._spawn("scheduler", [f"{self.bin}/kube-scheduler",
                                  f"--kubeconfig={self.root}/scheduler.kubeconfig",
                                  "--leader-elect=false", "--secure-port=0", FEATURE_GATES,
                                  "--v=1"])
        self._spawn("controller-manager", [
            f"{self.bin}/kube-controller-manager",
            f"--kubeconfig={self.root}/controller-manager.kubeconfig",
            "--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=true",
            f"--service-account-private-key-file={p}/sa.key", f"--root-ca-file={p}/ca.crt",
            FEATURE_GATES, "--v=1"])
        self.apply(BRIDGE_RBAC)
        self.apply(GROUP_CRDS)
        self.kubectl(["wait", "--for=condition=Established", "--timeout=60s",
                      "crd/podgroups.scheduling.volcano.sh", "crd/podgroups.scheduling.x-k8s.io"],
                     timeout=90)
        return self

    def _pki(self):
        d = self.pki
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
                 "ca.crt", "-days", "2", "-subj", "/CN=tessera-test-k8s-ca", cwd=d)
        make_cert(d, "apiserver", "kube-apiserver",
                  san="IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default")
        make_cert(d, "kubelet-client", "kube-apiserver-kubelet-client", client=True)
        make_cert(d, "admin", "tessera-test-admin", org="system:masters", client=True)
        # The bridge's kubelet API serving certificate, for the node address the apiserver dials.
        make_cert(d, "bridge-serving", "tessera-bridge", san="IP:127.0.0.1,DNS:localhost")
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=d)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=d)
        self.tokens = {u: secrets.token_hex(16) for u in
                       ("tessera-bridge", "system:kube-scheduler", "system:kube-controller-manager")}
        with open(f"{d}/tokens.csv", "w") as f:
            for i, (u, t) in enumerate(self.tokens.items()):
                f.write(f"{t},{u},tok-{i}\n")
        os.chmod(f"{d}/tokens.csv", 0o600)
        ca = f"{d}/ca.crt"
        self.admin_kubeconfig = kubeconfig(f"{self.root}/admin.kubeconfig", self.server, ca,
                                           "admin", cert=f"{d}/admin.crt", key=f"{d}/admin.key")
        self.bridge_kubeconfig = kubeconfig(f"{self.root}/bridge.kubeconfig", self.server, ca,
                                            "tessera-bridge", token=self.tokens["tessera-bridge"])
        kubeconfig(f"{self.root}/scheduler.kubeconfig", self.server, ca, "sched",
                   token=self.tokens["system:kube-scheduler"])
        kubeconfig(f"{self.root}/controller-manager.kubeconfig", self.server, ca, "cm",
                   token=self.tokens["system:kube-controller-manager"])

    def _spawn(self, key, argv):
        log = open(os.path.join(self.root, f"{key}.log"), "ab")
        self.procs[key] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)

    def _healthy(self):
        for key, p in self.procs.items():
            if p.poll() is not None:
                raise AssertionError(f"{key} exited ({p.returncode}); see {self.root}/{key}.log:\n"
                                     + self.log_tail(key))
        r = self.kubectl(["get", "--raw", "/readyz"], check=False)
        return r.returncode == 0 and r.stdout.strip() == "ok"

    def log_tail(self, key, n=30):
        try:
            with open(os.path.join(self.root, f"{key}.log"), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self):
        for key in reversed(list(self.procs)):
            p = self.procs[key]
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    # ---- using it ------------------------------------------------------------------------
    def kubectl(self, args, check=True, input=None, timeout=60):
        p = subprocess.run([KUBECTL, f"--kubeconfig={self.admin_kubeconfig}", *args],
                           capture_output=True, text=True, input=input, timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
        return p

    def apply(self, manifest):
        deadline = time.time() + 60
        while True:
            p = self.kubectl(["apply", "-f", "-"], input=manifest, check=False)
            if p.returncode == 0:
                return p
            if time.time() > deadline:
                raise AssertionError(f"kubectl apply failed:\n{p.stderr}")
            time.sleep(1)  # RBAC's bootstrap roles may not be in place yet

    def get_json(self, *args):
        return json.loads(self.kubectl(["get", *args, "-o", "json"]).stdout)

#!/usr/bin/env bash
# Builds the Kubernetes test control plane (etcd, kube-apiserver, kube-scheduler,
# kube-controller-manager) and the matching kubectl from Go modules and caches the binaries on
# this machine, keyed by the versions: $TESSERA_K8S_CACHE/<key>/bin (default
# /var/cache/tessera-k8s). Prints that bin directory on stdout. A cached set is reused; only
# the binaries are kept, never the build cache (about 5 GB), which goes to a temporary GOCACHE
# removed afterwards.
#
# k8s.io/kubernetes is not meant to be a dependency: its go.mod requires its staging modules
# (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and replaces them with ./staging/src/... paths
# that its module zip does not hold. So a wrapper module requires k8s.io/kubernetes and replaces
# each of those staging modules with its published version (v0.<minor>.<patch>), the list read
# from kubernetes' own go.mod. etcd is built from go.etcd.io/etcd/server/v3's etcdmain at the
# version kubernetes' go.mod pins, in the same module (one dependency graph, one go.sum).
#
# Heavy: a cold build takes ~13 min of two free cores. It runs niced, one package at a time.
# Env: TESSERA_K8S_VERSION (default v1.37.2), TESSERA_K8S_CACHE, GOPROXY as the environment sets it.
set -euo pipefail

K8S_VERSION="${TESSERA_K8S_VERSION:-v1.37.2}"
CACHE_ROOT="${TESSERA_K8S_CACHE:-/var/cache/tessera-k8s}"
GO="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
GO_VERSION="$("$GO" env GOVERSION)"
BINS=(etcd kube-apiserver kube-scheduler kube-controller-manager kubectl)
# kubectl: k8s.io/kubernetes/cmd/kubectl of the same version, so the tests never depend on
# whatever kubectl a machine has (a distribution's is years old, a cloud SDK's is a dispatcher
# of another minor version, outside kubectl's one-minor skew policy).

log() { echo "k8s-binaries: $*" >&2; }

# The kubernetes go.mod (from the module proxy, through the go command).
kmod="$("$GO" mod download -json "k8s.io/kubernetes@${K8S_VERSION}" |
  sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
[[ -f "$kmod" ]] || { log "cannot download k8s.io/kubernetes@${K8S_VERSION}"; exit 1; }
ETCD_VERSION="$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$kmod")"
[[ -n "$ETCD_VERSION" ]] || { log "no go.etcd.io/etcd/server/v3 in kubernetes' go.mod"; exit 1; }

KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_${GO_VERSION}"
BIN="${CACHE_ROOT}/${KEY}/bin"
have_all() { for b in "${BINS[@]}"; do [[ -x "$BIN/$b" ]] || return 1; done; }
# One build at a time per cache: a second caller (a developer's run beside .ci/run's background
# build) waits for the first and then finds the binaries cached, instead of both writing
# $BIN.tmp.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if have_all; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

# k8s.io/kubernetes vX.Y.Z publishes its staging modules as v0.Y.Z.
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
work="$(mktemp -d /tmp/tessera-k8s-build.XXXXXX)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/src/etcd"
{
  echo "module tessera.invalid/k8s-test-binaries"
  echo
  echo "go $("$GO" env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/')"
  echo
  echo "require ("
  echo "	k8s.io/kubernetes ${K8S_VERSION}"
  echo "	go.etcd.io/etcd/server/v3 ${ETCD_VERSION}"
  echo ")"
  echo
  echo "replace ("
  sed -n '/^replace (/,/^)/p' "$kmod" |
    awk -v v="$STAGING_VERSION" '$2 == "=>" && $3 ~ /^\.\/staging\// { printf "\t%s => %s %s\n", $1, $1, v }'
  echo ")"
} >"$work/src/go.mod"
cat >"$work/src/etcd/main.go" <<'EOF'
// etcd, as its own main does it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF

# The build cache lives beside the binaries while a build is unfinished, so an interrupted cold
# build (a session that ends, a CI timeout) resumes where it stopped; it is deleted once the
# binaries are in place.
PARTIAL="${CACHE_ROOT}/${KEY}/gocache.partial"
mkdir -p "$PARTIAL"
export GOCACHE="$PARTIAL" GOFLAGS="-mod=mod -p=1" GOMAXPROCS="${GOMAXPROCS:-2}" CGO_ENABLED=0
mkdir -p "$BIN.tmp"
# Binaries already in place (an older cache without kubectl) are kept; so are those an
# interrupted run finished (each is written as .part, then renamed).
if [[ -d "$BIN" ]]; then
  for b in "${BINS[@]}"; do
    if [[ -x "$BIN/$b" && ! -x "$BIN.tmp/$b" ]]; then cp -p "$BIN/$b" "$BIN.tmp/$b"; fi
  done
fi
cd "$work/src"
log "building ${KEY} (niced; a cold build takes a while)"
start=$(date +%s)
if [[ ! -x "$BIN.tmp/etcd" ]]; then
  nice -n 19 "$GO" build -trimpath -ldflags=-s -o "$BIN.tmp/etcd.part" ./etcd ||
    { log "building etcd ${ETCD_VERSION} failed (partial build cache kept in $PARTIAL)"; exit 1; }
  mv "$BIN.tmp/etcd.part" "$BIN.tmp/etcd"
fi
# The version the binaries report (component-base/version), as Kubernetes' release build sets it.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
ldflags="-s -X $vpkg.gitVersion=${K8S_VERSION} -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=${minor}"
ldflags+=" -X $vpkg.gitTreeState=clean"
for b in kube-apiserver kube-scheduler kube-controller-manager kubectl; do
  if [[ -x "$BIN.tmp/$b" ]]; then continue; fi
  nice -n 19 "$GO" build -trimpath -ldflags="$ldflags" -o "$BIN.tmp/$b.part" "k8s.io/kubernetes/cmd/$b" ||
    { log "building $b ${K8S_VERSION} failed (partial build cache kept in $PARTIAL)"; exit 1; }
  mv "$BIN.tmp/$b.part" "$BIN.tmp/$b"
done
rm -rf "$BIN"
mv "$BIN.tmp" "$BIN"
rm -rf "$PARTIAL"
log "built in $(($(date +%s) - start)) s: $BIN"
echo "$BIN"

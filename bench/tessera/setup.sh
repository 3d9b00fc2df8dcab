#!/bin/bash
# bench/tessera/setup.sh - start a private munged, tessera-ctld and $NNODES tessera-noded
# (b1..bN, $CPUS CPUs each, distinct ports on 127.0.0.1) under $BASE. Idempotent: only starts
# what is not running. PIDs in $BASE/run/. Needs the binaries in $BIN.
# Env: BIN (required) BASE (/tmp/tessera-bench/tessera) NNODES (16) CPUS (16)
#      CGROUPS (0: no cgroups, as the Slurm side's proctrack/linuxproc + task/none; 1: a cgroup
#      per job, Tessera's default)
#      TLS (0; 1: TLS with a private CA under $BASE/tls)
#      TESSERA_CTLD_PORT (36817) TESSERA_NODE_PORT0 (38001)
#      TESSERA_WIRE_PORT (TESSERA_CTLD_PORT+2, or the port after the nodes' when that is one of
#      theirs; 0 = none): ctld's TCP wire for login-node commands
#      (ControllerWirePort, issue 20 §1); never with TLS=1 (the config refuses both)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BIN:?set BIN to the directory with tessera-ctld, tessera-noded and the t* commands}"
BASE=${BASE:-/tmp/tessera-bench/tessera}
NNODES=${NNODES:-16}
CPUS=${CPUS:-16}
CTLD_PORT=${TESSERA_CTLD_PORT:-36817}
PORT0=${TESSERA_NODE_PORT0:-38001}
CONF=$BASE/etc/tessera.conf
export TESSERA_CONF=$CONF
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

mkdir -p "$BASE"/{etc,state,spool,log,run,jobs,munge}
chmod 755 "$BASE" "$BASE/munge"
# 1. private munged (its own key and socket; Slurm keeps the system one)
if ! alive "$BASE/munge/munged.pid"; then
  [ -s "$BASE/munge/munge.key" ] || { dd if=/dev/urandom of="$BASE/munge/munge.key" bs=1024 count=1 status=none; chmod 600 "$BASE/munge/munge.key"; }
  munged -f --key-file="$BASE/munge/munge.key" --socket="$BASE/munge/munge.sock" \
    --pid-file="$BASE/munge/munged.pid" --log-file="$BASE/munge/munged.log" \
    --seed-file="$BASE/munge/munged.seed"
  for _ in $(seq 50); do [ -S "$BASE/munge/munge.sock" ] && break; sleep 0.1; done
fi

# 2. config
nodes="NodeName=b[1-$NNODES] NodeAddr=127.0.0.1 Port=$PORT0-$((PORT0+NNODES-1)) CPUs=$CPUS RealMemory=4000"
[ "$NNODES" -gt 1 ] || nodes="NodeName=b1 NodeAddr=127.0.0.1 Port=$PORT0 CPUs=$CPUS RealMemory=4000"
isolation="CgroupMountpoint=none"
[ "${CGROUPS:-0}" = 1 ] && isolation=""
sed -e "s|@BASE@|$BASE|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|^@NODES@|$nodes|" \
    -e "s|^@ISOLATION@|$isolation|" \
    "$HERE/tessera.conf.in" > "$CONF"
# TLS=1: a private CA and a server certificate for 127.0.0.1, 127.0.0.2 and localhost
# (bench/tessera/remote-cli.py measures the login-node path with and without TLS).
if [ "${TLS:-0}" = 1 ]; then
  t=$BASE/tls
  mkdir -p "$t"
  if [ ! -s "$t/server.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$t/ca.key" -out "$t/ca.pem" -days 30 \
      -subj "/CN=bench CA" >/dev/null 2>&1
    openssl req -newkey rsa:2048 -nodes -keyout "$t/server.key" -out "$t/server.csr" \
      -subj "/CN=localhost" >/dev/null 2>&1
    echo "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2" > "$t/san.ext"
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial \
      -out "$t/server.pem" -days 30 -extfile "$t/san.ext" >/dev/null 2>&1
    chmod 644 "$t/ca.pem"
  fi
  printf 'TlsCertFile=%s\nTlsKeyFile=%s\nTlsCaFile=%s\n' "$t/server.pem" "$t/server.key" \
    "$t/ca.pem" >> "$CONF"
fi
WIRE_PORT=${TESSERA_WIRE_PORT:-$((CTLD_PORT+2))}
if [ -z "${TESSERA_WIRE_PORT:-}" ] && [ "$WIRE_PORT" -ge "$PORT0" ] && [ "$WIRE_PORT" -lt $((PORT0+NNODES)) ]; then
  WIRE_PORT=$((PORT0+NNODES))  # the default would fall among the nodes' ports
fi
if [ "${TLS:-0}" != 1 ] && [ "$WIRE_PORT" != 0 ]; then
  echo "ControllerWirePort=$WIRE_PORT" >> "$CONF"
fi
chmod 644 "$CONF"
# The same cluster seen from a login node (bench/run-vs-slurm section "remote"): no controller
# socket, the controller named at 127.0.0.2 (a second loopback address), so commands take the TCP
# wire (munge per request) when ControllerWirePort is set, gRPC + munge otherwise (and with
# TESSERA_NO_WIRE=1), as on a host without ctld.
sed -e "s|^SlurmctldHost=.*|SlurmctldHost=localhost(127.0.0.2)|" "$CONF" > "$BASE/etc/login.conf"
echo "ControllerSocket=none" >> "$BASE/etc/login.conf"
chmod 644 "$BASE/etc/login.conf"
"$BIN/tessera-ctld" -f "$CONF" --check-config >/dev/null

# 3. controller (foreground process, started in the background; pid file written here)
if ! alive "$BASE/run/ctld.pid"; then
  setsid "$BIN/tessera-ctld" -f "$CONF" >>"$BASE/log/ctld.log" 2>&1 < /dev/null &
  echo $! > "$BASE/run/ctld.pid"
fi
for _ in $(seq 200); do "$BIN/tcontrol" ping >/dev/null 2>&1 && break; sleep 0.05; done
"$BIN/tcontrol" ping >/dev/null || { echo "tessera-ctld did not answer (see $BASE/log/ctld.log)" >&2; exit 1; }

# 4. one tessera-noded per node
for i in $(seq 1 "$NNODES"); do
  if ! alive "$BASE/run/noded-b$i.pid"; then
    setsid "$BIN/tessera-noded" -N "b$i" -f "$CONF" >>"$BASE/log/noded-b$i.log" 2>&1 < /dev/null &
    echo $! > "$BASE/run/noded-b$i.pid"
  fi
done

# 5. wait until every node is idle
for _ in $(seq 150); do
  n=$("$BIN/tinfo" -h -N 2>/dev/null | awk '$4 ~ /^idle/ {print $1}' | sort -u | wc -l)
  [ "$n" -ge "$NNODES" ] && break; sleep 0.2
done
"$BIN/tinfo"
echo "export TESSERA_CONF=$CONF"

#!/bin/bash
# bench/slurm/setup.sh - install (if missing), configure and start munge + Slurm 22.05 (Debian 12
# packages) as a single-host cluster under $BASE: 1 slurmctld + $NNODES slurmd (n1..nN,
# $CPUS CPUs each, "multiple-slurmd" on distinct ports, all on 127.0.0.1). Idempotent: only
# starts what is not running. Daemons are started by hand (no systemd); PIDs in $BASE/run/.
# Env: BASE (/tmp/tessera-bench/slurm) NNODES (16) CPUS (16) SLURM_CTLD_PORT (26817)
#      SLURM_NODE_PORT0 (27001: node i listens on PORT0+i-1)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${BASE:-/tmp/tessera-bench/slurm}
NNODES=${NNODES:-16}
CPUS=${CPUS:-16}
CTLD_PORT=${SLURM_CTLD_PORT:-26817}
PORT0=${SLURM_NODE_PORT0:-27001}
export SLURM_CONF=$BASE/slurm.conf

# 1. packages (Debian 12: slurm-wlm 22.05.8, munge 0.5.15)
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
   || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null || ! command -v bc >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || true
  apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge bc procps
fi

# 2. munge (the system instance at /run/munge, which Slurm uses by default)
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  if command -v mungekey >/dev/null; then mungekey --create --keyfile=/etc/munge/munge.key --force
  else dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none; fi
fi
chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge
chmod 700 /etc/munge; chmod 400 /etc/munge/munge.key
mkdir -p /run/munge; chown munge:munge /run/munge; chmod 755 /run/munge
if ! { [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; }; then
  su -s /bin/sh munge -c "/usr/sbin/munged --force"
  for _ in $(seq 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
fi
munge -n | unmunge >/dev/null || { echo "munge does not work" >&2; exit 1; }

# 3. config + directories
mkdir -p "$BASE"/{state,spool,log,run,jobs}
if [ "$NNODES" -gt 1 ]; then
  nodes="NodeName=n[1-$NNODES] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$PORT0-$((PORT0+NNODES-1))] CPUs=$CPUS RealMemory=4000 State=UNKNOWN"
else
  nodes="NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=$PORT0 CPUs=$CPUS RealMemory=4000 State=UNKNOWN"
fi
sed -e "s|@BASE@|$BASE|g" -e "s|@CTLD_PORT@|$CTLD_PORT|g" -e "s|^@NODES@|$nodes|" \
    "$HERE/slurm.conf.in" > "$SLURM_CONF"
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# 4. slurmctld (as root; -i ignores state-file errors on a first start)
if ! alive "$BASE/run/slurmctld.pid"; then
  slurmctld -f "$SLURM_CONF" -i
  for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done
fi

# 5. one slurmd per simulated node
for i in $(seq 1 "$NNODES"); do
  mkdir -p "$BASE/spool/n$i"
  alive "$BASE/run/slurmd-n$i.pid" || slurmd -f "$SLURM_CONF" -N "n$i"
done

# 6. wait until all nodes are idle
for _ in $(seq 150); do
  n=$(sinfo -h -N -t idle -o %N 2>/dev/null | wc -l)
  [ "$n" -ge "$NNODES" ] && break; sleep 0.2
done
sinfo
echo "export SLURM_CONF=$SLURM_CONF"

#!/bin/bash
# bench/slurm/stop.sh - stop the daemons bench/slurm/setup.sh started, by PID (pid files).
# STOP_MUNGE=1 also stops the system munged (default 0: other users may need it).
BASE=${BASE:-/tmp/tessera-bench/slurm}
for f in "$BASE"/run/slurmd-*.pid "$BASE"/run/slurmctld.pid; do
  [ -s "$f" ] || continue
  p=$(cat "$f"); kill "$p" 2>/dev/null && echo "stopped $(basename "$f" .pid) pid $p"
done
if [ "${STOP_MUNGE:-0}" = 1 ] && [ -s /run/munge/munged.pid ]; then
  p=$(cat /run/munge/munged.pid); kill "$p" 2>/dev/null && echo "stopped munged pid $p"
fi

#!/bin/bash
# bench/tessera/stop.sh - stop what bench/tessera/setup.sh started, by PID (pid files), and any
# job still running under a tessera-stepd of this cluster (stepd pid files in the spool).
BASE=${BASE:-/tmp/tessera-bench/tessera}
for f in "$BASE"/run/noded-*.pid "$BASE"/run/ctld.pid "$BASE"/munge/munged.pid; do
  [ -s "$f" ] || continue
  p=$(cat "$f"); kill "$p" 2>/dev/null && echo "stopped $(basename "$f" .pid) pid $p"
  rm -f "$f"
done
for f in "$BASE"/spool/*/job.*/stepd.pid; do
  [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
done
exit 0

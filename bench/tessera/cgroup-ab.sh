#!/bin/bash
# bench/tessera/cgroup-ab.sh - end to end with cgroups on (bench/tessera/e2e.py, N held `true`
# jobs released at once), two builds interleaved: A, B, A, B, ... each on a freshly set-up
# cluster (bench/tessera/setup.sh with CGROUPS=1). Prints jobs/s and CPU per job per run with the
# load average. Issue 20 §2: the cgroup path before/after.
# Env: BIN_A, BIN_B (required: directories with the binaries) REPS (3) N (1000) SETTLE (8)
#      BASE (/tmp/tessera-bench/cgroup-ab) TESSERA_CTLD_PORT, TESSERA_NODE_PORT0 (setup.sh's)
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
: "${BIN_A:?} ${BIN_B:?}"
export BASE=${BASE:-/tmp/tessera-bench/cgroup-ab} CGROUPS=1
for rep in $(seq "${REPS:-3}"); do
  for b in "$BIN_A" "$BIN_B"; do
    BIN=$b "$HERE/stop.sh" >/dev/null 2>&1
    rm -rf "$BASE/state" "$BASE/spool"
    BIN=$b "$HERE/setup.sh" >/dev/null 2>&1 || { echo "setup failed: $b" >&2; exit 1; }
    echo "rep $rep $b (load $(cut -d' ' -f1 /proc/loadavg))"
    BIN=$b SETTLE=${SETTLE:-8} python3 "$HERE/e2e.py" "${N:-1000}" 2>&1 | tail -1
  done
done
BIN=$BIN_B "$HERE/stop.sh" >/dev/null 2>&1

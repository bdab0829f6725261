#!/usr/bin/env bash
# Stops or starts only the slurmctld of the cluster tests/slurm/start-slurm.sh made, for
# outage tests. `start` keeps the saved state (jobs survive); `start --cold` ignores it.
# Usage: slurmctld.sh stop | start [--cold]
set -euo pipefail
unset SLURM_JWT
BASE=${GPUFED_SLURM_STATE:-/tmp/gpufed-slurm}
PIDS="$BASE/pids"
export SLURM_CONF="$BASE/etc/slurm.conf"
[ -f "$SLURM_CONF" ] || { echo "slurmctld.sh: no cluster in $BASE" >&2; exit 1; }
pid=$(awk '$1=="slurmctld"{print $2}' "$PIDS" 2>/dev/null | tail -1)
case "${1:-}" in
  stop)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid"
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    sed -i '/^slurmctld /d' "$PIDS"
    ;;
  start)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "slurmctld.sh: already running ($pid)"; exit 0; fi
    flags=""; [ "${2:-}" = --cold ] && flags="-c"
    "$(dirname "$0")/as-localhost.sh" slurmctld -D $flags -f "$SLURM_CONF" >>"$BASE/log/slurmctld.out" 2>&1 &
    newpid=$!
    sed -i '/^slurmctld /d' "$PIDS" 2>/dev/null || true
    echo "slurmctld $newpid" >> "$PIDS"
    for _ in $(seq 100); do
      scontrol ping 2>/dev/null | grep -q UP && exit 0
      kill -0 "$newpid" 2>/dev/null || break
      sleep 0.1
    done
    echo "slurmctld.sh: slurmctld not up; see $BASE/log/slurmctld.log" >&2
    tail -5 "$BASE/log/slurmctld.log" >&2 || true
    exit 1
    ;;
  *) echo "usage: $0 stop | start [--cold]" >&2; exit 2 ;;
esac

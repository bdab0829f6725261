#!/usr/bin/env bash
# Stops or starts only the slurmctld of the cluster tests/slurm/start-slurm.sh made in
# $GPUFED_SLURM_STATE (either release), for outage tests. `start` keeps the saved state
# (jobs survive); `start --cold` ignores it.
# Usage: slurmctld.sh stop | start [--cold]
set -euo pipefail
unset SLURM_JWT
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm-lib.sh
. "$HERE/slurm-lib.sh"
RELEASE=22.05; slurm_settings; RELEASE=$(release_of_state "$BASE"); slurm_settings
[ -f "$SLURM_CONF" ] || { echo "slurmctld.sh: no cluster in $BASE" >&2; exit 1; }
case "${1:-}" in
  stop)
    pid=$(pid_of slurmctld)
    [ -n "$pid" ] && stop_pid slurmctld "$pid" >/dev/null
    sed -i '/^slurmctld /d' "$PIDS"
    ;;
  start)
    if daemon_alive slurmctld; then echo "slurmctld.sh: already running ($(pid_of slurmctld))"; exit 0; fi
    sed -i '/^slurmctld /d' "$PIDS" 2>/dev/null || true
    flags=""; [ "${2:-}" = --cold ] && flags="-c"
    start_daemon slurmctld slurmctld -D $flags -f "$SLURM_CONF"
    up=""
    for _ in $(seq 100); do
      in_slurm scontrol ping 2>/dev/null | grep -q UP && { up=1; break; }
      daemon_alive slurmctld || break
      sleep 0.1
    done
    if [ -z "$up" ]; then
      echo "slurmctld.sh: slurmctld not up; see $BASE/log/slurmctld.log" >&2
      tail -5 "$BASE/log/slurmctld.log" >&2 || true
      exit 1
    fi
    # A restarted slurmctld knows its nodes as "unknown" until each slurmd registers again
    # (about 2 s); a job submitted then is refused ("Required node not available"). Up means
    # schedulable, so wait for the registrations. A cold start leaves that to start-slurm.sh,
    # whose slurmd is not running yet.
    [ -n "$flags" ] && exit 0
    for _ in $(seq 150); do
      states=$(in_slurm sinfo -h -N -o %T 2>/dev/null || true)
      if [ -n "$states" ] && ! grep -qvE '^(idle|mixed|allocated|completing|planned)$' <<<"$states"; then exit 0; fi
      sleep 0.2
    done
    echo "slurmctld.sh: nodes not schedulable after 30 s: $(in_slurm sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ' ')" >&2
    exit 1
    ;;
  *) echo "usage: $0 stop | start [--cold]" >&2; exit 2 ;;
esac

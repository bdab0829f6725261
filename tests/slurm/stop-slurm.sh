#!/usr/bin/env bash
# Stops what tests/slurm/start-slurm.sh started in $GPUFED_SLURM_STATE (either release),
# by recorded PID only, in reverse start order. A host munged it reused (22.05, not
# recorded) keeps running. The 24.11 daemons' mounts lived in their own mount namespaces
# and are gone with them; the cached chroot stays for the next start. Idempotent.
# Usage: stop-slurm.sh [--release 22.05|24.11]   (default: what the state folder says)
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=slurm-lib.sh
. "$HERE/slurm-lib.sh"
RELEASE=""
case "${1:-}" in --release) RELEASE=${2:-} ;; --release=*) RELEASE=${1#--release=} ;; esac
if [ -z "$RELEASE" ]; then
  RELEASE=22.05; slurm_settings; RELEASE=$(release_of_state "$BASE")
fi
slurm_settings || exit 2
[ -f "$PIDS" ] || { echo "stop-slurm: nothing recorded in $BASE"; exit 0; }
unset SLURM_JWT
# Cancel remaining jobs so their slurmstepd children exit with the daemons.
if daemon_alive slurmctld; then
  timeout 10 "$BASE/bin/slurm" scancel --user=root --full >/dev/null 2>&1 || true
  timeout 10 bash -c 'while [ -n "$("$0/bin/slurm" squeue -h 2>/dev/null)" ]; do sleep 0.3; done' "$BASE" || true
fi
tac "$PIDS" | while read -r name pid; do
  [ -n "$pid" ] && stop_pid "$name" "$pid"
done
rm -f "$PIDS"

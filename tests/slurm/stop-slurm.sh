#!/usr/bin/env bash
# Stops what tests/slurm/start-slurm.sh started, by recorded PID only, in reverse start
# order. A munged it reused (not recorded) keeps running. Idempotent.
BASE=${GPUFED_SLURM_STATE:-/tmp/gpufed-slurm}
PIDS="$BASE/pids"
[ -f "$PIDS" ] || { echo "stop-slurm: nothing recorded in $BASE"; exit 0; }
unset SLURM_JWT
export SLURM_CONF="$BASE/etc/slurm.conf"
# Cancel remaining jobs so their slurmstepd children exit with the daemons.
if awk '$1=="slurmctld"{f=1} END{exit !f}' "$PIDS"; then
  timeout 10 scancel --user=root --full >/dev/null 2>&1 || true
  timeout 10 bash -c 'while [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.3; done' || true
fi
tac "$PIDS" | while read -r name pid; do
  [ -n "$pid" ] || continue
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "$name ($pid) killed -9"; else echo "$name ($pid) stopped"; fi
  fi
done
rm -f "$PIDS"

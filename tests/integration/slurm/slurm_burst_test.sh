#!/usr/bin/env bash
# End to end: `gpufed run` on examples/slurm-burst against a real Slurm (test ports), with
# only the endpoint changed: its Cluster says apiVersion: auto, and the run must negotiate
# the release's newest version (22.05: v0.0.38, 24.11: v0.0.42).
# The controller is killed (SIGKILL) right after its first Slurm submit and restarted on
# the same state folder; the run must still finish every workload, restricted work on
# Slurm, some work burst to the cloud, and exactly one Slurm job per Slurm workload.
# Usage: slurm_burst_test.sh GPUFED_BINARY SOURCE_DIR STATE_DIR [22.05|24.11]
set -euo pipefail
GPUFED=$1 SRC=$2 BASE=$3 RELEASE=${4:-22.05}
export GPUFED_SLURM_STATE=$BASE CLUSTER_NAME=gpufedit
case $RELEASE in
  22.05) export REST_PORT=16820 CTLD_PORT=16817 SLURMD_PORT=16818; WANT=v0.0.38 ;;
  24.11) export REST_PORT=16830 CTLD_PORT=16837 SLURMD_PORT=16838; WANT=v0.0.42 ;;
  *) echo "unknown release $RELEASE" >&2; exit 2 ;;
esac
fail() { echo "FAIL ($RELEASE): $*" >&2; exit 1; }
"$SRC/tests/slurm/start-slurm.sh" --release "$RELEASE" >&2 || fail "Slurm did not start (see $BASE/log)"
[ -n "${GPUFED_SLURM_KEEP:-}" ] || trap '"$SRC/tests/slurm/stop-slurm.sh" >&2 || true' EXIT
# shellcheck disable=SC1091
source "$BASE/env.sh"

work=$BASE/e2e; rm -rf "$work"; mkdir -p "$work/out"; chmod 777 "$work/out"
cp -r "$SRC/examples/slurm-burst" "$work/repo"
sed -i "s|http://127.0.0.1:6820|$SLURMREST|" "$work/repo/clusters.yaml"
grep -q "apiVersion: auto" "$work/repo/clusters.yaml" || fail "the example's Cluster must say apiVersion: auto"
sed -i "s|workingDir: /tmp|workingDir: $work/out|" "$work/repo/workloads/lab.yaml"
"$GPUFED" validate "$work/repo" >/dev/null || fail "example does not validate"

tagged_jobs() {  # "<jobid> <name>" of gpufed's jobs in this Slurm (its own scontrol)
  "$BASE/bin/slurm" scontrol show jobs -o 2>/dev/null | awk '/Comment=gpufed\/v1 /{
    id=""; n=""; for (i = 1; i <= NF; i++) { if ($i ~ /^JobId=/) id = substr($i, 7); if ($i ~ /^JobName=/) n = substr($i, 9) }
    print id, n }'
}
before=$(tagged_jobs | awk '{print $1}' | sort -n | tail -1); before=${before:-0}

# Phase 1: run until the first submit reaches Slurm, then kill the controller.
"$GPUFED" run --config "$work/repo" --state "$work/state" --until-idle >"$work/run1.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ -n "$(tagged_jobs | awk -v b="$before" '$1 > b')" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill -KILL $pid 2>/dev/null || fail "controller ended before submitting to Slurm: $(tail -5 "$work/run1.log")"
wait $pid 2>/dev/null || true
[ -n "$(tagged_jobs | awk -v b="$before" '$1 > b')" ] || fail "no Slurm job after 30 s: $(tail -5 "$work/run1.log")"

# Phase 2: restart on the same state and run to the end.
timeout 150 "$GPUFED" run --config "$work/repo" --state "$work/state" --until-idle >"$work/run2.log" 2>&1 ||
  fail "restarted run failed: $(tail -20 "$work/run2.log")"
cat "$work/run2.log"
grep -q "onprem-slurm: slurmrestd API $WANT (Slurm $RELEASE\." "$work/run2.log" ||
  fail "the run did not log the negotiated API $WANT: $(grep -i 'slurmrestd' "$work/run2.log" | head -3)"

db=$work/state/gpufed.db
q() { sqlite3 "$db" "$1"; }
[ "$(q "select count(*) from workloads where state != 'Succeeded'")" = 0 ] ||
  fail "not all succeeded: $(q "select name, state, cluster, reason from workloads")"
[ "$(q "select count(*) from workloads where name in ('train-restricted','notebook-slice') and cluster = 'onprem-slurm'")" = 2 ] ||
  fail "restricted work left Slurm: $(q "select name, cluster from workloads")"
[ "$(q "select count(*) from workloads where cluster = 'eu-cloud'")" -ge 1 ] || fail "nothing burst to the cloud"
# Exactly one Slurm job per workload that ran there, despite the kill.
for w in $(q "select name from workloads where cluster = 'onprem-slurm'"); do
  n=$(tagged_jobs | awk -v b="$before" -v n="gpufed-$w-a1" '$1 > b && $2 == n' | wc -l)
  [ "$n" = 1 ] || fail "$n Slurm jobs for $w"
  grep -q "CUDA_VISIBLE_DEVICES=[0-9]" "$work/out"/gpufed-"$w"-a1-*.out || fail "no CUDA_VISIBLE_DEVICES in $w's output"
done
grep -q "slice CUDA_VISIBLE_DEVICES=[2-5]$" "$work/out"/gpufed-notebook-slice-a1-*.out || fail "MIG slice not on devices 2-5"
echo "PASS ($RELEASE, $WANT): $(q "select group_concat(name || '@' || cluster, ' ') from workloads")"

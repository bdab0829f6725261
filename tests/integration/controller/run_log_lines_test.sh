#!/usr/bin/env bash
# gpufed run's event lines reach a pipe or a log file as they happen: with stdout not a
# terminal, an event ("cluster X is unhealthy") used to wait in stdio's buffer for the
# next status line, an hour of controller time later (on a wall-clock federation, an
# hour). Here a simulated cloud goes dark one virtual second into a run paced at 30
# virtual seconds per wall second: the unhealthy line comes a few wall seconds later,
# the next status line (t=01:00:00) two wall minutes later. The test reads the FIFO the
# run writes to until the unhealthy line; with the old buffering that read would wait
# past ctest's timeout (90 s). Then it checks the run is still going and ends it by PID.
# Usage: run_log_lines_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
SRC=$2
T=$(mktemp -d /tmp/gpufed-log-lines.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

cat >"$T/scenario.yaml" <<'YAML'
failures:
  - {cluster: eu-cloud, type: outage, at: 1s, until: 10h}
YAML
mkfifo "$T/out"
"$G" run --config "$SRC/examples/quickstart" --state "$T/state" --scenario "$T/scenario.yaml" --speed 30 \
  >"$T/out" 2>"$T/err" &
pid=$!
exec 3<"$T/out"
seen=""
while IFS= read -r line <&3; do
  seen+="$line"$'\n'
  case $line in
    *"cluster eu-cloud is unhealthy"*) break ;;
    "t=01:00:00"*) echo "FAIL: the status line of 01:00:00 came before the unhealthy event line" >&2; exit 1 ;;
  esac
done
case $seen in
  *"cluster eu-cloud is unhealthy"*) ;;
  *) echo "FAIL: the run's output ended without the unhealthy line:" >&2; echo "$seen" >&2; cat "$T/err" >&2; exit 1 ;;
esac
kill -0 "$pid" || { echo "FAIL: the run ended before its event line was read" >&2; exit 1; }
kill -TERM "$pid"
exec 3<&-
wait "$pid" || true
pid=""
echo "PASS: read while the run went on:"
echo "$seen"

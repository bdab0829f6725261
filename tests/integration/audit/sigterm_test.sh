#!/usr/bin/env bash
# SIGTERM during a busy `gpufed run`: exit 0, the last two records are controller-stop
# and a checkpoint, and `audit verify --key` finds every record covered by a signature.
# A second signal exits at once and the journal still verifies.
# Usage: sigterm_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
T=$(mktemp -d /tmp/gpufed-sigterm.XXXXXX)
pid=""
cleanup() { [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$T/run.out" >&2 2>/dev/null || true; exit 1; }

# Slowed virtual time (a day takes ~3 minutes), so the run is busy when the signal comes.
start_run() {
  "$G" run --config "$SRC/examples/quickstart" --state "$T/$1" --speed 500 --until-idle >"$T/run.out" 2>&1 &
  pid=$!
}
# Waits (bounded) until the journal holds at least N decisions.
wait_decisions() {
  for _ in $(seq 300); do
    n=$("$G" audit query -d "$T/$1/audit" --kind decision --output jsonl 2>/dev/null | wc -l || true)
    [ "${n:-0}" -ge "$2" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "gpufed run ended early"
    sleep 0.1
  done
  fail "no $2 decisions journalled within 30 s"
}

start_run state
wait_decisions state 20
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM (want 0)"
grep -q "SIGTERM" "$T/run.out" || fail "no stop line in the output"
grep -q "gpufed run summary" "$T/run.out" || fail "no summary after SIGTERM"
kinds=$("$G" audit query -d "$T/state/audit" --output jsonl | tail -2 | sed -E 's/.*"kind":"([a-z-]+)".*/\1/' | sort | tr '\n' ' ')
[ "$kinds" = "checkpoint controller-stop " ] || fail "last records: $kinds"
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" --require-closed >"$T/verify.out" 2>&1 ||
  { cat "$T/verify.out"; fail "verify"; }
grep -q "not yet covered" "$T/verify.out" && { cat "$T/verify.out"; fail "records not covered by a signature"; }

# A second signal exits at once; the journal stays consistent.
start_run state2
wait_decisions state2 10
kill -TERM "$pid"; kill -TERM "$pid" 2>/dev/null || true
rc=0; wait "$pid" || rc=$?
pid=""
"$G" audit verify "$T/state2/audit" >"$T/verify2.out" 2>&1 || { cat "$T/verify2.out"; fail "verify after two signals (exit $rc)"; }

# A crash (SIGKILL) leaves no controller-stop: verify says so without the key, and
# --require-closed fails. (Two quick SIGTERMs may coalesce into one graceful stop.)
start_run state3
wait_decisions state3 10
kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
pid=""
"$G" audit verify "$T/state3/audit" >"$T/verify3.out" 2>&1 || { cat "$T/verify3.out"; fail "verify after a crash"; }
grep -q "^WARNING: unclosed journal: last checkpoint at seq" "$T/verify3.out" || { cat "$T/verify3.out"; fail "not reported unclosed"; }
if "$G" audit verify "$T/state3/audit" --require-closed >/dev/null 2>&1; then fail "--require-closed passed an unclosed journal"; fi
echo "sigterm test: OK"

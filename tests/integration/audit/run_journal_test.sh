#!/usr/bin/env bash
# `gpufed run` keeps its audit journal under <state>/audit with a signing key it created
# on first start; the journal verifies with the public key written beside it. It says who
# submitted each workload (the repository's and the scenario's, once each, also across a
# restart), every connector action names its workload's uid, and `audit replay` replays
# the decisions and passes over the other records.
# Usage: run_journal_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
T=$(mktemp -d /tmp/gpufed-run-journal.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$G" run --config "$SRC/examples/quickstart" --until-idle --state "$T/state" >"$T/run.out" 2>&1 ||
  { cat "$T/run.out" >&2; fail "gpufed run"; }
[ -f "$T/state/audit/signing.key" ] && [ -f "$T/state/audit/signing.pub" ] || fail "no signing key pair"
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" >"$T/verify.out" 2>&1 ||
  { cat "$T/verify.out" >&2; fail "audit verify"; }
grep -q "checkpoint signatures valid" "$T/verify.out" || { cat "$T/verify.out"; fail "no signed checkpoint"; }
# Who submitted what: the quickstart's 31 repository workloads and its scenario's burst.
submissions() { "$G" audit query -d "$T/state/audit" --kind workload-submitted --principal "$1" -o jsonl | wc -l; }
[ "$(submissions repository)" -eq 31 ] || fail "repository submissions: $(submissions repository)"
[ "$(submissions scenario)" -gt 0 ] || fail "no scenario submissions"
"$G" audit query -d "$T/state/audit" --kind connector-action -o jsonl | python3 -c '
import json, sys
actions = [json.loads(line) for line in sys.stdin]
assert actions, "no connector actions"
for a in actions:
    assert a["uid"] and a["key"] == "%s.a%d" % (a["uid"], a["attempt"]) and a["tenant"], a
' || fail "a connector action without its uid"
"$G" audit replay --all -d "$T/state/audit" >"$T/replay.out" 2>&1 || { cat "$T/replay.out" >&2; fail "audit replay --all"; }
grep -q " 0 different" "$T/replay.out" || { cat "$T/replay.out" >&2; fail "replay differs"; }
"$G" audit query -d "$T/state/audit" --kind workload-submitted -o jsonl >"$T/submitted.jsonl"
seq=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["seq"])' "$T/submitted.jsonl")
if "$G" audit replay "$seq" -d "$T/state/audit" >"$T/replay-one.out" 2>&1; then fail "replayed a submission record"; fi
grep -q "is a workload-submitted record, not a decision" "$T/replay-one.out" || { cat "$T/replay-one.out" >&2; fail "replay SEQ"; }
# A second run reuses the key and continues the same chain.
key=$(sha256sum <"$T/state/audit/signing.key")
"$G" run --config "$SRC/examples/quickstart" --until-idle --state "$T/state" >/dev/null 2>&1 || fail "second run"
[ "$key" = "$(sha256sum <"$T/state/audit/signing.key")" ] || fail "key replaced"
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" >/dev/null || fail "verify after restart"
[ "$(submissions repository)" -eq 31 ] || fail "the restart submitted the repository's workloads again"
echo "run journal test: OK"

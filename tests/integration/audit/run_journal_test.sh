#!/usr/bin/env bash
# `gpufed run` keeps its audit journal under <state>/audit with a signing key it created
# on first start; the journal verifies with the public key written beside it.
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
# A second run reuses the key and continues the same chain.
key=$(sha256sum <"$T/state/audit/signing.key")
"$G" run --config "$SRC/examples/quickstart" --until-idle --state "$T/state" >/dev/null 2>&1 || fail "second run"
[ "$key" = "$(sha256sum <"$T/state/audit/signing.key")" ] || fail "key replaced"
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" >/dev/null || fail "verify after restart"
echo "run journal test: OK"

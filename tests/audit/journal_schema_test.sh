#!/usr/bin/env bash
# Every journal record kind has a JSON Schema (schemas/audit/, docs/audit-format.md) and
# every record the controller writes is valid against its kind's:
#   1. the journal of a real `gpufed run` of the quickstart (a simulated run that ends by
#      itself), plus a `policy-rejected` from `gpufed audit record` on a broken repository;
#   2. a journal with every kind, each written by the controller's own record builders
#      (audit_sample_journal);
#   3. the kinds controller/audit/record.cc can write are exactly the kinds with a schema;
#   4. the check can fail: a record missing a required member, of a wrong type, with an
#      unknown member, or of a kind without a schema is refused.
# Usage: journal_schema_test.sh GPUFED AUDIT_SAMPLE_JOURNAL SOURCE_DIR
set -euo pipefail
G=$1 SAMPLE=$2 SRC=$3
V=(python3 "$SRC/tests/audit/validate_journal.py" "$SRC/schemas/audit")
T=$(mktemp -d /tmp/gpufed-journal-schema.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$G" run --config "$SRC/examples/quickstart" --until-idle --state "$T/state" >"$T/run.out" 2>&1 ||
  { cat "$T/run.out" >&2; fail "gpufed run"; }
cp -r "$SRC/examples/quickstart" "$T/broken"
printf 'apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: broken}\nspec: {wieght: 1}\n' >"$T/broken/broken.yaml"
if "$G" audit record -c "$T/broken" -d "$T/rejected" >"$T/record.out" 2>&1; then fail "a broken repository recorded"; fi
[ -n "$("$G" audit query -d "$T/rejected" --kind policy-rejected -o jsonl)" ] || { cat "$T/record.out" >&2; fail "no policy-rejected"; }
"$SAMPLE" "$T/sample" || fail "audit_sample_journal"

"${V[@]}" --kinds-from "$SRC/controller/audit/record.cc" "$T/state/audit" "$T/rejected" "$T/sample" >"$T/valid.out" ||
  { cat "$T/valid.out" >&2; fail "journal records do not match their schemas"; }
cat "$T/valid.out"
# The sample journal holds every kind the code can write.
for kind in $(sed -n 's/.*{RecordKind::k[A-Za-z]*, "\([a-z-]*\)"}.*/\1/p' "$SRC/controller/audit/record.cc"); do
  grep -q "^$kind: " "$T/valid.out" || fail "no $kind record was validated"
done

# The check can fail.
"$G" audit query -d "$T/state/audit" --kind decision --outcome placed -o jsonl >"$T/all-placed.jsonl"
sed -n 1p "$T/all-placed.jsonl" >"$T/placed.jsonl"
[ -s "$T/placed.jsonl" ] || fail "no placed decision in the run"
plant() {  # plant NAME EXPECTED PYTHON-EXPRESSION-ON-r
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); $3; print(json.dumps(r))" "$T/placed.jsonl" >"$T/$1.jsonl"
  if "${V[@]}" "$T/$1.jsonl" >"$T/$1.out" 2>&1; then cat "$T/$1.out" >&2; fail "planted $1 passed"; fi
  grep -q -- "$2" "$T/$1.out" || { cat "$T/$1.out" >&2; fail "planted $1: expected '$2'"; }
}
plant missing "'revision' is a required property" 'del r["revision"]'
plant wrong-type "inputs: 42 is not of type 'string'" 'r["inputs"] = 42'
plant unknown-member "unexpected" 'r["surprise"] = 1'
plant bad-target "target: 'gpus' is a required property" 'del r["target"]["gpus"]'
plant bad-money "cost: '12 EUR' does not match" 'r["cost"] = "12 EUR"'
plant unknown-kind "kind mystery: no schema for this kind" 'r["kind"] = "mystery"'
echo "journal schema test: OK"

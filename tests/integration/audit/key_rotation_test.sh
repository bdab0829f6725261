#!/usr/bin/env bash
# Key rotation with the real binary (issue 39): `gpufed audit rotate-key` hands a stopped
# controller's journal over to a new key in a journalled rotation signed by both keys,
# replaces signing.pub and (for a key in the state folder) signing.key; the next run signs
# with the new key and a start with the old one is refused; `audit verify --key OLD.pub`
# follows the rotation and reports it, the new key alone fails on the journal's early
# part; `audit vkey`, `prove` and `verify-proof` use the key in force, and so does the
# independent verifier (tests/audit/tlog_verify.py) on the newest checkpoint, the one the
# API serves. A journal whose lock is held (a running controller) is not rotated, and a key
# kept outside the state folder (--audit-key) is rotated with --key and moved by the
# operator.
# Usage: key_rotation_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
V="python3 $SRC/tests/audit/tlog_verify.py"
T=$(mktemp -d /tmp/gpufed-key-rotation.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
show() { cat "$@" >&2; }

mkdir -p "$T/repo"
cat >"$T/repo/fleet.yaml" <<'YAML'
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: lab}
spec:
  provider: onprem
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 2, gpu: {model: A100, count: 8, memory: 80Gi}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team}
spec: {weight: 1}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: train}
spec:
  tenant: team
  type: training
  resources: {gpus: 8}
  durationHint: 2h
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: infer}
spec:
  tenant: team
  type: inference
  resources: {gpus: 2}
  durationHint: 1h
YAML
run() {
  local state=$1
  shift
  "$G" run --config "$T/repo" --state "$state" --speed 0 --until-idle "$@" >"$T/run.out" 2>&1 ||
    { show "$T/run.out"; fail "gpufed run --state $state $*"; }
}
# gpufed's key id: the first 16 hex digits of SHA-256 of the raw 32-byte public key.
key_id() { openssl pkey -pubin -in "$1" -outform DER | tail -c 32 | sha256sum | cut -c1-16; }

S=$T/state
run "$S"
cp "$S/audit/signing.pub" "$T/old.pub"
cp -p "$S/audit/signing.key" "$T/old.key"
"$G" audit keygen --out "$T/new" >/dev/null
old_id=$(key_id "$T/old.pub")
new_id=$(key_id "$T/new/signing.pub")

# A running controller holds the journal's lock: nothing is rotated.
if flock "$S/audit/journal/LOCK" "$G" audit rotate-key "$S" --new-key "$T/new/signing.key" >"$T/locked.out" 2>&1; then
  fail "rotated a journal whose lock was held"
fi
grep -q "stop the controller" "$T/locked.out" || { show "$T/locked.out"; fail "no word of the held lock"; }
cmp -s "$S/audit/signing.pub" "$T/old.pub" || fail "signing.pub changed while the lock was held"

"$G" audit rotate-key "$S" --new-key "$T/new/signing.key" --reason "yearly rotation" >"$T/rotate.out" 2>&1 ||
  { show "$T/rotate.out"; fail "audit rotate-key"; }
for line in "key-rotated" "checkpoint signed by the old key $old_id" "checkpoint signed by the new key $new_id" \
  "signing.pub is the new public key" "signing.key is the new private key"; do
  grep -q "$line" "$T/rotate.out" || { show "$T/rotate.out"; fail "rotate-key did not say: $line"; }
done
[ "$(key_id "$S/audit/signing.pub")" = "$new_id" ] || fail "signing.pub is not the new key's"
[ "$(stat -c %a "$S/audit/signing.key")" = 600 ] || fail "signing.key is not 0600"
# Run again: nothing is left to do.
"$G" audit rotate-key "$S" --new-key "$T/new/signing.key" >"$T/again.out" 2>&1 || { show "$T/again.out"; fail "again"; }
grep -q "nothing was left to do" "$T/again.out" || { show "$T/again.out"; fail "a second run changed something"; }

# The old key no longer starts the controller; the new one, now in the state folder, does.
if "$G" run --config "$T/repo" --state "$S" --speed 0 --until-idle --audit-key "$T/old.key" >"$T/old-run.out" 2>&1; then
  fail "a start with the old key was accepted"
fi
grep -q "rotate-key" "$T/old-run.out" || { show "$T/old-run.out"; fail "the old key's refusal says nothing of the rotation"; }
run "$S"

"$G" audit verify "$S/audit" --key "$T/old.pub" --require-closed >"$T/verify.out" 2>&1 ||
  { show "$T/verify.out"; fail "verify from the original key"; }
grep -Eq "^ROTATED at seq [0-9]+: key $old_id -> $new_id \(signed by the old key at seq [0-9]+, by the new key from seq [0-9]+\) by .+: yearly rotation$" \
  "$T/verify.out" || { show "$T/verify.out"; fail "verify does not report the rotation"; }
if "$G" audit verify "$S/audit" --key "$T/new/signing.pub" >"$T/verify-new.out" 2>&1; then
  fail "the new key alone verified the journal's early part"
fi
grep -q "^FAILED at seq 2 .*original key" "$T/verify-new.out" || { show "$T/verify-new.out"; fail "new key alone"; }

# The key in force for transparency-log verifiers: vkey, the newest checkpoint, proofs.
vkey=$("$G" audit vkey "$S/audit")
if "$G" audit vkey "$S/audit" --key "$T/old.pub" >/dev/null 2>"$T/vkey-old.err"; then fail "vkey printed a retired key"; fi
grep -q "key in force" "$T/vkey-old.err" || { show "$T/vkey-old.err"; fail "vkey with the old key"; }
origin=${vkey%%+*}
old_vkey=$("$G" audit vkey "$S/audit" --key "$T/old.pub" --origin "$origin")
"$G" audit prove "$S/audit" --seq 3 >"$T/inclusion.json"
python3 -c 'import json, sys; open(sys.argv[2], "w").write(json.load(open(sys.argv[1]))["checkpoint"])' \
  "$T/inclusion.json" "$T/checkpoint"
$V --vkey "$vkey" checkpoint "$T/checkpoint" >/dev/null 2>&1 || fail "the independent verifier refused the newest checkpoint"
$V --vkey "$vkey" inclusion "$T/inclusion.json" >/dev/null 2>&1 || fail "the independent verifier refused the proof"
if $V --vkey "$old_vkey" checkpoint "$T/checkpoint" >/dev/null 2>&1; then fail "the old key verified the newest checkpoint"; fi
"$G" audit verify-proof "$T/inclusion.json" --key "$S/audit/signing.pub" >/dev/null || fail "verify-proof with the new key"
if "$G" audit verify-proof "$T/inclusion.json" --key "$T/old.pub" >"$T/proof-old.out"; then fail "proof with the old key"; fi
grep -q "key rotation" "$T/proof-old.out" || { show "$T/proof-old.out"; fail "verify-proof says nothing of the rotation"; }

# A key kept outside the state folder: rotated with --key; the operator moves the new one.
S2=$T/state2
"$G" audit keygen --out "$T/k1" >/dev/null
"$G" audit keygen --out "$T/k2" >/dev/null
run "$S2" --audit-key "$T/k1/signing.key"
"$G" audit rotate-key "$S2/audit" --key "$T/k1/signing.key" --new-key "$T/k2/signing.key" >"$T/rotate2.out" 2>&1 ||
  { show "$T/rotate2.out"; fail "rotate-key --key"; }
grep -q "install -m 0600 $T/k2/signing.key $T/k1/signing.key" "$T/rotate2.out" ||
  { show "$T/rotate2.out"; fail "no instruction to move the key"; }
[ ! -e "$S2/audit/signing.key" ] || fail "a key kept outside was installed into the state folder"
cmp -s "$S2/audit/signing.pub" "$T/k2/signing.pub" || fail "signing.pub is not the new key's (outside)"
if "$G" run --config "$T/repo" --state "$S2" --speed 0 --until-idle --audit-key "$T/k1/signing.key" >"$T/old2.out" 2>&1; then
  fail "a start with the old outside key was accepted"
fi
run "$S2" --audit-key "$T/k2/signing.key"
"$G" audit verify "$S2/audit" --key "$T/k1/signing.pub" --require-closed >"$T/verify2.out" 2>&1 ||
  { show "$T/verify2.out"; fail "verify the outside-key journal"; }
grep -q "^ROTATED at seq" "$T/verify2.out" || { show "$T/verify2.out"; fail "no rotation reported (outside)"; }
echo "key rotation test: OK"

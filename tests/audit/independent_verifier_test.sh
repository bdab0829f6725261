#!/usr/bin/env bash
# Issue 39's acceptance, end to end: a running controller serves its journal's Merkle tree
# under /v1/audit/log/ in the C2SP tlog-tiles layout, and tlog_verify.py, a verifier
# written from RFC 9162 and the C2SP specifications alone, checks over HTTPS (bearer token,
# the controller's CA) the checkpoint's signature, the root against every hash tile, every
# entry against its leaf hash and inclusion proofs it computes itself; it also checks the
# proofs `gpufed audit prove` prints, and refuses one that was changed. A tenant's token
# reads the checkpoint and hash tiles but not the entry bundles, which hold every tenant's
# records.
# Usage: independent_verifier_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
SRC=$2
# shellcheck source=../testutil/port.sh
. "$SRC/tests/testutil/port.sh"
V="python3 $SRC/tests/audit/tlog_verify.py"
T=$(mktemp -d /tmp/gpufed-tlog.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=127.0.0.1" \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
admin=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
tenant=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
printf '%s admin\n%s team-nlp\n' "$admin" "$tenant" >"$T/tokens"
chmod 600 "$T/tokens"
printf '%s' "$admin" >"$T/admin.token"
printf '%s' "$tenant" >"$T/tenant.token"

"$G" run --config "$SRC/examples/quickstart" --state "$T/state" --listen 127.0.0.1:0 --tokens "$T/tokens" \
  --tls-cert "$T/cert.pem" --tls-key "$T/key.pem" --speed 1 >"$T/out" 2>"$T/err" &
pid=$!
port=$(api_port "$pid" "$T/err")
[ -n "$port" ] || fail "no API port (or gpufed run exited): $(cat "$T/err")"
base="https://127.0.0.1:$port/v1/audit/log"
get() { curl -sS --cacert "$T/cert.pem" -H "Authorization: Bearer $(cat "$1")" -o "$3" -w '%{http_code}' "$base/$2"; }
# The first passes are journalled and signed at once (sign-ahead); wait for a tree with
# decisions in it.
for _ in $(seq 200); do
  code=$(get "$T/admin.token" checkpoint "$T/checkpoint")
  [ "$code" = 200 ] && [ "$(sed -n 2p "$T/checkpoint")" -gt 20 ] && break
  sleep 0.1
done
[ "$code" = 200 ] || fail "GET checkpoint: $code $(cat "$T/checkpoint")"

vkey=$("$G" audit vkey "$T/state/audit")
$V --vkey "$vkey" tiles "$base" --token-file "$T/admin.token" --cacert "$T/cert.pem" --entries --prove 1 --prove 7 \
  --prove 20 >"$T/tiles.out" 2>&1 || fail "the independent verifier refused the served log: $(cat "$T/tiles.out")"
grep -q '^verified size=' "$T/tiles.out" || fail "no verified line: $(cat "$T/tiles.out")"

# A tenant reads the checkpoint and the hash tiles, never the entries.
[ "$(get "$T/tenant.token" checkpoint "$T/c2")" = 200 ] || fail "a tenant cannot read the checkpoint"
[ "$(get "$T/tenant.token" tile/0/000.p/5 "$T/t2")" = 200 ] || fail "a tenant cannot read a hash tile"
[ "$(stat -c %s "$T/t2")" = 160 ] || fail "a partial tile of 5 hashes is not 160 bytes"
[ "$(get "$T/tenant.token" tile/entries/000.p/5 "$T/e2")" = 403 ] || fail "a tenant read an entry bundle"
[ "$(get "$T/admin.token" tile/0/../000 "$T/x")" != 200 ] || fail "a path outside tlog-tiles was served"
[ "$(get "$T/admin.token" tile/0/999.p/1 "$T/x")" = 404 ] || fail "a tile beyond the tree was served"

# gpufed's own proofs, checked by the independent verifier; a changed one is refused.
"$G" audit prove "$T/state/audit" --seq 5 >"$T/inclusion.json"
$V --vkey "$vkey" inclusion "$T/inclusion.json" >/dev/null 2>&1 || fail "inclusion proof refused"
"$G" audit prove "$T/state/audit" --from-size 3 >"$T/consistency.json"
$V --vkey "$vkey" consistency "$T/consistency.json" >/dev/null 2>&1 || fail "consistency proof refused"
python3 - "$T/inclusion.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["record"] = p["record"].replace('"seq":5', '"seq":5 ', 1)
json.dump(p, open(sys.argv[1], "w"))
PY
if $V --vkey "$vkey" inclusion "$T/inclusion.json" >/dev/null 2>&1; then fail "a changed record was proven"; fi

kill -TERM "$pid"
wait "$pid" || true
pid=""
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" --require-closed >"$T/verify.out" ||
  fail "verify after the stop: $(cat "$T/verify.out")"
echo "independent verifier: OK ($(cat "$T/tiles.out"))"

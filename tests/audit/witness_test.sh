#!/usr/bin/env bash
# Witnesses, end to end with real processes: `gpufed audit witness` on 127.0.0.1 with
# mutual TLS, and `gpufed run` on a repository that names it in an AuditWitness.
# - the witness serves only clients with a certificate from its client CA;
# - the run's checkpoints are cosigned, the closing one included, and kept beside the
#   journal; `gpufed audit verify --require-witnessed` passes, and so does tlog_verify.py
#   (written from the C2SP specifications alone) on the cosigned checkpoint;
# - a history made afresh with the same log key (what root on the controller host can do)
#   is refused by the witness, which keeps what it cosigned, and `verify
#   --require-witnessed` fails on it; `/readyz`-level state says the witness refuses.
# Usage: witness_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
SRC=$2
V="python3 $SRC/tests/audit/tlog_verify.py"
T=$(mktemp -d /tmp/gpufed-witness.XXXXXX)
wpid=""
cleanup() {
  if [ -n "$wpid" ]; then
    kill -TERM "$wpid" 2>/dev/null || true
    wait "$wpid" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A CA for the witness's server certificate and the controller's client certificate, and
# another CA whose client is a stranger.
pki() {  # pki NAME CN [CA]: a key and certificate, signed by CA (self-signed without)
  local name=$1 cn=$2 ca=${3:-}
  if [ -z "$ca" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=$cn" \
      -keyout "$T/$name.key" -out "$T/$name.pem" 2>/dev/null
  else
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$cn" -keyout "$T/$name.key" \
      -out "$T/$name.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$T/$name.ext"
    openssl x509 -req -in "$T/$name.csr" -CA "$T/$ca.pem" -CAkey "$T/$ca.key" -CAcreateserial -days 1 \
      -extfile "$T/$name.ext" -out "$T/$name.pem" 2>/dev/null
  fi
  chmod 600 "$T/$name.key"
}
pki ca "gpufed test CA"
pki other-ca "another CA"
pki witness 127.0.0.1 ca
pki controller controller-1 ca
pki stranger stranger other-ca

"$G" audit keygen -o "$T/logkey" >/dev/null
"$G" audit keygen -o "$T/wkey" >/dev/null
# gpufed run's log origin is gpufed/<controller id> (gpufed/gpufed by default).
log_vkey=$("$G" audit vkey "$T/logkey" --key "$T/logkey/signing.pub" --origin gpufed/gpufed)
w_vkey=$("$G" audit witness --key "$T/wkey/signing.key" --name witness-1.test --print-vkey)

start_witness() {  # start_witness [PORT]
  "$G" audit witness --listen "127.0.0.1:${1:-0}" --state "$T/wstate" --key "$T/wkey/signing.key" --name witness-1.test \
    --log "$log_vkey" --tls-cert "$T/witness.pem" --tls-key "$T/witness.key" --tls-client-ca "$T/ca.pem" \
    2>"$T/witness.err" &
  wpid=$!
  wport=""
  for _ in $(seq 200); do
    wport=$(sed -n 's|.*listening on https://127.0.0.1:\([0-9]*\).*|\1|p' "$T/witness.err" | head -1)
    [ -n "$wport" ] && break
    kill -0 "$wpid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$wport" ] || fail "the witness did not start: $(cat "$T/witness.err")"
}
start_witness
url="https://127.0.0.1:$wport"

# Mutual TLS: no client certificate, or one from another CA, gets no answer at all; the
# controller's certificate gets the protocol's answers (400 for a malformed body).
post() { curl -sS -o "$T/answer" -w '%{http_code}' --cacert "$T/ca.pem" "$@" --data-binary 'old x' "$url/add-checkpoint"; }
if post >/dev/null 2>&1; then fail "the witness answered a client without a certificate"; fi
if post --cert "$T/stranger.pem" --key "$T/stranger.key" >/dev/null 2>&1; then
  fail "the witness answered a client certificate of another CA"
fi
[ "$(post --cert "$T/controller.pem" --key "$T/controller.key")" = 400 ] || fail "a malformed request is not 400"

# A repository of its own (the quickstart's federation) that names the witness.
cp -r "$SRC/examples/quickstart" "$T/repo"
cat >"$T/repo/witness.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: AuditWitness
metadata:
  name: witness-1
spec:
  url: $url
  vkey: $w_vkey
  tls: {caFile: $T/ca.pem, certFile: $T/controller.pem, keyFile: $T/controller.key}
YAML
"$G" validate "$T/repo" >/dev/null || fail "the repository with an AuditWitness does not validate"

"$G" run --config "$T/repo" --state "$T/state" --audit-key "$T/logkey/signing.key" >"$T/run.out" 2>"$T/run.err" ||
  fail "gpufed run: $(tail -5 "$T/run.err")"
grep -q "audit witnesses cosigned the closing checkpoint" "$T/run.err" ||
  fail "the closing checkpoint was not cosigned: $(grep -i witness "$T/run.err")"
ls "$T/state/audit/witnessed/"*.note >/dev/null || fail "no cosigned checkpoint kept beside the journal"

verify() { "$G" audit verify "$1" --key "$T/logkey/signing.pub" --witness-vkey "$w_vkey" "${@:2}"; }
verify "$T/state/audit" --require-witnessed --require-closed >"$T/verify.out" ||
  fail "verify --require-witnessed: $(cat "$T/verify.out")"
grep -q '^WITNESSED' "$T/verify.out" || fail "verify does not say WITNESSED: $(cat "$T/verify.out")"
$V --vkey "$log_vkey" --witness-vkey "$w_vkey" --require-witnesses 1 checkpoint "$T/state/audit/witnessed/"*.note \
  >"$T/indep.out" 2>&1 || fail "the independent verifier refused the cosigned checkpoint: $(cat "$T/indep.out")"
# ...and it holds the quorum to a witness key: another key of the same name has no cosignature there.
"$G" audit keygen -o "$T/wkey2" >/dev/null
other_vkey=$("$G" audit witness --key "$T/wkey2/signing.key" --name witness-1.test --print-vkey)
if $V --vkey "$log_vkey" --witness-vkey "$other_vkey" --require-witnesses 1 checkpoint \
  "$T/state/audit/witnessed/"*.note >/dev/null 2>&1; then
  fail "the independent verifier found a quorum with a key that never cosigned"
fi
if verify "$T/state/audit" --require-witnessed --witness-vkey "$other_vkey" --witness-quorum 2 >"$T/verify.q" 2>&1; then
  fail "verify passed a 2-of-2 quorum with one witness that never cosigned: $(cat "$T/verify.q")"
fi
verify "$T/state/audit" --require-witnessed --witness-vkey "$other_vkey" --witness-quorum 1 >"$T/verify.q" 2>&1 ||
  fail "verify failed a 1-of-2 quorum that one witness meets: $(cat "$T/verify.q")"

# The witness keeps what it cosigned across a restart.
kill -TERM "$wpid"
wait "$wpid" || true
start_witness "$wport"

# Root on the controller host, with the log's key: a new history (the old journal gone,
# another one written and signed with the same key). The witness refuses it.
mv "$T/state" "$T/state.original"
"$G" run --config "$T/repo" --state "$T/state" --audit-key "$T/logkey/signing.key" --drain-timeout 5s \
  >"$T/run2.out" 2>"$T/run2.err" || true
grep -q "witness refuses the journal's checkpoint" "$T/run2.err" ||
  fail "the witness did not refuse a rewritten history: $(grep -i witness "$T/run2.err")"
if verify "$T/state/audit" --require-witnessed >"$T/verify2.out"; then
  fail "verify --require-witnessed passed a history the witness never cosigned: $(cat "$T/verify2.out")"
fi
# And the cosigned checkpoint of the real history, put beside the rewritten journal,
# shows that it is not the history the witness saw.
cp "$T/state.original/audit/witnessed/"*.note "$T/state/audit/witnessed/" 2>/dev/null ||
  { mkdir -p "$T/state/audit/witnessed" && cp "$T/state.original/audit/witnessed/"*.note "$T/state/audit/witnessed/"; }
if verify "$T/state/audit" >"$T/verify3.out"; then fail "a mismatching cosignature was not a failure: $(cat "$T/verify3.out")"; fi
grep -q 'MISMATCH' "$T/verify3.out" || fail "verify did not name the mismatch: $(cat "$T/verify3.out")"
# The original history still verifies as witnessed.
verify "$T/state.original/audit" --require-witnessed >/dev/null || fail "the original history no longer verifies"
echo "witness: OK"

#!/usr/bin/env bash
# Mutual TLS on the API (issue 39: "mutual-TLS clients are named by their certificate
# subject"), through the gpufed binary on 127.0.0.1 with certificates made here:
#  - `gpufed run --tls-client-ca` without --tls-cert, and a tokens file that binds a token
#    to a certificate without --tls-client-ca, are refused (exit 2) saying why;
#  - a client without a certificate, one whose certificate another CA issued (with the same
#    subject), and one whose certificate is for servers only fail the handshake: no request
#    is read;
#  - a client with a good certificate and a tenant token submits (`gpufed submit
#    --client-cert`) and cancels; workload-submitted and workload-cancelled name the
#    certificate's subject (`x509:CN=alice,O=team-nlp`, as `openssl x509 -nameopt RFC2253`
#    prints it), and `gpufed audit query --principal` finds both;
#  - a token bound to a certificate (`TOKEN TENANT x509:...`) is refused (401) over another
#    certificate and works over its own;
#  - a hostile subject (',', '+', '=', '\', UTF-8, a newline) and a 10 KB one are named
#    by escaped and hashed principals that the journal and the query carry intact;
#  - two tenants' principals never appear in each other's API views (/v1/audit, ...);
#  - /readyz and the start's log line say mutual TLS is on; SIGHUP keeps it on; a client
#    resuming its TLS session keeps its certificate.
# Usage: run_mtls_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
SRC=$2
# shellcheck source=../../testutil/port.sh
. "$SRC/tests/testutil/port.sh"
T=$(mktemp -d /tmp/gpufed-mtls.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- Certificates: the server's (self-signed, 127.0.0.1), a clients' CA and a rogue CA.
ec() { echo "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"; }
# shellcheck disable=SC2046
openssl req -x509 $(ec) -days 1 -subj "/CN=127.0.0.1" -addext subjectAltName=IP:127.0.0.1 \
  -keyout "$T/server.key" -out "$T/server.pem" 2>/dev/null
for ca in clients-ca rogue-ca; do
  # shellcheck disable=SC2046
  openssl req -x509 $(ec) -days 1 -subj "/O=gpufed tests/CN=$ca" -keyout "$T/$ca.key" -out "$T/$ca.pem" 2>/dev/null
done
printf 'extendedKeyUsage = clientAuth\n' >"$T/client.ext"
printf 'extendedKeyUsage = serverAuth\n' >"$T/server-only.ext"
# client NAME CA [EXT]: NAME.pem and NAME.key, issued by CA, subject from NAME.cnf's [dn].
client() {
  # shellcheck disable=SC2046
  openssl req -new $(ec) -config "$T/$1.cnf" -keyout "$T/$1.key" -out "$T/$1.csr" 2>/dev/null
  openssl x509 -req -in "$T/$1.csr" -CA "$T/$2.pem" -CAkey "$T/$2.key" -CAcreateserial -days 1 \
    -extfile "$T/${3:-client}.ext" -out "$T/$1.pem" 2>/dev/null
}
# subject NAME LINE...: NAME.cnf with the [dn] lines given (encoded order: general first).
subject() {
  local name=$1
  shift
  printf '[req]\nprompt = no\nutf8 = yes\nstring_mask = utf8only\ndistinguished_name = dn\n[dn]\n' >"$T/$name.cnf"
  printf '%s\n' "$@" >>"$T/$name.cnf"
}
subject alice "O = team-nlp" "CN = alice"
subject bob "O = team-vision" "CN = bob"
subject carol "O = team-nlp" "CN = carol"
subject mallory "O = team-nlp" "CN = alice"  # alice's subject, from the rogue CA
subject webserver "O = team-nlp" "CN = web"  # the right CA, but for servers only
# ',' '+' '=' '\' a UTF-8 e-acute and a newline (the config file's \n) in one value.
subject eve "O = team-nlp" 'CN = eve, the admin+x=y \\ é\nO=evil'
# 170 OUs of 60 bytes: a subject of over 10 KB.
units=()
for i in $(seq 0 169); do units+=("$i.OU = $(head -c 60 /dev/zero | tr '\0' u)"); done
subject long "O = team-nlp" "${units[@]}" "CN = long"
for name in alice bob carol eve long; do client "$name" clients-ca; done
client mallory rogue-ca
client webserver clients-ca server-only
[ "$(stat -c %s "$T/long.pem")" -gt 10000 ] || fail "the long certificate is not over 10 KB"

tok() { head -c 24 /dev/urandom | base64 | tr -d '/+='; }
nlp=$(tok) vision=$(tok) bound=$(tok) admin=$(tok)
printf '%s team-nlp nlp-ci\n%s team-vision vision-ci\n%s team-nlp x509:CN=carol,O=team-nlp\n%s admin ops\n' \
  "$nlp" "$vision" "$bound" "$admin" >"$T/tokens"
chmod 600 "$T/tokens"

# (An array, not a function: `function &` would put a shell between $! and gpufed.)
run=("$G" run --config "$SRC/examples/quickstart" --listen 127.0.0.1:0 --speed 1)

# --- Refused starts: client certificates without TLS; bound tokens nobody is asked for.
code=0
"${run[@]}" --state "$T/s1" --tokens "$T/tokens" --tls-client-ca "$T/clients-ca.pem" >/dev/null 2>"$T/err1" || code=$?
[ "$code" = 2 ] || fail "--tls-client-ca without --tls-cert: exit $code, want 2: $(cat "$T/err1")"
grep -q -- "--tls-client-ca.*needs --tls-cert" "$T/err1" || fail "no reason: $(cat "$T/err1")"
code=0
"${run[@]}" --state "$T/s2" --tokens "$T/tokens" --tls-cert "$T/server.pem" --tls-key "$T/server.key" \
  >/dev/null 2>"$T/err2" || code=$?
[ "$code" = 2 ] || fail "bound tokens without --tls-client-ca: exit $code, want 2: $(cat "$T/err2")"
grep -q "binds 1 token(s) to client certificates.*--tls-client-ca" "$T/err2" || fail "no reason: $(cat "$T/err2")"

# --- The controller, with mutual TLS.
"${run[@]}" --state "$T/state" --tokens "$T/tokens" --tls-cert "$T/server.pem" --tls-key "$T/server.key" \
  --tls-client-ca "$T/clients-ca.pem" >"$T/out" 2>"$T/err" &
pid=$!
port=$(api_port "$pid" "$T/err")
[ -n "$port" ] || fail "no API port (or gpufed run exited): $(cat "$T/err")"
grep -q "API on https://127.0.0.1:$port, mutual TLS: clients present a certificate issued by $T/clients-ca.pem" \
  "$T/err" || fail "the start does not say mutual TLS is on: $(cat "$T/err")"
url="https://127.0.0.1:$port"

# call WHO TOKEN METHOD PATH: the HTTP status (000: no HTTP answer); the body in $T/body.
call() {
  local cert=()
  [ "$1" != none ] && cert=(--cert "$T/$1.pem" --key "$T/$1.key")
  curl -sS --cacert "$T/server.pem" "${cert[@]}" -H "Authorization: Bearer $2" -X "$3" -o "$T/body" \
    -w '%{http_code}' "$url$4" 2>"$T/curl.err" || true
}

[ "$(call alice "$nlp" GET /readyz)" = 200 ] || fail "/readyz with a good certificate: $(cat "$T/body" "$T/curl.err")"
grep -q '"tls":"mutual"' "$T/body" || fail "/readyz does not say mutual TLS: $(cat "$T/body")"

# No certificate, one from another CA, or one not for clients: the handshake fails,
# nothing is answered.
for who in none mallory webserver; do
  status=$(call "$who" "$nlp" GET /v1/workloads)
  [ "$status" = 000 ] || fail "a client with certificate '$who' got HTTP $status: $(cat "$T/body")"
done
status=$(call none "" GET /healthz)
[ "$status" = 000 ] || fail "/healthz without a certificate got HTTP $status"

# Alice (team-nlp's token) submits with the gpufed CLI and cancels.
workload() {
  printf 'apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: %s}\nspec:\n  tenant: %s\n' "$1" "$2"
  printf '  type: training\n  resources: {gpus: 1}\n  durationHint: 10h\n'
}
workload alice-train team-nlp >"$T/alice-train.yaml"
"$G" submit "$T/alice-train.yaml" --server "$url" --ca-cert "$T/server.pem" --token "$nlp" \
  --client-cert "$T/alice.pem" --client-key "$T/alice.key" >"$T/submit.out" 2>&1 ||
  fail "gpufed submit with a client certificate: $(cat "$T/submit.out")"
if "$G" submit "$T/alice-train.yaml" --server "$url" --ca-cert "$T/server.pem" --token "$nlp" \
  >"$T/submit2.out" 2>&1; then
  fail "gpufed submit without a client certificate succeeded"
fi
[ "$(call alice "$nlp" DELETE /v1/workloads/alice-train)" = 202 ] || fail "cancel: $(cat "$T/body")"

# Bob (team-vision) submits; a bound token works over its own certificate only.
workload bob-render team-vision >"$T/bob.yaml"
"$G" submit "$T/bob.yaml" --server "$url" --ca-cert "$T/server.pem" --token "$vision" \
  --client-cert "$T/bob.pem" --client-key "$T/bob.key" >/dev/null || fail "bob's submission"
[ "$(call alice "$bound" GET /v1/workloads)" = 401 ] || fail "carol's bound token over alice's certificate: not 401"
[ "$(call carol "$bound" GET /v1/workloads)" = 200 ] || fail "carol's bound token over her certificate: $(cat "$T/body")"
workload carol-eval team-nlp >"$T/carol.yaml"
"$G" submit "$T/carol.yaml" --server "$url" --ca-cert "$T/server.pem" --token "$bound" \
  --client-cert "$T/carol.pem" --client-key "$T/carol.key" >/dev/null || fail "carol's submission"

# Hostile and long subjects.
for who in eve long; do
  workload "$who-job" team-nlp >"$T/$who.yaml"
  "$G" submit "$T/$who.yaml" --server "$url" --ca-cert "$T/server.pem" --token "$nlp" \
    --client-cert "$T/$who.pem" --client-key "$T/$who.key" >"$T/$who.out" 2>&1 || fail "$who: $(cat "$T/$who.out")"
done

# Neither tenant's views show the other's principals (nor its own: no view names them).
for view in /v1/audit /v1/decisions /v1/workloads /v1/queue /v1/tenants /v1/history; do
  [ "$(call bob "$vision" GET "$view")" = 200 ] || fail "bob GET $view: $(cat "$T/body")"
  if grep -q -e "CN=alice" -e "CN=carol" -e "x509" "$T/body"; then fail "team-vision's $view names team-nlp's callers"; fi
  [ "$(call alice "$nlp" GET "$view")" = 200 ] || fail "alice GET $view: $(cat "$T/body")"
  if grep -q -e "CN=bob" -e "x509" "$T/body"; then fail "team-nlp's $view names team-vision's caller"; fi
done

# A client that resumes its TLS session (TLS 1.2 session ids) is still let in.
openssl s_client -connect "127.0.0.1:$port" -tls1_2 -reconnect -CAfile "$T/server.pem" -cert "$T/alice.pem" \
  -key "$T/alice.key" </dev/null >"$T/resume.out" 2>&1 || true
grep -q "^Reused" "$T/resume.out" || fail "no session was resumed: $(grep -i -e error -e reused -e new "$T/resume.out")"

# SIGHUP reloads the files and keeps mutual TLS on.
kill -HUP "$pid"
for _ in $(seq 100); do
  grep -q "TLS certificate reloaded" "$T/out" && break
  sleep 0.1
done
grep -q "TLS certificate reloaded from $T/server.pem, client CA from $T/clients-ca.pem (SIGHUP)" "$T/out" ||
  fail "no reload line: $(cat "$T/out")"
[ "$(call none "$nlp" GET /v1/workloads)" = 000 ] || fail "after SIGHUP a client without a certificate got in"
[ "$(call alice "$nlp" GET /v1/workloads)" = 200 ] || fail "after SIGHUP alice cannot call"

kill -TERM "$pid"
wait "$pid" || fail "run exited non-zero after SIGTERM: $(tail -5 "$T/err")"
pid=""

# --- The journal: who did what.
alice_subject=$(openssl x509 -in "$T/alice.pem" -noout -subject -nameopt RFC2253 | sed 's/^subject=//')
[ "$alice_subject" = "CN=alice,O=team-nlp" ] || fail "openssl prints alice's subject as $alice_subject"
query() { "$G" audit query -d "$T/state/audit" -o jsonl "$@"; }
# kind principal tenant: exactly one record of that kind by that principal, for that tenant.
expect_one() {
  query --kind "$1" --principal "$2" >"$T/q"
  [ "$(wc -l <"$T/q")" = 1 ] || fail "$1 by $2: $(wc -l <"$T/q") records: $(cat "$T/q")"
  python3 - "$T/q" "$2" "$3" <<'PY' || fail "$1 by $2: $(cat "$T/q")"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["principal"] == sys.argv[2] and r["tenant"] == sys.argv[3], r
PY
}
expect_one workload-submitted "x509:$alice_subject" team-nlp
expect_one workload-cancelled "x509:$alice_subject" team-nlp
expect_one workload-submitted "x509:CN=bob,O=team-vision" team-vision
expect_one workload-submitted "x509:CN=carol,O=team-nlp" team-nlp
expect_one workload-submitted "x509:CN=eve%2C%20the%20admin%2Bx%3Dy%20%5C%20%C3%A9%0AO%3Devil,O=team-nlp" team-nlp
long_principal=$(query --kind workload-submitted --workload long-job | python3 -c \
  'import json, sys; print(json.loads(sys.stdin.readline())["principal"])')
[[ "$long_principal" =~ ^x509-sha256:[0-9a-f]{64}$ ]] || fail "the 10 KB subject's principal: $long_principal"
# The hash is over the subject's DER, as docs/audit-format.md says to find it.
openssl x509 -in "$T/long.pem" -outform DER -out "$T/long.der"
read -r off hl len < <(openssl asn1parse -inform DER -in "$T/long.der" |
  sed -n 's/^ *\([0-9]*\):d=2 *hl=\([0-9]*\) *l= *\([0-9]*\).*/\1 \2 \3/p' | sed -n 6p)
# Through a file, not `tail | head`: head leaving early would end tail with SIGPIPE, which
# pipefail turns into a silent exit of this script (seen once under ctest -j2).
tail -c +$((off + 1)) "$T/long.der" >"$T/long.tail"
hash=$(head -c $((hl + len)) "$T/long.tail" | sha256sum | cut -d' ' -f1)
[ "$long_principal" = "x509-sha256:$hash" ] || fail "$long_principal is not the SHA-256 of the subject ($hash)"
expect_one workload-submitted "$long_principal" team-nlp
# No token's name for a call that a certificate made, and the table shows the principal.
[ -z "$(query --principal nlp-ci)" ] || fail "a call with a certificate was named by its token"
"$G" audit query -d "$T/state/audit" --workload alice-train >"$T/table"
grep -q "by x509:CN=alice,O=team-nlp" "$T/table" || fail "the table does not say who: $(cat "$T/table")"
"$G" audit verify "$T/state/audit" --key "$T/state/audit/signing.pub" --require-closed >"$T/verify.out" ||
  fail "verify: $(cat "$T/verify.out")"
echo "mutual TLS: OK"

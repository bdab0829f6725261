#!/usr/bin/env bash
# What an operator of the packaged service relies on (issue 40), through the gpufed binary:
#  - `gpufed version [--json]` and `--version` name the VERSION file's release and the commit;
#  - `gpufed run --config-file` reads the service's settings (paths relative to the file),
#    a flag on the command line wins over the file, and a bad file is refused (exit 2)
#    naming file, line and key;
#  - SIGHUP reloads the TLS certificate: new connections get the new one;
#  - /metrics carries gpufed_build_info;
#  - plain HTTP off loopback is refused (exit 1) naming --allow-plaintext, before anything
#    is written (nothing binds a non-loopback address here);
#  - a --max-body above 64MiB is refused (exit 2) before anything is written.
# Usage: run_operations_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1
SRC=$2
# shellcheck source=../../testutil/port.sh
. "$SRC/tests/testutil/port.sh"
T=$(mktemp -d /tmp/gpufed-operations.XXXXXX)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Version: the release from VERSION, the commit beside it.
release=$(tr -d '[:space:]' <"$SRC/VERSION")
"$G" version --json >"$T/version.json"
python3 - "$T/version.json" "$release" <<'PY' || fail "gpufed version --json: $(cat "$T/version.json")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["version"].startswith(sys.argv[2]), v
assert v["commit"] and v["buildType"] and v["allocator"] in ("jemalloc", "glibc", "sanitizer"), v
PY
"$G" --version | grep -q "^gpufed $release" || fail "--version does not name $release"

# A certificate pair for 127.0.0.1 into tls/ (both runs of this replace the files in place).
cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj "/CN=$1" \
    -addext subjectAltName=IP:127.0.0.1 -keyout "$T/etc/tls/key.pem.new" -out "$T/etc/tls/cert.pem.new" 2>/dev/null
  cp "$T/etc/tls/cert.pem.new" "$T/$1.pem"
  mv "$T/etc/tls/key.pem.new" "$T/etc/tls/key.pem"
  mv "$T/etc/tls/cert.pem.new" "$T/etc/tls/cert.pem"
}
mkdir -p "$T/etc/tls"
cert first
cat >"$T/etc/gpufed.yaml" <<YAML
# as /etc/gpufed/gpufed.yaml would hold them
repository: $SRC/examples/quickstart
state: state
listen: 127.0.0.1:0
tls: {cert: tls/cert.pem, key: tls/key.pem}
speed: 1
log: {level: info, format: text}
YAML
"$G" run --config-file "$T/etc/gpufed.yaml" >"$T/out" 2>"$T/err" &
pid=$!
port=$(api_port "$pid" "$T/err")
[ -n "$port" ] || fail "no https API line (or run --config-file exited): $(cat "$T/err")"
[ -d "$T/etc/state/audit" ] || fail "state: state is not relative to the file's folder"
url="https://127.0.0.1:$port"
curl -sf --cacert "$T/first.pem" "$url/healthz" >/dev/null || fail "healthz over TLS with the first certificate"
token=$(cat "$T/etc/state/admin.token")
curl -sf --cacert "$T/first.pem" -H "Authorization: Bearer $token" "$url/metrics" >"$T/metrics"
grep -q "^gpufed_build_info{version=\"$release" "$T/metrics" || fail "no gpufed_build_info: $(grep build_info "$T/metrics")"

# SIGHUP: new connections get the renewed certificate, and the old CA no longer verifies.
cert second
kill -HUP "$pid"
for _ in $(seq 100); do
  grep -q "TLS certificate reloaded" "$T/out" && break
  sleep 0.1
done
grep -q "TLS certificate reloaded from $T/etc/tls/cert.pem (SIGHUP)" "$T/out" || fail "no reload line: $(cat "$T/out")"
curl -sf --cacert "$T/second.pem" "$url/healthz" >/dev/null || fail "healthz with the renewed certificate"
if curl -sf --cacert "$T/first.pem" "$url/healthz" >/dev/null 2>&1; then fail "the old certificate is still served"; fi
kill -0 "$pid" || fail "SIGHUP ended the run"
kill -TERM "$pid"
wait "$pid" || fail "run exited non-zero after SIGTERM"
pid=""

# The command line wins over the file: no API, as fast as possible, until idle.
"$G" run --config-file "$T/etc/gpufed.yaml" --listen "" --speed 0 --until-idle --state "$T/s2" >"$T/out2" 2>&1 ||
  fail "flags over the file: $(tail -5 "$T/out2")"
grep -q "gpufed run summary" "$T/out2" || fail "no summary"

# A bad file: every problem with its line, exit 2, nothing started.
printf 'repository: %s\nlisen: 127.0.0.1:8080\nspeed: fast\n' "$SRC/examples/quickstart" >"$T/bad.yaml"
set +e
"$G" run --config-file "$T/bad.yaml" --state "$T/s3" >/dev/null 2>"$T/bad.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "bad config file: exit $rc, want 2"
grep -q "bad.yaml:2:1: error: lisen" "$T/bad.err" || fail "unknown key not named: $(cat "$T/bad.err")"
grep -q "bad.yaml:3:8: error: speed" "$T/bad.err" || fail "bad speed not named: $(cat "$T/bad.err")"
[ ! -e "$T/s3" ] || fail "a bad config file still made a state folder"

# An empty state folder name (a file in / otherwise) is a usage error.
set +e
"$G" run --config "$SRC/examples/quickstart" --state "" --until-idle >/dev/null 2>"$T/empty.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--state \"\": exit $rc, want 2"
grep -q -- "--state" "$T/empty.err" || fail "empty --state not named: $(cat "$T/empty.err")"

# A --max-body above its ceiling (64MiB) is a usage error, before anything starts.
set +e
"$G" run --config "$SRC/examples/quickstart" --state "$T/s5" --max-body 65MiB >/dev/null 2>"$T/body.err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--max-body 65MiB: exit $rc, want 2"
grep -q -- "--max-body 65MiB is above 64MiB" "$T/body.err" || fail "ceiling not named: $(cat "$T/body.err")"
[ ! -e "$T/s5" ] || fail "the refused start made a state folder"

# Plain HTTP off loopback: refused before anything starts, naming --allow-plaintext.
set +e
"$G" run --config "$SRC/examples/quickstart" --state "$T/s4" --listen 0.0.0.0:18080 >/dev/null 2>"$T/plain.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "plain HTTP on 0.0.0.0: exit $rc, want 1"
grep -q -- "--allow-plaintext" "$T/plain.err" || fail "refusal does not name --allow-plaintext: $(cat "$T/plain.err")"
[ ! -e "$T/s4" ] || fail "the refused start made a state folder"
echo "run_operations_test: ok"

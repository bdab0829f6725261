#!/usr/bin/env bash
# `gpufed run` ships its journal while it runs, to a real rsyslog over mutual TLS and to an
# HTTPS receiver in the same repository:
#   1. --until-idle: both receivers hold every journal record at exit, and their copies verify;
#   2. rsyslog killed mid-run (down 10 s) and restarted, then SIGTERM: exit 0, still every
#      record in both, and one sink-lagging / sink-recovered pair in the journal;
#   3. a sink that never comes back: --until-idle exits 1 after --drain-timeout, naming it.
# Usage: run_shipping_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
HERE=$SRC/tests/integration/audit
T=$(mktemp -d /tmp/gpufed-run-shipping.XXXXXX)
pid="" receiver=""
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  [ -n "$receiver" ] && kill "$receiver" 2>/dev/null
  [ -n "$RS" ] && { bash "$HERE/rsyslog.sh" stop "$RS" || true; }
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$T/run.out" >&2 2>/dev/null || true; exit 1; }
free_port() { python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])"; }
records() { "$G" audit verify "$1" >"$T/v.out" 2>&1 || { cat "$T/v.out" >&2; fail "audit verify $1"; }
            sed -n 's/^OK: \([0-9]*\) records.*/\1/p' "$T/v.out"; }
# Both receivers' copies verify and hold exactly the journal's records.
expect_receivers_hold() {  # STATE
  local want; want=$(records "$1/audit")
  [ "$want" -gt 0 ] || fail "empty journal"
  for copy in "$RS/received.log" "$HTTPS_COPY"; do
    "$G" audit verify "$copy" --key "$1/audit/signing.pub" >"$T/copy.out" 2>&1 || { cat "$T/copy.out" >&2; fail "verify $copy"; }
    grep -q "^OK: $want records" "$T/copy.out" || { cat "$T/copy.out" >&2; fail "$copy does not hold all $want records"; }
  done
}

bash "$HERE/make-pki.sh" "$T/pki"
cp -r "$SRC/examples/quickstart" "$T/repo"
# Fresh receivers for each part (a receiver's copy holds one journal), and the repo's
# AuditSinks pointing at them.
start_receivers() {  # PART
  [ -n "$RS" ] && bash "$HERE/rsyslog.sh" stop "$RS"
  [ -n "$receiver" ] && { kill "$receiver"; wait "$receiver" 2>/dev/null || true; }
  RS=$T/rsyslog-$1 HTTPS_COPY=$T/https-$1.jsonl
  mkdir -p "$RS" && cp -r "$T/pki" "$RS/pki"
  syslog_port=$(free_port)
  bash "$HERE/rsyslog.sh" start "$RS" "$syslog_port"
  rm -f "$T/https.port"
  python3 "$HERE/https_receiver.py" "$T/https.port" "$HTTPS_COPY" "$T/pki/ca.crt" "$T/pki/server.crt" "$T/pki/server.key" &
  receiver=$!
  for _ in $(seq 200); do [ -s "$T/https.port" ] && break; sleep 0.025; done
  [ -s "$T/https.port" ] || fail "https receiver did not start"
  cat >"$T/repo/audit-sinks.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: AuditSink
metadata:
  name: soc-syslog
spec:
  type: syslog-tls
  endpoint: 127.0.0.1:$syslog_port
  tls: {caFile: $T/pki/ca.crt, certFile: $T/pki/client.crt, keyFile: $T/pki/client.key, serverName: localhost}
  lagLimit: {seconds: 2s}
---
apiVersion: gpufed/v1alpha1
kind: AuditSink
metadata:
  name: archive-https
spec:
  type: https
  endpoint: https://localhost:$(cat "$T/https.port")/audit
  tls: {caFile: $T/pki/ca.crt, certFile: $T/pki/client.crt, keyFile: $T/pki/client.key}
YAML
}
RS=""

# 1. A whole run: every record reaches both receivers before the exit.
start_receivers 1
"$G" run --config "$T/repo" --state "$T/s1" --until-idle >"$T/run.out" 2>&1 || fail "run --until-idle"
grep -q "audit sinks hold every record" "$T/run.out" || fail "no drain line"
expect_receivers_hold "$T/s1"

# 2. rsyslog dies mid-run (SIGKILL) and comes back; the controller then stops on SIGTERM.
start_receivers 2
"$G" run --config "$T/repo" --state "$T/s2" --speed 500 --until-idle >"$T/run.out" 2>&1 &
pid=$!
decisions() { "$G" audit query -d "$T/s2/audit" --kind decision --output jsonl 2>/dev/null | wc -l || true; }
wait_for() {  # DESCRIPTION COMMAND...: polls (bounded to 60 s) until COMMAND succeeds
  local what=$1; shift
  for _ in $(seq 600); do "$@" && return 0; kill -0 "$pid" 2>/dev/null || fail "gpufed run ended early ($what)"; sleep 0.1; done
  fail "timed out waiting for $what"
}
received_some() { local n; n=$(grep -c '{"seq":' "$RS/received.log" 2>/dev/null) || true; [ "${n:-0}" -ge 5 ]; }
wait_for "records at rsyslog" received_some
bash "$HERE/rsyslog.sh" kill "$RS"
killed_at=$(date +%s)
at_kill=$(decisions)
more_decisions() { [ "$(decisions)" -ge $((at_kill + 20)) ]; }
wait_for "decisions during the outage" more_decisions
lagging() { grep -q "audit sink soc-syslog lags" "$T/run.out"; }
wait_for "the lag-limit notice" lagging
# The receiver stays down for 10 s in all (a scenario length, not a synchronisation).
sleep $((10 - ($(date +%s) - killed_at) > 0 ? 10 - ($(date +%s) - killed_at) : 0))
bash "$HERE/rsyslog.sh" start "$RS" "$syslog_port"
caught_up() { grep -q "audit sink soc-syslog caught up" "$T/run.out"; }
wait_for "the recovery notice" caught_up
kill -TERM "$pid"
rc=0; wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || fail "exit $rc after SIGTERM"
expect_receivers_hold "$T/s2"
for kind in sink-lagging sink-recovered; do
  n=$("$G" audit query -d "$T/s2/audit" --kind $kind --output jsonl | grep -c '"sink":"soc-syslog"' || true)
  [ "$n" = 1 ] || fail "$n $kind records for soc-syslog (want 1)"
done

# 3. A sink that stays down: the run ends, drains for --drain-timeout, exits 1 naming it.
bash "$HERE/rsyslog.sh" stop "$RS"
rc=0; "$G" run --config "$T/repo" --state "$T/s3" --until-idle --drain-timeout 2s >"$T/run.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc with a sink down (want 1)"
grep -q "audit sinks still behind after --drain-timeout 2s: soc-syslog" "$T/run.out" || fail "the sink behind is not named"
echo "run shipping test: OK"

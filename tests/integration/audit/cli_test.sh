#!/usr/bin/env bash
# End to end through the gpufed binary: keygen, record, verify (and tampering), query,
# report, replay (same and what-if), and ship to a real rsyslog whose copy verifies.
# Usage: cli_test.sh GPUFED SOURCE_DIR
set -euo pipefail
G=$1 SRC=$2
HERE=$SRC/tests/integration/audit
T=$(mktemp -d /tmp/gpufed-audit-cli.XXXXXX)
cleanup() { bash "$HERE/rsyslog.sh" stop "$T/rsyslog" || true; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_rc() {  # expect_rc RC CMD...
  local want=$1; shift
  set +e; "$@" >"$T/out" 2>&1; local rc=$?; set -e
  [ "$rc" = "$want" ] || { cat "$T/out" >&2; fail "'$*' exited $rc, expected $want"; }
}

"$G" audit keygen -o "$T/keys" >/dev/null
expect_rc 1 "$G" audit keygen -o "$T/keys"  # never overwrites a key
"$G" audit record -c "$SRC/examples/quickstart" -d "$T/audit" -k "$T/keys/signing.key" --checkpoint-every 10 >/dev/null
"$G" audit record -c "$SRC/examples/quickstart" -d "$T/audit" -k "$T/keys/signing.key" --now 20m >/dev/null
expect_rc 0 "$G" audit verify "$T/audit" --key "$T/keys/signing.pub"
grep -q "^OK: .* checkpoint signatures valid" "$T/out" || { cat "$T/out"; fail "verify summary"; }
total=$(sed -n 's/^OK: \([0-9]*\) records.*/\1/p' "$T/out")
# Options before the folder, as the package's test and most users write it: each --key,
# --archive or --witness-vkey takes one value, so the folder is still the path.
expect_rc 0 "$G" audit verify --key "$T/keys/signing.pub" "$T/audit"
grep -q "^OK: $total records" "$T/out" || { cat "$T/out"; fail "verify --key KEY DIR"; }
expect_rc 0 "$G" audit verify --key "$T/keys/signing.pub" --key "$T/keys/signing.pub" "$T/audit"

# query and report
"$G" audit query -d "$T/audit" --tenant team-render --outcome placed -o jsonl >"$T/q"
[ "$(wc -l <"$T/q")" -gt 0 ] || fail "query found nothing"
! grep -v '"tenant":"team-render"' "$T/q" | grep -q . || fail "query returned another tenant"
"$G" audit query -d "$T/audit" --rule hardware >"$T/q"
grep -q blackwell-preview "$T/q" || fail "query --rule"
"$G" audit report -d "$T/audit" --from 2000-01-01 --to 2100-01-01 -f json >"$T/r.json"
python3 -c "import json,sys; r=json.load(open('$T/r.json')); assert r['outcomes']['placed']>0 and r['showback'] and r['sensitive'], r" ||
  fail "report json"
# Into files, not `| grep -q`: grep ends at the first match and, with pipefail, the report's
# later writes would fail the pipe.
"$G" audit report -d "$T/audit" --from 2000-01-01 --to 2100-01-01 -f csv >"$T/r.csv"
head -1 "$T/r.csv" | grep -q "^day,tenant,cluster" || fail "csv"
"$G" audit report -d "$T/audit" --from 2000-01-01 --to 2100-01-01 >"$T/r.md"
grep -q "## Showback" "$T/r.md" || fail "markdown"

# replay: the recorded revision gives the same outcome; a what-if repo changes the cost
seq=$("$G" audit query -d "$T/audit" --workload llama-ft-42 -o jsonl | head -1 | python3 -c "import json,sys; print(json.load(sys.stdin)['seq'])")
expect_rc 0 "$G" audit replay "$seq" -d "$T/audit"
grep -q "SAME" "$T/out" || fail "replay same"
cp -r "$SRC/examples/quickstart" "$T/whatif"
sed -i '0,/A100-80GB: "1.10"/s//A100-80GB: "9.99"/' "$T/whatif/clusters.yaml"
expect_rc 3 "$G" audit replay "$seq" -d "$T/audit" --policy "$T/whatif"
grep -q "cost" "$T/out" || { cat "$T/out"; fail "what-if diff does not name the cost"; }

# ship to a real rsyslog over mutual TLS; the receiver's copy verifies
bash "$HERE/make-pki.sh" "$T/rsyslog/pki"
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
bash "$HERE/rsyslog.sh" start "$T/rsyslog" "$port"
cp -r "$SRC/examples/quickstart" "$T/repo"
cat >"$T/repo/audit-sink.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: AuditSink
metadata:
  name: soc-syslog
spec:
  type: syslog-tls
  endpoint: 127.0.0.1:$port
  tls: {caFile: $T/rsyslog/pki/ca.crt, certFile: $T/rsyslog/pki/client.crt, keyFile: $T/rsyslog/pki/client.key, serverName: localhost}
YAML
expect_rc 0 "$G" audit ship -d "$T/audit" -c "$T/repo" --timeout 20s
for _ in $(seq 100); do
  [ "$(grep -c '{"seq":' "$T/rsyslog/received.log" 2>/dev/null || true)" -ge "$total" ] && break; sleep 0.05
done
expect_rc 0 "$G" audit verify "$T/rsyslog/received.log" --key "$T/keys/signing.pub"
grep -q "^OK: $total records" "$T/out" || { cat "$T/out"; fail "receiver copy"; }
# A second ship sends nothing new (durable cursor).
before=$(wc -l <"$T/rsyslog/received.log")
expect_rc 0 "$G" audit ship -d "$T/audit" -c "$T/repo" --timeout 5s
[ "$(wc -l <"$T/rsyslog/received.log")" = "$before" ] || fail "cursor did not hold"

# tampering: a changed byte, a deleted record, a reordered pair, a duplicated record
seg=$(ls "$T/audit/journal/"*.log)
cp "$seg" "$T/orig"
tamper() { cp "$T/orig" "$seg"; python3 - "$seg" "$1" <<'PY'
import sys
path, how = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines(True)
if how == "byte":
    lines[11] = lines[11].replace('"reason":"', '"reason":"X', 1)
elif how == "delete":
    del lines[20]
elif how == "reorder":
    lines[30], lines[31] = lines[31], lines[30]
elif how == "duplicate":
    lines.insert(41, lines[40])
open(path, "w").write("".join(lines))
PY
}
for how_seq in byte:12 delete:21 reorder:31 duplicate:41; do
  tamper "${how_seq%%:*}"
  expect_rc 1 "$G" audit verify "$T/audit"
  grep -q "FAILED at seq ${how_seq##*:} " "$T/out" || { cat "$T/out"; fail "$how_seq"; }
done
cp "$T/orig" "$seg"
# A receiver copy with an altered record fails too.
sed -i '15s/"outcome":"placed"/"outcome":"queued"/; 15s/"outcome":"queued"/"outcome":"rejected"/' "$T/rsyslog/received.log"
expect_rc 1 "$G" audit verify "$T/rsyslog/received.log"
echo "audit cli test: OK"

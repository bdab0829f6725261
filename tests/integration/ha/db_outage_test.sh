#!/usr/bin/env bash
# The database goes away for 30 s under two `gpufed run --store postgres://` replicas (a
# PostgreSQL of this test's own, shut down and started again: pg-cluster.sh pause/resume):
#   - the leader stops leading by its renew deadline, on its own clock: no replica leads;
#   - a submission meanwhile is answered 503 with a reason, never 201;
#   - when the database is back a replica leads again, every submission acknowledged
#     before the outage is there, and placing resumes (a new submission runs).
# Waits poll an observable state with a bound; the outage itself is the 30 s the issue
# names (wall time is what is being tested).
# Usage: db_outage_test.sh GPUFED PG_CLUSTER_SH
set -euo pipefail
G=$1
PG_CLUSTER=$2
T=$(mktemp -d /tmp/gpufed-ha-outage.XXXXXX)
declare -A rpid=() rport=()  # per replica
cleanup() {
  for r in "${!rpid[@]}"; do kill -KILL "${rpid[$r]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash "$PG_CLUSTER" stop "$T/pg.state" >/dev/null 2>&1 || true
  [ -n "${GPUFED_KEEP_TEST_DIR:-}" ] && { echo "kept $T"; return; }
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for r in a b; do [ -f "$T/run-$r.out" ] && { echo "--- replica $r" >&2; grep -v '^t=' "$T/run-$r.out" | tail -n 30 >&2; }; done
  exit 1
}

bash "$PG_CLUSTER" start "$T/pg.state" >/dev/null
pg_value() { sed -n "s/^$1=//p" "$T/pg.state" | head -n 1; }
if [ -n "$(pg_value missing)" ]; then
  echo "SKIP: no PostgreSQL 15 ($(pg_value missing))"
  [ -n "${CI:-}" ] && exit 1
  exit 0
fi
export PGPASSFILE=$(pg_value passfile)
psql -q "host=$(pg_value socket_dir) port=$(pg_value port) dbname=postgres user=gpufed" -c "CREATE DATABASE outage" >/dev/null
STORE="postgresql://gpufed@/outage?host=$(pg_value socket_dir)&port=$(pg_value port)"

mkdir -p "$T/repo"
cat >"$T/repo/fleet.yaml" <<'YAML'
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: turin}
spec:
  provider: onprem
  region: eu-south
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: l40s, count: 2, cpu: 32, memory: 256Gi, gpu: {model: L40S-48GB, count: 4, memory: 48Gi}}
  pricing: {currency: EUR, gpuHour: {L40S-48GB: "0.60"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: render}
spec:
  quota: {maxGpus: 8}
  budget: {period: monthly, limit: "900 EUR"}
YAML
git -C "$T/repo" init -q
git -C "$T/repo" add -A
git -C "$T/repo" -c user.email=t@t -c user.name=t commit -qm fleet
ADMIN=admin-0123456789abcdef0123
printf '%s admin ops\nrender-0123456789abcdef0123 render farm\n' "$ADMIN" >"$T/tokens"
chmod 600 "$T/tokens"
"$G" audit keygen --out "$T/key" >/dev/null

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for r in a b; do
  rport[$r]=$(free_port)
  setsid "$G" run --config "$T/repo" --state "$T/state-$r" --store "$STORE" --replica "$r" \
    --advertise "http://127.0.0.1:${rport[$r]}" --listen "127.0.0.1:${rport[$r]}" --tokens "$T/tokens" \
    --audit-key "$T/key/signing.key" --lease-duration 3s --renew-deadline 2s --lease-retry 500ms \
    >>"$T/run-$r.out" 2>&1 &
  rpid[$r]=$!
  disown "${rpid[$r]}" 2>/dev/null || true
done
field() {  # field REPLICA PATH KEY
  curl -s -m 2 -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:${rport[$1]}$2" |
    python3 -c "import json,sys
try: print(json.load(sys.stdin).get('$3',''))
except Exception: print('')"
}
leaders() { for r in a b; do [ "$(field "$r" /v1/status role)" = leader ] && echo "$r"; done; true; }
poll() {  # poll SECONDS COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -lt $deadline ] || return 1; sleep 0.2; done
}
one_leader() { [ "$(leaders | wc -l)" -eq 1 ]; }
no_leader() { [ "$(leaders | wc -l)" -eq 0 ]; }
workload() {
  printf 'apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: %s}\nspec:\n  tenant: render\n  resources: {gpus: 1}\n  run: {command: [sleep, "3600"]}\n' "$1"
}
submit() {  # submit REPLICA NAME: prints the HTTP status after redirects
  workload "$2" | curl -s -o "$T/$2.reply" -w '%{http_code}' --location-trusted -X POST \
    -H "Authorization: Bearer render-0123456789abcdef0123" -H 'Content-Type: application/yaml' \
    --data-binary @- "http://127.0.0.1:${rport[$1]}/v1/workloads"
}

poll 30 one_leader || fail "no replica leads"
for n in frame-1 frame-2; do [ "$(submit a "$n")" = 201 ] || fail "$n was not acknowledged: $(cat "$T/$n.reply")"; done

bash "$PG_CLUSTER" pause "$T/pg.state"
down_at=$SECONDS
poll 15 no_leader || fail "a replica still leads 15 s into the outage: $(leaders)"
echo "no replica leads $((SECONDS - down_at)) s into the outage"
code=$(submit b frame-during)
[ "$code" = 503 ] || fail "a submission during the outage got $code: $(cat "$T/frame-during.reply")"
grep -q '"message"' "$T/frame-during.reply" || fail "the 503 gives no reason"
# The rest of the 30 s outage.
while [ $((SECONDS - down_at)) -lt 30 ]; do sleep 1; done
bash "$PG_CLUSTER" resume "$T/pg.state"
up_at=$SECONDS
poll 30 one_leader || fail "no replica leads 30 s after the database came back"
leader=$(leaders)
echo "$leader leads $((SECONDS - up_at)) s after the database came back"
[ "$(submit "$leader" frame-3)" = 201 ] || fail "frame-3 was not acknowledged: $(cat "$T/frame-3.reply")"
running() {
  curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:${rport[$leader]}/v1/workloads" >"$T/list.json"
  python3 - "$T/list.json" <<'PY'
import json, sys
items = {i["name"]: i["state"] for i in json.load(open(sys.argv[1]))["items"]}
missing = [n for n in ("frame-1", "frame-2", "frame-3") if n not in items]
if missing:
    print("missing:", missing)
    sys.exit(2)
sys.exit(0 if items["frame-3"] == "Running" else 1)
PY
}
poll 30 running || fail "after the outage: $(cat "$T/list.json")"
echo "PASS"

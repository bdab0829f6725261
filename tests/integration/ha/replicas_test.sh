#!/usr/bin/env bash
# Three `gpufed run --store postgres://` replicas on one PostgreSQL database (the pg_cluster
# fixture's server, a database of this test's own), with short leases (3 s, renew deadline
# 2 s, retry 0.5 s) so that each takeover takes seconds:
#   1. exactly one replica leads; the others answer /readyz 503 and redirect writes (307);
#   2. submissions through standbys (gpufed submit follows the 307) are answered 201 by the
#      leader; a standby answers the workload reads itself from the database (200, marked
#      X-Gpufed-Served-By: standby) with what the leader answers, and a tenant's token reads
#      nothing of another tenant's through it; the dashboard's page and a data route from
#      the leader's published views load through a standby too;
#   3. kill -9 the leader: another replica leads within the lease plus a retry or two;
#   4. SIGSTOP the new leader past its lease: a third takes over; SIGCONT: the frozen one
#      says it lost the lead, writes nothing more (fenced) and is a standby again;
#   5. every workload acknowledged with 201 is in the last leader's store, none twice.
# Waits poll an observable state with a bound; no sleep stands in for an event.
# Usage: replicas_test.sh GPUFED PG_STATE_FILE
set -euo pipefail
G=$1
PG_STATE=$2
T=$(mktemp -d /tmp/gpufed-ha.XXXXXX)
declare -A rpid=() rport=()  # per replica
cleanup() {
  for r in "${!rpid[@]}"; do
    kill -CONT "${rpid[$r]}" 2>/dev/null || true
    kill -KILL "${rpid[$r]}" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  [ -n "${GPUFED_KEEP_TEST_DIR:-}" ] && { echo "kept $T"; return; }
  rm -rf "$T"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for r in a b c; do [ -f "$T/run-$r.out" ] && { echo "--- replica $r" >&2; tail -n 30 "$T/run-$r.out" >&2; }; done
  exit 1
}

# The fixture's KEY=VALUE lines, read by name (sourcing them would also set `pid`, the
# postmaster's, where this script keeps its replicas').
pg_value() { sed -n "s/^$1=//p" "$PG_STATE" | head -n 1; }
missing=$(pg_value missing)
socket_dir=$(pg_value socket_dir)
pg_port=$(pg_value port)
passfile=$(pg_value passfile)
if [ -n "${missing:-}" ]; then
  echo "SKIP: no PostgreSQL 15 ($missing)"
  [ -n "${CI:-}" ] && exit 1
  exit 0
fi
export PGPASSFILE=$passfile
db="ha_$(basename "$T" | tr -c 'a-zA-Z0-9\n' _ | tr 'A-Z' 'a-z')"
psql -q "host=$socket_dir port=$pg_port dbname=postgres user=gpufed" -c "CREATE DATABASE $db" >/dev/null
STORE="postgresql://gpufed@/$db?host=$socket_dir&port=$pg_port"

# shellcheck source=fleet_lib.sh
. "$(dirname "$0")/fleet_lib.sh"
ha_fleet "$T" 4
# A second tenant, to show that a standby scopes reads by tenant as the leader does.
OTHER=phys-0123456789abcdef0123
cat >>"$T/repo/fleet.yaml" <<'YAML'
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: physics}
spec:
  quota: {maxGpus: 8}
YAML
git -C "$T/repo" -c user.email=t@t -c user.name=t commit -qam physics
printf '%s physics phys-ci\n' "$OTHER" >>"$T/tokens"
start() {
  local r=$1
  [ -n "${rport[$r]:-}" ] || rport[$r]=$(free_port)
  setsid "$G" run --config "$T/repo" --state "$T/state-$r" --store "$STORE" --replica "$r" \
    --advertise "http://127.0.0.1:${rport[$r]}" --listen "127.0.0.1:${rport[$r]}" --tokens "$T/tokens" --audit-key "$T/key/signing.key" \
    --lease-duration 3s --renew-deadline 2s --lease-retry 500ms >>"$T/run-$r.out" 2>&1 &
  rpid[$r]=$!
  disown "${rpid[$r]}" 2>/dev/null || true  # ended by PID below; no "Killed" notices
}
status_of() { curl -s -m 2 -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:${rport[$1]}/v1/status" || true; }
role_of() { status_of "$1" | python3 -c 'import json,sys
try: print(json.load(sys.stdin).get("role",""))
except Exception: print("")'; }
# The one replica among the live ones ($@) that says it leads, polled for at most $WAIT s.
leader_among() {
  local deadline=$((SECONDS + ${WAIT:-30}))
  while [ $SECONDS -lt $deadline ]; do
    local leaders=()
    for r in "$@"; do [ "$(role_of "$r")" = leader ] && leaders+=("$r"); done
    [ ${#leaders[@]} -eq 1 ] && { echo "${leaders[0]}"; return 0; }
    [ ${#leaders[@]} -gt 1 ] && fail "two replicas say they lead: ${leaders[*]}"
    sleep 0.1
  done
  return 1
}
acked=()
submit_via() {  # submit_via REPLICA NAME: through that replica (a standby redirects)
  cat >"$T/$2.yaml" <<YAML
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: $2}
spec:
  tenant: genomics
  resources: {gpus: 1}
  run: {command: [sleep, "3600"]}
YAML
  if out=$(GPUFED_TOKEN=$TENANT "$G" submit --server "http://127.0.0.1:${rport[$1]}" "$T/$2.yaml" 2>&1); then
    acked+=("$2")
  else
    echo "submission $2 via $1 refused (allowed only while no leader is known): $out"
  fi
}

for r in a b c; do start "$r"; done
leader=$(leader_among a b c) || fail "no replica leads within 30 s"
echo "leader: $leader"
standbys=()
for r in a b c; do [ "$r" != "$leader" ] && standbys+=("$r"); done
# 1. A standby is not ready and redirects writes to the leader.
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${rport[${standbys[0]}]}/readyz")
[ "$code" = 503 ] || fail "a standby's /readyz answered $code, not 503"
location=$(curl -s -o /dev/null -w '%{redirect_url}' -X POST -H 'Content-Type: application/yaml' --data-binary 'x' \
  "http://127.0.0.1:${rport[${standbys[0]}]}/v1/workloads")
[ "$location" = "http://127.0.0.1:${rport[$leader]}/v1/workloads" ] || fail "a standby redirected to '$location'"
# The election's metrics on both roles (the leader's with every other family).
# Read whole before grep: with pipefail, `curl | grep -q` fails when grep leaves early (SIGPIPE).
metrics() { curl -s -m 2 -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:${rport[$1]}/metrics" || true; }
scraped=$(metrics "$leader")
grep -qx "gpufed_leader{replica=\"$leader\"} 1" <<<"$scraped" || fail "the leader's /metrics lacks gpufed_leader 1"
grep -q '^gpufed_audit_journal_healthy 1' <<<"$scraped" || fail "the leader's /metrics lacks the loop's families"
scraped=$(metrics "${standbys[0]}")
grep -qx "gpufed_leader{replica=\"${standbys[0]}\"} 0" <<<"$scraped" || fail "a standby's /metrics lacks gpufed_leader 0"
# 2. Submissions through every replica.
for i in 1 2 3; do for r in a b c; do submit_via "$r" "w$i-$r"; done; done
[ ${#acked[@]} -eq 9 ] || fail "only ${#acked[@]} of 9 submissions were acknowledged with a leader in place"
# Reads through a standby: answered there (no 307), from the database, as the leader
# answers them. The loop may move a workload between two reads, so both are read until
# they agree (the sim runs `sleep 3600`: the states settle), within a bound.
read_as() {  # read_as TOKEN REPLICA PATH: "CODE SERVED-BY" on the first line, then the body
  curl -s -m 5 -D "$T/headers" -o "$T/body" -w '%{http_code}' -H "Authorization: Bearer $1" \
    "http://127.0.0.1:${rport[$2]}$3" >"$T/code" || true
  printf '%s %s\n' "$(cat "$T/code")" "$(sed -n 's/^[Xx]-[Gg]pufed-[Ss]erved-[Bb]y: *\([a-z]*\).*/\1/p' "$T/headers" | tr -d '\r')"
  cat "$T/body"
}
same_reads() {  # same_reads TOKEN PATH: the standby's answer equals the leader's
  read_as "$1" "$leader" "$2" >"$T/via-leader"
  read_as "$1" "${standbys[0]}" "$2" >"$T/via-standby"
  python3 - "$T/via-leader" "$T/via-standby" <<'PY'
import json, sys
def load(path):
    head, _, body = open(path).read().partition("\n")
    return head.split(), json.loads(body)
(lcode, *_), leader = load(sys.argv[1])
(scode, *served), standby = load(sys.argv[2])
if lcode != "200" or scode != "200" or served != ["standby"]:
    sys.exit(f"leader {lcode}, standby {scode} served by {served}")
def view(x):  # what is the same in both however long apart they were read
    items = x["items"] if "items" in x else [x]
    return [{k: i.get(k) for k in ("name", "uid", "tenant", "state", "attempt", "cluster", "seq", "outcome")} for i in items]
sys.exit(0 if view(leader) == view(standby) else f"leader {view(leader)} != standby {view(standby)}")
PY
}
for path in /v1/tenants/genomics/workloads/w1-a /v1/workloads/w2-b /v1/workloads \
  /v1/tenants/genomics/workloads/w1-a/decisions "/v1/decisions?workload=w3-c"; do
  deadline=$((SECONDS + 20))
  until why=$(same_reads "$TENANT" "$path" 2>&1); do
    [ $SECONDS -lt $deadline ] || fail "a standby's GET $path is not the leader's: $why"
    sleep 0.2
  done
done
echo "a standby answers the workload reads from the database as the leader does"
# Another tenant's token reads nothing of genomics' through a standby: 404 by every path.
uid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uid"])' <(read_as "$TENANT" "$leader" /v1/workloads/w1-a | tail -n +2))
for path in /v1/tenants/genomics/workloads/w1-a /v1/workloads/w1-a /v1/tenants/genomics/workloads \
  /v1/tenants/genomics/workloads/w1-a/decisions "/v1/decisions?workload=w1-a"; do
  answer=$(read_as "$OTHER" "${standbys[0]}" "$path")
  [ "$(head -n 1 <<<"$answer")" = "404 standby" ] || fail "physics read $path through a standby: $(head -n 1 <<<"$answer")"
  ! grep -q "$uid" <<<"$answer" || fail "physics read genomics' $uid through a standby at $path"
done
answer=$(read_as "$OTHER" "${standbys[0]}" /v1/workloads)
[ "$(head -n 1 <<<"$answer")" = "200 standby" ] || fail "physics' own list through a standby: $(head -n 1 <<<"$answer")"
[ "$(tail -n +2 <<<"$answer" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" = 0 ] ||
  fail "physics' list through a standby holds another tenant's workloads"

# The dashboard through a standby: its page (no token, served there, not redirected) and a
# data route from the leader's published views, with their age and term, scoped as the
# leader scopes it.
code=$(curl -s -m 5 -o "$T/page" -w '%{http_code}' "http://127.0.0.1:${rport[${standbys[0]}]}/ui/" || true)
[ "$code" = 200 ] || fail "a standby's /ui/ answered $code"
grep -q '<html' "$T/page" || fail "a standby's /ui/ is not the dashboard's page"
deadline=$((SECONDS + 20))
until answer=$(read_as "$TENANT" "${standbys[0]}" /v1/tenants/genomics) && [ "$(head -n 1 <<<"$answer")" = "200 standby" ]; do
  [ $SECONDS -lt $deadline ] || fail "a standby's /v1/tenants/genomics: $(head -n 1 <<<"$answer")"
  sleep 0.2
done
[ "$(tail -n +2 <<<"$answer" | python3 -c 'import json,sys; print(json.load(sys.stdin)["name"])')" = genomics ] ||
  fail "a standby's /v1/tenants/genomics is not genomics' object"
headers=$(tr -d '\r' <"$T/headers")
grep -qi '^x-gpufed-view-age: [0-9][0-9.]*$' <<<"$headers" || fail "a standby's view answer says not how old it is"
grep -qi "^x-gpufed-view-term: [1-9][0-9]*$" <<<"$headers" || fail "a standby's view answer names no term"
answer=$(read_as "$OTHER" "${standbys[0]}" /v1/tenants/genomics)
[ "$(head -n 1 <<<"$answer")" = "404 standby" ] || fail "physics read genomics' tenant through a standby: $(head -n 1 <<<"$answer")"
answer=$(read_as "$OTHER" "${standbys[0]}" /v1/queue)
[ "$(head -n 1 <<<"$answer")" = "200 standby" ] || fail "physics' queue through a standby: $(head -n 1 <<<"$answer")"
! grep -q genomics <<<"$answer" || fail "physics' queue through a standby names genomics"
echo "a standby serves the dashboard's page and its data from the leader's published views"

# 3. kill -9 the leader.
kill -KILL "${rpid[$leader]}"
killed_at=$SECONDS
unset "rpid[$leader]"
old=$leader
live=("${standbys[@]}")
leader=$(WAIT=30 leader_among "${live[@]}") || fail "no replica took over within 30 s of kill -9"
echo "after kill -9 of $old: $leader leads after about $((SECONDS - killed_at)) s"
scraped=$(metrics "$leader")
grep -qx 'gpufed_leader_changes_total [1-9][0-9]*' <<<"$scraped" || fail "the new leader counted no change of leader"
for i in 4 5; do for r in "${live[@]}"; do submit_via "$r" "w$i-$r"; done; done

# 4. Freeze the leader past its lease; another takes over; thaw it.
frozen=$leader
kill -STOP "${rpid[$frozen]}"
other=""
for r in "${live[@]}"; do [ "$r" != "$frozen" ] && other=$r; done
leader=$(WAIT=30 leader_among "$other") || fail "$other did not take over from the frozen $frozen within 30 s"
echo "$frozen frozen: $leader leads"
submit_via "$leader" "w6-$leader"
kill -CONT "${rpid[$frozen]}"
deadline=$((SECONDS + 20))
until grep -q "lost the lead" "$T/run-$frozen.out"; do
  [ $SECONDS -lt $deadline ] || fail "the thawed $frozen never said it lost the lead"
  sleep 0.1
done
deadline=$((SECONDS + 20))
until [ "$(role_of "$frozen")" = standby ]; do
  [ $SECONDS -lt $deadline ] || fail "the thawed $frozen is not a standby again"
  sleep 0.1
done
[ "$(role_of "$leader")" = leader ] || fail "$leader stopped leading when $frozen was thawed"
submit_via "$frozen" "w7-$frozen"

# 5. Every acknowledged submission is in the store, once.
curl -s -H "Authorization: Bearer $ADMIN" "http://127.0.0.1:${rport[$leader]}/v1/workloads" >"$T/list.json"
python3 - "$T/list.json" "${acked[@]}" <<'PY' || fail "acknowledged submissions are missing"
import json, sys
items = json.load(open(sys.argv[1]))["items"]
names = [i["name"] for i in items]
acked = sys.argv[2:]
missing = [a for a in acked if a not in names]
twice = sorted({n for n in names if names.count(n) > 1})
print(f"{len(acked)} acknowledged, {len(names)} in the store, missing {missing}, twice {twice}")
sys.exit(1 if missing or twice else 0)
PY
# 6. One journal across every leader's term, in the database: it verifies end to end
# (the chain and every checkpoint, signed by the one key), each term began with
# controller-start, and each acknowledged submission was journalled exactly once.
"$G" audit verify --store "$STORE" --key "$T/key/signing.pub" >"$T/verify.out" 2>&1 ||
  fail "the journal in PostgreSQL does not verify: $(cat "$T/verify.out")"
"$G" audit query --store "$STORE" --kind workload-submitted -o jsonl >"$T/submitted.jsonl" 2>"$T/query.err" ||
  fail "audit query --store: $(cat "$T/query.err")"
"$G" audit query --store "$STORE" --kind controller-start -o jsonl >"$T/starts.jsonl" 2>"$T/query.err" ||
  fail "audit query --store: $(cat "$T/query.err")"
python3 - "$T/submitted.jsonl" "$T/starts.jsonl" "${acked[@]}" <<'PY' || fail "the journal does not hold each acknowledged submission once"
import json, sys
names = []
for line in open(sys.argv[1]):
    record = json.loads(line)
    payload = record.get("payload", record)
    names.append(payload.get("workload") or payload.get("name"))
starts = sum(1 for _ in open(sys.argv[2]))
acked = sys.argv[3:]
missing = [a for a in acked if a not in names]
twice = sorted({n for n in names if names.count(n) > 1})
print(f"journal: {len(names)} submissions, {starts} controller-start records (one per term), missing {missing}, twice {twice}")
sys.exit(1 if missing or twice or starts < 3 else 0)
PY
echo "PASS"

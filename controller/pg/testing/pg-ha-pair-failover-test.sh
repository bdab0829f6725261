#!/usr/bin/env bash
# The database's own failover, without gpufed (issue 38): a primary with a synchronous
# standby (pg-ha-pair.sh, the pg_ha_pair CTest fixture), a writer acknowledging one
# committed row after another through the multi-host URI, the primary killed with SIGKILL
# mid-stream, the standby promoted as Patroni would; then, through the same URI, every
# acknowledged row must be on the new primary and writes must succeed there.
#
#   pg-ha-pair-failover-test.sh [STATE]    STATE as pg-ha-pair.sh (GPUFED_TEST_PG_HA_STATE)
#
# It uses the pair up (the primary is dead after it); a later test that needs a pair runs
# `pg-ha-pair.sh start STATE` again, which replaces it. Exit 77 (skipped) when the fixture
# found no PostgreSQL 15.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pair=$here/pg-ha-pair.sh
state=${1:-${GPUFED_TEST_PG_HA_STATE:-/tmp/gpufed-pg-ha.state}}
PGBIN=${GPUFED_PGBIN:-/usr/lib/postgresql/15/bin}
export PGCONNECT_TIMEOUT=5
unset PGPASSWORD PGSERVICE PGHOST PGPORT PGDATABASE PGUSER

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
value() { sed -n "s/^$1=//p" "$state" | head -1 | sed "s/^'\(.*\)'\$/\1/"; }

[[ -f $state ]] || fail "no pair in $state: run pg-ha-pair.sh start $state first (ctest does, fixture pg_ha_pair)"
if missing=$(value missing) && [[ -n $missing ]]; then
  echo "SKIPPED: $missing"
  exit 77
fi
uri=$(value uri)
primary_port=$(value primary_port)
standby_port=$(value standby_port)
[[ -n $uri && $uri == *target_session_attrs=read-write* && $uri != *password=* ]] ||
  fail "the pair's URI is not a password-free read-write multi-host URI: $uri"
work=$(mktemp -d /tmp/gpufed-pgha-test.XXXXXX)
writer=""
cleanup() {
  [[ -n $writer ]] && kill "$writer" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$uri" -c "$1"; }

# 1. The URI reaches the primary, whose standby is synchronous.
[[ $(sql "SELECT inet_server_port() || ' ' || pg_is_in_recovery()") == "$primary_port false" ]] ||
  fail "the URI did not reach the primary on port $primary_port"
# (pg_stat_replication's sync_state is NULL for gpufed, who lacks pg_read_all_stats: ask
# as postgres on the primary's socket.)
[[ $("$PGBIN/psql" -X -At -h "$(value primary_socket_dir)" -p "$primary_port" -U postgres -d postgres \
  -c "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'") == sync ]] ||
  fail "standby1 is not synchronous: $("$pair" status "$state")"
[[ $(sql "SHOW synchronous_commit") == on ]] || fail "synchronous_commit is not on"
sql "CREATE TABLE acked (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp())"

# 2. One session commits row after row (autocommit) and prints `ack N` only after the
# server acknowledged row N's commit; stdbuf makes psql write each line at once.
rows=50000
for ((i = 1; i <= rows; i++)); do
  printf 'INSERT INTO acked (id) VALUES (%d);\n\\echo ack %d\n' "$i" "$i"
done >"$work/writer.sql"
stdbuf -oL "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$uri" -f "$work/writer.sql" >"$work/acks" 2>"$work/writer.err" &
writer=$!
for _ in $(seq 300); do
  (($(wc -l <"$work/acks") >= 300)) && break
  kill -0 "$writer" 2>/dev/null || break
  sleep 0.1
done
(($(wc -l <"$work/acks") >= 300)) || fail "the writer acknowledged fewer than 300 rows in 30 s: $(cat "$work/writer.err")"

# 3. The crash, mid-stream.
t_kill=$(date +%s%N)
"$pair" kill-primary "$state"
for _ in $(seq 300); do kill -0 "$writer" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$writer" 2>/dev/null; then fail "the writer still runs 30 s after the primary died"; fi
writer_status=0
wait "$writer" || writer_status=$?
writer=""
((writer_status != 0)) || fail "the writer finished all $rows rows before the primary was killed: nothing was in flight"
acked=$(sed -n 's/^ack //p' "$work/acks" | tail -1)
lines=$(wc -l <"$work/acks")
[[ $acked == "$lines" ]] || fail "the acknowledgements are not 1..N in order ($lines lines, last $acked)"
echo "the writer had $acked commits acknowledged when the primary died; it stopped with: $(head -c 200 "$work/writer.err" | tr '\n' ' ')"

# 4. Before the promotion no server takes writes: the URI must not connect (the standby is
# read-only and target_session_attrs=read-write skips it).
if out=$(sql "SELECT 1" 2>&1); then fail "the URI connected to a writable server with the primary dead: $out"; fi
[[ $out == *"read-only"* ]] || fail "the URI's refusal does not say the standby is read-only: $out"

# 5. Promote (Patroni's part) and follow through the same URI.
"$pair" promote-standby "$state"
t_promoted=$(date +%s%N)
[[ $(sql "SELECT inet_server_port() || ' ' || pg_is_in_recovery()") == "$standby_port false" ]] ||
  fail "after the promotion the URI did not reach the new primary on port $standby_port"
missing_rows=$(sql "SELECT count(*) FROM generate_series(1, $acked) AS g(id) WHERE NOT EXISTS (SELECT 1 FROM acked a WHERE a.id = g.id)")
[[ $missing_rows == 0 ]] || fail "$missing_rows of the $acked acknowledged rows are missing on the promoted standby"
total=$(sql "SELECT count(*) FROM acked")
(( total == acked || total == acked + 1 )) ||
  fail "the promoted standby has $total rows; expected $acked acknowledged (+1 committed whose acknowledgement was lost)"
echo "every acknowledged row is on the new primary ($total rows: $acked acknowledged$( ((total > acked)) && echo ", and the one in flight, committed but not acknowledged"))"

# 6. Writes succeed on the new primary, through the URI, on new connections.
sql "INSERT INTO acked (id) VALUES (-1)"
t_written=$(date +%s%N)
[[ $(sql "SELECT count(*) FROM acked WHERE id = -1") == 1 ]] || fail "a write on the new primary is not there"
# The sockets' URI follows too (the form a test on this host may give gpufed).
[[ $("$PGBIN/psql" -X -q -At "$(value socket_uri)" -c "SELECT current_setting('port') || ' ' || pg_is_in_recovery()") == "$standby_port false" ]] ||
  fail "the socket URI did not reach the new primary"
echo "kill to promoted: $(((t_promoted - t_kill) / 1000000)) ms; promoted to the first write through the URI: $(((t_written - t_promoted) / 1000000)) ms"
echo "PASS"

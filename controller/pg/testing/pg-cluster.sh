#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for the tests of controller/pg and controller/ha.
#
#   pg-cluster.sh start STATE   initdb + postgres in a fresh folder under /tmp, written to STATE
#   pg-cluster.sh stop STATE    stops the postmaster this script started (by its PID, after
#                               checking it is still that folder's postmaster) and removes
#                               the folder; `start` does the same first for a STATE left
#                               behind by a killed run
#   pg-cluster.sh pause STATE   a database outage: the server shuts down, its folder stays
#   pg-cluster.sh resume STATE  the same server starts again; STATE names its new postmaster
#
# The server runs as the `postgres` user (PostgreSQL refuses to run as root) and listens on
# a Unix socket in its folder and on 127.0.0.1 at a free port, with TLS: a server
# certificate for 127.0.0.1 and localhost from a throwaway CA (ca.crt), plus an unrelated
# CA (wrong-ca.crt) for the tests that must fail verification. The role `gpufed` (CREATEDB)
# has a random password that exists only in the passfile (mode 0600); `postgres` is trusted
# on the socket only (the harness's admin connection). STATE gets KEY=VALUE lines: dir,
# socket_dir, port, ca, wrong_ca, passfile, pid.
#
# The tests' cluster runs with fsync off (its data is thrown away). GPUFED_PG_DURABLE=1 gives
# a cluster whose commits wait for the disk (fsync on, full_page_writes on,
# synchronous_commit on), for the store benchmark on PostgreSQL (bench/bench_store_submit.cc):
# a commit's cost there is mostly that flush. GPUFED_PG_CONF adds lines to the server's
# configuration, for measuring (e.g. shared_preload_libraries = 'pg_stat_statements').
#
# Without postgresql-15 it writes `missing=REASON` to STATE and exits 0, so the tests skip
# with the reason; with CI set (CI=true, as scripts/test.sh runs) that is a failure (exit 1).
set -euo pipefail
PGBIN=${GPUFED_PGBIN:-/usr/lib/postgresql/15/bin}
action=${1:?usage: pg-cluster.sh start|stop|pause|resume STATE}
state=${2:?usage: pg-cluster.sh start|stop STATE}

value() { sed -n "s/^$1=//p" "$state" | head -1; }

# is_our_postmaster PID DIR: PID is alive and is the postmaster of DIR/data (a PID from an
# old state file may since belong to another process: that one is never signalled).
is_our_postmaster() {
  [[ -n $1 ]] && kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "-D $2/data"
}

stop() {
  [[ -f $state ]] || return 0
  local dir pid
  dir=$(value dir); pid=$(value pid)
  if is_our_postmaster "$pid" "$dir"; then
    kill -QUIT "$pid"  # immediate shutdown: the data is thrown away, no checkpoint is worth waiting for
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "pg-cluster: postmaster $pid did not stop within 30 s" >&2
      exit 1
    fi
  fi
  [[ -n $dir && $dir == /tmp/gpufed-pg.* ]] && rm -rf "$dir"
  rm -f "$state"
}

if [[ $action == stop ]]; then
  stop
  exit 0
fi

# pause: the server goes away (a fast shutdown: sessions are ended, new connections are
# refused), the folder stays. resume: the same server starts again on the same folder,
# port and socket, and STATE names its new postmaster. For tests of a database outage on
# a cluster of their own (never the shared fixture's).
if [[ $action == pause ]]; then
  dir=$(value dir); pid=$(value pid)
  is_our_postmaster "$pid" "$dir" || { echo "pg-cluster: no postmaster of $dir to pause" >&2; exit 1; }
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null
  exit 0
fi
if [[ $action == resume ]]; then
  dir=$(value dir)
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log/server.log" -w -t 30 start >/dev/null
  pid=$(head -1 "$dir/data/postmaster.pid")
  sed -i "s/^pid=.*/pid=$pid/" "$state"
  exit 0
fi

[[ $action == start ]] || { echo "pg-cluster: unknown action $action" >&2; exit 2; }
mkdir -p "$(dirname "$state")"
# A run killed before its cleanup left its cluster running: stop that one first.
stop
if [[ ! -x $PGBIN/initdb || ! -x $PGBIN/postgres ]] || ! id postgres >/dev/null 2>&1; then
  why="PostgreSQL 15 server binaries not found in $PGBIN (Debian's postgresql-15: GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
  if [[ -n ${CI:-} ]]; then
    echo "pg-cluster: FAILED: $why (CI is set: dependencies are required)" >&2
    exit 1
  fi
  echo "missing=$why" >"$state"
  echo "pg-cluster: SKIPPED: $why"
  exit 0
fi
[[ $(id -u) == 0 ]] || { echo "pg-cluster: needs root, to run the server as the postgres user" >&2; exit 1; }

t0=$(date +%s%N)
dir=$(mktemp -d /tmp/gpufed-pg.XXXXXX)
chmod 755 "$dir"
# A start that fails half-way leaves nothing behind (no server runs yet when it fails).
trap 'status=$?; if ((status)); then tail -20 "$dir"/*.log "$dir"/log/*.log >&2 2>/dev/null || true; rm -rf "$dir"; fi' EXIT
as_postgres() { runuser -u postgres -- "$@"; }

# TLS: a CA, a server certificate it issues for 127.0.0.1 and localhost, and an unrelated CA.
tls=$dir/tls
mkdir -p "$tls"
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=gpufed test CA" -keyout "$tls/ca.key" -out "$dir/ca.crt"
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=unrelated test CA" -keyout "$tls/wrong-ca.key" -out "$dir/wrong-ca.crt"
openssl_quiet req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' >"$tls/server.ext"
openssl_quiet x509 -req -in "$tls/server.csr" -CA "$dir/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
  -days 2 -extfile "$tls/server.ext" -out "$tls/server.crt"
rm -f "$tls/ca.key" "$tls/wrong-ca.key"
chown -R postgres "$tls"
chmod 600 "$tls/server.key"

if [[ ${GPUFED_PG_DURABLE:-0} == 1 ]]; then
  durability=$'fsync = on\nfull_page_writes = on\nsynchronous_commit = on'
else
  durability=$'fsync = off\nfull_page_writes = off'
fi

password=$(openssl rand -hex 24)
passfile=$dir/passfile
printf '*:*:*:gpufed:%s\n' "$password" >"$passfile"
chmod 600 "$passfile"

mkdir -p "$dir/sock" "$dir/data" "$dir/log"
chown postgres "$dir/sock" "$dir/data" "$dir/log"
chmod 700 "$dir/data"
as_postgres "$PGBIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync >"$dir/initdb.log" 2>&1
cat >"$dir/data/pg_hba.conf" <<HBA
local   all  postgres                 trust
local   all  gpufed                   scram-sha-256
hostssl all  gpufed    127.0.0.1/32   scram-sha-256
HBA

. "$(dirname "$0")/../../../tests/testutil/port.sh"
started=0
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 30000))
  port_listening "$port" && continue
  cat >"$dir/data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir/sock'
ssl = on
ssl_cert_file = '$tls/server.crt'
ssl_key_file = '$tls/server.key'
$durability
max_connections = 60
log_min_messages = warning
${GPUFED_PG_CONF:-}
CONF
  if as_postgres "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log/server.log" -w -t 30 start >/dev/null 2>&1; then
    started=1
    break
  fi
done
if ((!started)); then
  echo "pg-cluster: postgres did not start; see $dir/log/server.log:" >&2
  tail -20 "$dir/log/server.log" >&2 || true
  exit 1
fi
pid=$(head -1 "$dir/data/postmaster.pid")
# The server gets the password's SCRAM verifier, never the password (which a statement's
# text would keep in pg_stat_statements), through psql's standard input.
verifier=$(printf '%s' "$password" | python3 "$(dirname "$0")/scram_verifier.py")
printf "CREATE ROLE gpufed LOGIN CREATEDB PASSWORD '%s';\n" "$verifier" |
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock" -p "$port" -U postgres -d postgres >/dev/null
cat >"$state" <<STATE
dir=$dir
socket_dir=$dir/sock
port=$port
ca=$dir/ca.crt
wrong_ca=$dir/wrong-ca.crt
passfile=$passfile
pid=$pid
STATE
echo "pg-cluster: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') (pid $pid) on $dir/sock and 127.0.0.1:$port after $(( ($(date +%s%N) - t0) / 1000000 )) ms"

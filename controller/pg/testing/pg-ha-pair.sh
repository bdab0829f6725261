#!/usr/bin/env bash
# A throwaway PostgreSQL 15 primary with one synchronous standby, for the failover tests of
# issue 38 (deploy/ha/README.md describes the production set-up it stands in for).
#
#   pg-ha-pair.sh start [STATE]            initdb the primary, pg_basebackup the standby,
#                                          make the standby synchronous; writes STATE
#   pg-ha-pair.sh stop [STATE]             stops whichever of the two postmasters it started
#                                          still runs (by PID) and removes the folder
#   pg-ha-pair.sh kill-primary [STATE]     SIGKILL to the primary's postmaster and its
#                                          children at once (a crash: no shutdown, no
#                                          checkpoint), then waits until they are gone
#   pg-ha-pair.sh promote-standby [STATE]  pg_ctl promote on the standby (what Patroni does
#                                          after it lost the leader key), then waits until
#                                          it accepts writes
#   pg-ha-pair.sh status [STATE]           each node: PID, alive or not, primary or standby,
#                                          the primary's synchronous standbys
#   pg-ha-pair.sh uri [STATE [socket_uri]] the multi-host libpq URI gpufed is given (no
#                                          password: passfile=; target_session_attrs=read-write):
#                                          both nodes over TCP with TLS (verify-full), or with
#                                          socket_uri both nodes' Unix sockets
#
# STATE defaults to $GPUFED_TEST_PG_HA_STATE, else /tmp/gpufed-pg-ha.state. `start` stops a
# pair left behind in STATE by a killed run first, so it also gives a used pair back fresh.
#
# Both servers run as the `postgres` user in one fresh /tmp/gpufed-pgha.XXXXXX, each on a Unix
# socket of its own there and on 127.0.0.1 at a free port, with TLS: a throwaway CA (ca.crt)
# and one server certificate for 127.0.0.1 and localhost. The standby streams from the
# primary over TLS (verify-full) as the role `replicator` (SCRAM, its password only in a
# postgres-owned passfile); the primary's synchronous_standby_names is 'FIRST 1 (standby1)'
# with synchronous_commit=on, so a commit is acknowledged only once the standby has flushed
# its WAL. fsync stays on. Role `gpufed` (LOGIN CREATEDB, owner of database `gpufed`) has a
# random password that exists only in the passfile (mode 0600) the URI names (SCRAM over
# TLS or the sockets); `postgres` is trusted on the sockets only. STATE gets KEY=VALUE
# lines a shell can source: dir, ca, passfile, primary_port, primary_socket_dir,
# primary_pid, standby_port, standby_socket_dir, standby_pid, uri, socket_uri.
#
# After promote-standby the new primary has no standby (nothing rejoins the old one), so
# its commits do not wait: Patroni with synchronous_mode (not _strict) behaves the same.
#
# Without postgresql-15 `start` writes `missing=REASON` to STATE and exits 0, so the tests
# skip with the reason; with CI set that is a failure (exit 1), as in pg-cluster.sh.
set -euo pipefail
PGBIN=${GPUFED_PGBIN:-/usr/lib/postgresql/15/bin}
usage='usage: pg-ha-pair.sh start|stop|kill-primary|promote-standby|status|uri [STATE]'
action=${1:?$usage}
state=${2:-${GPUFED_TEST_PG_HA_STATE:-/tmp/gpufed-pg-ha.state}}
export PGCONNECT_TIMEOUT=5

die() {
  echo "pg-ha-pair: $*" >&2
  exit 1
}
# value KEY: KEY's value in STATE, without the single quotes that keep it shell-safe.
value() { sed -n "s/^$1=//p" "$state" 2>/dev/null | head -1 | sed "s/^'\(.*\)'\$/\1/"; }
need_state() {
  [[ -f $state ]] || die "no pair recorded in $state (run: pg-ha-pair.sh start $state)"
  local missing
  missing=$(value missing)
  [[ -z $missing ]] || die "no pair: $missing"
}

# alive PID: the process exists and is not a zombie (PID 1 here reaps orphans only every
# few seconds, and kill -0 succeeds on a zombie).
alive() {
  [[ -n $1 && -r /proc/$1/stat ]] || return 1
  local st
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}

# is_our_postmaster PID DATA: PID is alive and is the postmaster of DATA (a PID from an old
# state file may since belong to another process: that one is never signalled).
is_our_postmaster() {
  alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "-D $2 "
}

# wait_gone PID...: up to 30 s for every PID to be gone; false if one is left.
wait_gone() {
  local p left
  for _ in $(seq 300); do
    left=0
    for p in "$@"; do alive "$p" && left=1; done
    ((left)) || return 0
    sleep 0.1
  done
  return 1
}

# children_of PID: the PIDs whose parent is PID.
children_of() {
  local f line fields
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue # gone meanwhile
    read -r -a fields <<<"${line##*) }"                 # state ppid ...
    [[ ${fields[1]} == "$1" ]] && echo "${f//[^0-9]/}"
  done
  return 0
}

# admin_sql NODE SQL: runs SQL as postgres on NODE's socket, unaligned output.
admin_sql() {
  "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$(value "$1_socket_dir")" -p "$(value "$1_port")" \
    -U postgres -d postgres -c "$2"
}

stop_node() {
  local node=$1 dir pid
  dir=$(value dir); pid=$(value "${node}_pid")
  if [[ -n $dir ]] && is_our_postmaster "$pid" "$dir/$node"; then
    kill -QUIT "$pid" # immediate shutdown: the data is thrown away
    wait_gone "$pid" || die "postmaster $pid ($node) did not stop within 30 s"
  fi
}

stop() {
  [[ -f $state ]] || return 0
  local dir
  dir=$(value dir)
  stop_node standby
  stop_node primary
  [[ -n $dir && $dir == /tmp/gpufed-pgha.* ]] && rm -rf "$dir"
  rm -f "$state"
}

case $action in
  stop)
    stop
    exit 0
    ;;
  uri)
    need_state
    value "${3:-uri}"
    exit 0
    ;;
  status)
    need_state
    for node in primary standby; do
      pid=$(value "${node}_pid")
      if ! is_our_postmaster "$pid" "$(value dir)/$node"; then
        echo "$node: pid $pid not running, port $(value "${node}_port")"
        continue
      fi
      role=$(admin_sql "$node" "SELECT CASE WHEN pg_is_in_recovery() THEN 'standby' ELSE 'primary' END" 2>/dev/null ||
        echo "not answering")
      line="$node: pid $pid running, port $(value "${node}_port"), $role"
      if [[ $role == primary ]]; then
        sync=$(admin_sql "$node" "SELECT string_agg(application_name || ' ' || sync_state, ', ') FROM pg_stat_replication")
        line+=", standbys: ${sync:-none}"
      fi
      echo "$line"
    done
    exit 0
    ;;
  kill-primary)
    need_state
    pid=$(value primary_pid)
    is_our_postmaster "$pid" "$(value dir)/primary" || die "the primary (pid $pid) is not running"
    # The postmaster and its children (backends, walsenders, checkpointer...) all at once,
    # as a crashed host would lose them; children left alone would notice the postmaster's
    # death and exit by themselves, later.
    # (/proc, not pgrep: procps may be missing on a minimal Debian.)
    mapfile -t children < <(children_of "$pid")
    kill -KILL "$pid" "${children[@]}" 2>/dev/null || true
    wait_gone "$pid" "${children[@]}" || die "the primary's processes did not go away within 30 s"
    echo "pg-ha-pair: killed the primary (postmaster $pid and ${#children[@]} children) with SIGKILL"
    exit 0
    ;;
  promote-standby)
    need_state
    pid=$(value standby_pid)
    is_our_postmaster "$pid" "$(value dir)/standby" || die "the standby (pid $pid) is not running"
    t0=$(date +%s%N)
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$(value dir)/standby" -w -t 30 promote >/dev/null
    for _ in $(seq 300); do
      [[ $(admin_sql standby "SELECT pg_is_in_recovery()" 2>/dev/null) == f ]] && break
      sleep 0.1
    done
    [[ $(admin_sql standby "SELECT pg_is_in_recovery()") == f ]] || die "the standby did not leave recovery within 30 s"
    echo "pg-ha-pair: promoted the standby (port $(value standby_port)) after $((($(date +%s%N) - t0) / 1000000)) ms"
    exit 0
    ;;
  start) ;;
  *) die "unknown action $action; $usage" ;;
esac

mkdir -p "$(dirname "$state")"
stop # a pair left behind by a killed run, or the used pair of an earlier test
if [[ ! -x $PGBIN/initdb || ! -x $PGBIN/postgres || ! -x $PGBIN/pg_basebackup ]] || ! id postgres >/dev/null 2>&1; then
  why="PostgreSQL 15 server binaries not found in $PGBIN (Debian's postgresql-15: GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
  if [[ -n ${CI:-} ]]; then
    echo "pg-ha-pair: FAILED: $why (CI is set: dependencies are required)" >&2
    exit 1
  fi
  echo "missing=$why" >"$state"
  echo "pg-ha-pair: SKIPPED: $why"
  exit 0
fi
[[ $(id -u) == 0 ]] || die "needs root, to run the servers as the postgres user"

t0=$(date +%s%N)
dir=$(mktemp -d /tmp/gpufed-pgha.XXXXXX)
chmod 755 "$dir"
echo "dir=$dir" >"$state"
# A start that fails half-way stops whatever of it already runs (PIDs are in STATE as soon
# as they exist) and removes the folder.
trap 'status=$?; if ((status)); then tail -20 "$dir"/log/*.log >&2 2>/dev/null || true; stop || true; fi' EXIT
as_postgres() { runuser -u postgres -- "$@"; }

# TLS: a CA and one server certificate it issues for 127.0.0.1 and localhost (both nodes).
tls=$dir/tls
mkdir -p "$tls"
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -subj "/CN=gpufed HA test CA" -keyout "$tls/ca.key" -out "$dir/ca.crt"
openssl_quiet req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -subj "/CN=localhost" -keyout "$tls/server.key" -out "$tls/server.csr"
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' >"$tls/server.ext"
openssl_quiet x509 -req -in "$tls/server.csr" -CA "$dir/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial \
  -days 2 -extfile "$tls/server.ext" -out "$tls/server.crt"
rm -f "$tls/ca.key"
chown -R postgres "$tls"
chmod 600 "$tls/server.key"

# Passwords only in passfiles: gpufed's (root's, for the tests and gpufed) and the
# replication role's (postgres's, for pg_basebackup and the standby's walreceiver).
password=$(openssl rand -hex 24)
repl_password=$(openssl rand -hex 24)
passfile=$dir/passfile
printf '*:*:*:gpufed:%s\n' "$password" >"$passfile"
chmod 600 "$passfile"
repl_passfile=$dir/replication.passfile
printf '*:*:*:replicator:%s\n' "$repl_password" >"$repl_passfile"
chown postgres "$repl_passfile"
chmod 600 "$repl_passfile"

mkdir -p "$dir/primary" "$dir/standby" "$dir/sock-primary" "$dir/sock-standby" "$dir/log"
chown postgres "$dir/primary" "$dir/standby" "$dir/sock-primary" "$dir/sock-standby" "$dir/log"
chmod 700 "$dir/primary" "$dir/standby"
as_postgres "$PGBIN/initdb" -D "$dir/primary" -U postgres -A trust --no-sync --wal-segsize=1 >"$dir/log/initdb.log" 2>&1
# pg_basebackup copies this file, so the standby (and the primary it becomes) has the same.
cat >"$dir/primary/pg_hba.conf" <<HBA
local   all          postgres                   trust
local   all          gpufed                     scram-sha-256
hostssl all          gpufed      127.0.0.1/32   scram-sha-256
hostssl replication  replicator  127.0.0.1/32   scram-sha-256
HBA

. "$(dirname "$0")/../../../tests/testutil/port.sh"
# free_port [EXCEPT]: a random port nothing listens on (the start may still race another
# process for it: the callers retry).
free_port() {
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 30000))
    [[ $p != "${1:-}" ]] && ! port_listening "$p" && { echo "$p"; return 0; }
  done
  return 1
}

# The primary. synchronous_standby_names stays empty until the standby streams: with it
# set, the CREATE ROLE below would wait for a standby that does not exist yet.
started=0
for _ in 1 2 3 4 5; do
  primary_port=$(free_port)
  cat >"$dir/primary/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $primary_port
unix_socket_directories = '$dir/sock-primary'
ssl = on
ssl_cert_file = '$tls/server.crt'
ssl_key_file = '$tls/server.key'
wal_level = replica
max_wal_senders = 5
synchronous_commit = on
hot_standby = on
max_connections = 40
log_min_messages = warning
CONF
  if as_postgres "$PGBIN/pg_ctl" -D "$dir/primary" -l "$dir/log/primary.log" -w -t 30 start >/dev/null 2>&1; then
    started=1
    break
  fi
done
((started)) || die "the primary did not start; see $dir/log/primary.log"
primary_pid=$(head -1 "$dir/primary/postmaster.pid")
cat >>"$state" <<STATE
ca=$dir/ca.crt
passfile=$passfile
primary_port=$primary_port
primary_socket_dir=$dir/sock-primary
primary_pid=$primary_pid
STATE
# The server gets each password's SCRAM verifier, never the password (which a statement's
# text would keep in pg_stat_statements), through psql's standard input.
verifier=$(printf '%s' "$password" | python3 "$(dirname "$0")/scram_verifier.py")
repl_verifier=$(printf '%s' "$repl_password" | python3 "$(dirname "$0")/scram_verifier.py")
printf "CREATE ROLE gpufed LOGIN CREATEDB PASSWORD '%s';
CREATE ROLE replicator LOGIN REPLICATION PASSWORD '%s';
CREATE DATABASE gpufed OWNER gpufed;\n" "$verifier" "$repl_verifier" |
  "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/sock-primary" -p "$primary_port" -U postgres -d postgres >/dev/null

# The standby: a base backup over TLS as replicator, then its own port, socket and
# primary_conninfo (the later lines of postgresql.auto.conf win over the copied ones).
# Starting from a base backup counts as a crash recovery, which fsyncs every file first:
# one syncfs() instead (the standby then starts in about 0.2 s here, not 4.6 s).
repl_conninfo="host=127.0.0.1 port=$primary_port user=replicator passfile=$repl_passfile sslmode=verify-full sslrootcert=$dir/ca.crt application_name=standby1"
as_postgres "$PGBIN/pg_basebackup" -d "$repl_conninfo" -D "$dir/standby" -R -X stream --checkpoint=fast --no-sync \
  >"$dir/log/basebackup.log" 2>&1
started=0
for _ in 1 2 3 4 5; do
  standby_port=$(free_port "$primary_port")
  cp "$dir/primary/postgresql.auto.conf" "$dir/standby/postgresql.auto.conf"
  cat >>"$dir/standby/postgresql.auto.conf" <<CONF
port = $standby_port
unix_socket_directories = '$dir/sock-standby'
recovery_init_sync_method = syncfs
primary_conninfo = '$repl_conninfo'
CONF
  if as_postgres "$PGBIN/pg_ctl" -D "$dir/standby" -l "$dir/log/standby.log" -w -t 30 start >/dev/null 2>&1; then
    started=1
    break
  fi
done
((started)) || die "the standby did not start; see $dir/log/standby.log"
standby_pid=$(head -1 "$dir/standby/postmaster.pid")
cat >>"$state" <<STATE
standby_port=$standby_port
standby_socket_dir=$dir/sock-standby
standby_pid=$standby_pid
STATE

# Now the primary waits for standby1's flush at every commit.
admin_sql primary "ALTER SYSTEM SET synchronous_standby_names = 'FIRST 1 (standby1)'" >/dev/null
admin_sql primary "SELECT pg_reload_conf()" >/dev/null
sync=""
for _ in $(seq 200); do
  sync=$(admin_sql primary "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1'")
  [[ $sync == sync ]] && break
  sleep 0.1
done
[[ $sync == sync ]] || die "standby1 did not become synchronous within 20 s (sync_state '${sync}')"

uri="postgresql://gpufed@127.0.0.1:$primary_port,127.0.0.1:$standby_port/gpufed?sslmode=verify-full&sslrootcert=$dir/ca.crt&passfile=$passfile&target_session_attrs=read-write"
socket_uri="postgresql://gpufed@/gpufed?host=$dir/sock-primary,$dir/sock-standby&port=$primary_port,$standby_port&passfile=$passfile&target_session_attrs=read-write"
# Quoted: STATE can be sourced by a shell (as tests/integration/ha does with pg-cluster's).
printf "uri='%s'\nsocket_uri='%s'\n" "$uri" "$socket_uri" >>"$state"
trap - EXIT
echo "pg-ha-pair: PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') primary (pid $primary_pid) on 127.0.0.1:$primary_port, synchronous standby (pid $standby_pid) on 127.0.0.1:$standby_port after $((($(date +%s%N) - t0) / 1000000)) ms"

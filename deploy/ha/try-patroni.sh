#!/usr/bin/env bash
# A throwaway Patroni cluster on this host, to check deploy/ha/README.md's claims about the
# database's own failures with Debian 12's packages: one etcd, two Patroni nodes managing
# PostgreSQL 15 with synchronous_mode, TLS everywhere PostgreSQL listens on TCP. Not a
# production set-up (everything on 127.0.0.1, one etcd, the rig's own CA), and not run by
# CTest (CI installs neither patroni nor etcd); run it by hand, as root:
#
#   deploy/ha/try-patroni.sh start [STATE]        etcd, node1 (bootstraps), node2 (clones);
#                                                 waits for a leader and a sync standby
#   deploy/ha/try-patroni.sh failover [STATE]     a writer commits row after row through the
#                                                 multi-host URI; the leader's host "crashes"
#                                                 (SIGKILL to its Patroni and PostgreSQL);
#                                                 measures when the URI takes writes again and
#                                                 checks every acknowledged row is there
#   deploy/ha/try-patroni.sh standby-loss [STATE] the synchronous standby's host "crashes"
#                                                 under a writer; measures how long commits
#                                                 stall before Patroni drops it from
#                                                 synchronous_standby_names
#   deploy/ha/try-patroni.sh etcd-loss [STATE]    SIGSTOPs etcd; measures when the primary
#                                                 stops taking writes; SIGCONT
#   deploy/ha/try-patroni.sh list [STATE]         patronictl list
#   deploy/ha/try-patroni.sh uri [STATE]          the URI gpufed would be given
#   deploy/ha/try-patroni.sh stop [STATE]         ends every process it started, by PID
#
# STATE defaults to /tmp/gpufed-patroni.state. Needs: apt-get install patroni etcd-server
# postgresql-15 (Debian 12: Patroni 3.0.2, etcd 3.4.23). The timings are Patroni's
# defaults (ttl 30, loop_wait 10, retry_timeout 10), as the README's example uses.
set -euo pipefail
PGBIN=/usr/lib/postgresql/15/bin
action=${1:?usage: try-patroni.sh start|failover|standby-loss|etcd-loss|list|uri|stop [STATE]}
state=${2:-/tmp/gpufed-patroni.state}
here=$(cd "$(dirname "$0")" && pwd)
export PGCONNECT_TIMEOUT=3
unset PGPASSWORD

die() {
  echo "try-patroni: $*" >&2
  exit 1
}
value() { sed -n "s/^$1=//p" "$state" 2>/dev/null | head -1; }
alive() {
  [[ -n $1 && -r /proc/$1/stat ]] || return 1
  local st
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}
# ours PID WORD: PID is alive and its command line names WORD (our folder), so a PID
# recorded long ago and reused by another process is never signalled.
ours() { alive "$1" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"; }
wait_gone() {
  local p left
  for _ in $(seq "${WAIT_STEPS:-300}"); do
    left=0
    for p in "$@"; do alive "$p" && left=1; done
    ((left)) || return 0
    sleep 0.1
  done
  return 1
}
children_of() {
  local f line fields
  for f in /proc/[0-9]*/stat; do
    { read -r line <"$f"; } 2>/dev/null || continue
    read -r -a fields <<<"${line##*) }"
    [[ ${fields[1]} == "$1" ]] && echo "${f//[^0-9]/}"
  done
  return 0
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
ctl() { patronictl -c "$(value dir)/node1/patroni.yml" "$@"; }
# role NODE: primary, replica or down, from Patroni's REST API (200 on /primary only for
# the running leader).
role() {
  local port
  port=$(value "$1_api")
  if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$port/primary" 2>/dev/null; then
    echo primary
  elif curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$port/replica" 2>/dev/null; then
    echo replica
  else
    echo down
  fi
}
postmaster_of() { head -1 "$(value dir)/$1/data/postmaster.pid" 2>/dev/null || true; }

stop() {
  [[ -f $state ]] || return 0
  local dir pid pm
  dir=$(value dir)
  [[ -n $dir ]] || { rm -f "$state"; return 0; }
  for node in node1 node2; do
    pid=$(value "${node}_patroni_pid")
    pm=$(postmaster_of "$node")
    if ours "$pid" "$dir/$node/"; then kill -TERM "$pid"; fi # Patroni stops its PostgreSQL
    WAIT_STEPS=300 wait_gone "$pid" || { kill -KILL "$pid" 2>/dev/null || true; }
    if [[ -n $pm ]] && ours "$pm" "$dir/$node/data"; then
      kill -QUIT "$pm"
      wait_gone "$pm" || true
    fi
  done
  pid=$(value etcd_pid)
  if ours "$pid" "$dir/etcd"; then
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid"
    wait_gone "$pid" || true
  fi
  [[ $dir == /tmp/gpufed-patroni.* ]] && rm -rf "$dir"
  rm -f "$state"
}

case $action in
  stop)
    stop
    exit 0
    ;;
  uri)
    value uri
    exit 0
    ;;
  list)
    ctl list
    exit 0
    ;;
  start) ;;
  failover | standby-loss | etcd-loss) [[ -f $state ]] || die "nothing started ($state)" ;;
  *) die "unknown action $action" ;;
esac

if [[ $action == start ]]; then
  if ! command -v patroni >/dev/null || ! command -v etcd >/dev/null || [[ ! -x $PGBIN/postgres ]]; then die "needs Debian's patroni, etcd-server and postgresql-15 (apt-get install patroni etcd-server postgresql-15)"; fi
  [[ $(id -u) == 0 ]] || die "run as root (the nodes run as postgres)"
  stop
  # shellcheck disable=SC1091
  . "$here/../../tests/testutil/port.sh"
  used=" "
  pick() {
    local p
    for _ in $(seq 50); do
      p=$((20000 + RANDOM % 30000))
      [[ $used != *" $p "* ]] && ! port_listening "$p" && { used+="$p "; echo "$p"; return 0; }
    done
    return 1
  }
  dir=$(mktemp -d /tmp/gpufed-patroni.XXXXXX)
  chmod 755 "$dir"
  echo "dir=$dir" >"$state"
  trap 'status=$?; if ((status)); then tail -n 60 "$dir"/*.log "$dir"/node*/patroni.log "$dir"/node*/data/log/*.log >&2 2>/dev/null || true; stop || true; fi' EXIT
  etcd_client=$(pick) etcd_peer=$(pick)
  node1_pg=$(pick) node2_pg=$(pick)
  node1_api=$(pick) node2_api=$(pick) # read through ${!api} below
  export node1_api node2_api

  # TLS for PostgreSQL: one CA, one server certificate for 127.0.0.1 (both nodes).
  mkdir -p "$dir/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=rig CA" \
    -keyout "$dir/tls/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=localhost" \
    -keyout "$dir/tls/server.key" -out "$dir/tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$dir/tls/ext"
  openssl x509 -req -in "$dir/tls/server.csr" -CA "$dir/ca.crt" -CAkey "$dir/tls/ca.key" -CAcreateserial -days 2 \
    -extfile "$dir/tls/ext" -out "$dir/tls/server.crt" 2>/dev/null
  rm -f "$dir/tls/ca.key"
  chown -R postgres "$dir/tls"
  chmod 600 "$dir/tls/server.key"

  gpufed_password=$(openssl rand -hex 24)
  repl_password=$(openssl rand -hex 24)
  printf '*:*:*:gpufed:%s\n' "$gpufed_password" >"$dir/passfile"
  chmod 600 "$dir/passfile"

  # etcd (v3 API; Patroni's etcd3 client talks to its JSON gateway).
  mkdir -p "$dir/etcd"
  setsid etcd --name rig --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_client" --advertise-client-urls "http://127.0.0.1:$etcd_client" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "rig=http://127.0.0.1:$etcd_peer" --log-level warn >"$dir/etcd.log" 2>&1 </dev/null &
  echo "etcd_pid=$!" >>"$state"
  for _ in $(seq 100); do
    curl -fsS -m 1 "http://127.0.0.1:$etcd_client/health" 2>/dev/null | grep -q true && break
    sleep 0.1
  done
  curl -fsS -m 1 "http://127.0.0.1:$etcd_client/health" | grep -q true || die "etcd did not become healthy in 10 s"

  for node in node1 node2; do
    pg=${node}_pg api=${node}_api
    mkdir -p "$dir/$node/sock"
    # The example's settings (deploy/ha/patroni/patroni.yml), with this rig's paths,
    # ports and initdb bootstrap instead of Debian's pg_createcluster wrapper.
    cat >"$dir/$node/patroni.yml" <<YAML
scope: gpufed-db
namespace: /gpufed-rig/
name: $node
restapi:
  listen: 127.0.0.1:${!api}
  connect_address: 127.0.0.1:${!api}
etcd3:
  hosts: 127.0.0.1:$etcd_client
bootstrap:
  dcs:
    ttl: 30
    loop_wait: 10
    retry_timeout: 10
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    synchronous_node_count: 1
    check_timeline: true
    postgresql:
      use_pg_rewind: false
      use_slots: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        wal_log_hints: "on"
        password_encryption: scram-sha-256
        wal_sender_timeout: 10s
        ssl: "on"
        ssl_cert_file: $dir/tls/server.crt
        ssl_key_file: $dir/tls/server.key
  initdb:
    - encoding: UTF8
    - data-checksums
postgresql:
  listen: 127.0.0.1:${!pg}
  connect_address: 127.0.0.1:${!pg}
  data_dir: $dir/$node/data
  bin_dir: $PGBIN
  pgpass: $dir/$node/pgpass
  use_unix_socket: true
  authentication:
    superuser: # no password: Patroni reaches it over the socket (pg_hba: trust for postgres there)
      username: postgres
    replication:
      username: replicator
      password: "$repl_password"
      sslmode: verify-full
      sslrootcert: $dir/ca.crt
  parameters:
    unix_socket_directories: $dir/$node/sock
  pg_hba:
    - local   all          postgres                    trust
    - hostssl all          gpufed       127.0.0.1/32   scram-sha-256
    - hostssl replication  replicator   127.0.0.1/32   scram-sha-256
watchdog:
  mode: "off"
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
YAML
    chown -R postgres "$dir/$node"
    chmod 700 "$dir/$node"
    chmod 600 "$dir/$node/patroni.yml"
    # (No --validate-config here: it refuses 127.0.0.1 as a connect_address, which is
    # right for production and all this rig has. The examples themselves pass it.)
    setsid runuser -u postgres -- patroni "$dir/$node/patroni.yml" >"$dir/$node/patroni.log" 2>&1 </dev/null &
    # runuser's child is Patroni; record Patroni's own PID.
    launcher=$!
    pid=""
    for _ in $(seq 50); do
      pid=$(children_of "$launcher" | head -1)
      [[ -n $pid ]] && break
      sleep 0.1
    done
    [[ -n $pid ]] || die "no Patroni process for $node"
    printf '%s_patroni_pid=%s\n%s_pg=%s\n%s_api=%s\n' "$node" "$pid" "$node" "${!pg}" "$node" "${!api}" >>"$state"
    if [[ $node == node1 ]]; then
      for _ in $(seq 600); do [[ $(role node1) == primary ]] && break; sleep 0.1; done
      [[ $(role node1) == primary ]] || die "node1 did not bootstrap as the leader within 60 s"
      printf "CREATE ROLE gpufed LOGIN PASSWORD '%s';\nCREATE DATABASE gpufed OWNER gpufed;\n" "$gpufed_password" |
        "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir/node1/sock" -p "$node1_pg" -U postgres -d postgres >/dev/null
    fi
  done
  echo "etcd_client=$etcd_client" >>"$state"
  uri="postgresql://gpufed@127.0.0.1:$node1_pg,127.0.0.1:$node2_pg/gpufed?sslmode=verify-full&sslrootcert=$dir/ca.crt&passfile=$dir/passfile&target_session_attrs=read-write"
  echo "uri=$uri" >>"$state"
  # node2 clones and streams; node1's Patroni then names it the synchronous standby.
  sync=""
  for _ in $(seq 900); do
    sync=$("$PGBIN/psql" -X -At -h "$dir/node1/sock" -p "$node1_pg" -U postgres -d postgres \
      -c "SELECT application_name || ' ' || sync_state FROM pg_stat_replication" 2>/dev/null || true)
    [[ $sync == "node2 sync" ]] && break
    sleep 0.1
  done
  [[ $sync == "node2 sync" ]] || die "node2 did not become the synchronous standby within 90 s (saw '$sync')"
  # ... and then records it in etcd's /sync key (only a node named there may be promoted).
  for _ in $(seq 60); do
    curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$node2_api/sync" 2>/dev/null && break
    sleep 1
  done
  curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$node2_api/sync" || die "node2 is not in the /sync key after 60 s"
  trap - EXIT
  ctl list
  echo "try-patroni: ready; URI: $uri"
  exit 0
fi

dir=$(value dir)
uri=$(value uri)
leader=""
for node in node1 node2; do [[ $(role "$node") == primary ]] && leader=$node; done
[[ -n $leader ]] || die "no node is the primary now: $(ctl list 2>&1)"
other=node2
[[ $leader == node2 ]] && other=node1
sql() { "$PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$uri" -c "$1"; }

if [[ $action == etcd-loss ]]; then
  etcd=$(value etcd_pid)
  ours "$etcd" "$dir/etcd" || die "etcd (pid $etcd) is not running"
  t0=$(now_ms)
  kill -STOP "$etcd"
  echo "try-patroni: etcd stopped (SIGSTOP); writing through the URI every 0.5 s"
  last_ok=$t0
  refused=""
  for _ in $(seq 240); do
    if sql "CREATE TABLE IF NOT EXISTS etcd_probe (at timestamptz); INSERT INTO etcd_probe VALUES (now())" \
      >/dev/null 2>"$dir/probe.err"; then
      last_ok=$(now_ms)
    else
      refused=$(now_ms)
      break
    fi
    sleep 0.5
  done
  kill -CONT "$etcd"
  [[ -n $refused ]] || die "writes still succeeded 120 s after etcd stopped"
  echo "last write accepted $((last_ok - t0)) ms after etcd stopped; first refused at $((refused - t0)) ms: $(head -c 200 "$dir/probe.err" | tr '\n' ' ')"
  t1=$(now_ms)
  for _ in $(seq 1200); do
    sql "INSERT INTO etcd_probe VALUES (now())" >/dev/null 2>&1 && break
    sleep 0.5
  done
  echo "etcd back (SIGCONT): writes accepted again $(($(now_ms) - t1)) ms later"
  ctl list
  exit 0
fi

# A writer: one session commits row after row through the URI and prints `ack N` once
# row N's commit is acknowledged.
work=$dir/$action
rm -rf "$work"
mkdir -p "$work"
sql "DROP TABLE IF EXISTS acked; CREATE TABLE acked (id bigint PRIMARY KEY)"
for ((i = 1; i <= 200000; i++)); do
  printf 'INSERT INTO acked (id) VALUES (%d);\n\\echo ack %d\n' "$i" "$i"
done >"$work/writer.sql"
stdbuf -oL "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$uri" -f "$work/writer.sql" >"$work/acks" 2>"$work/writer.err" &
writer=$!
for _ in $(seq 300); do (($(wc -l <"$work/acks") >= 300)) && break; sleep 0.1; done
(($(wc -l <"$work/acks") >= 300)) || die "the writer acknowledged fewer than 300 rows in 30 s"

# crash NODE: SIGKILL to its Patroni, postmaster and the postmaster's children at once.
crash() {
  local patroni_pid pm
  patroni_pid=$(value "$1_patroni_pid")
  pm=$(postmaster_of "$1")
  if ! ours "$patroni_pid" "$dir/$1/" || ! ours "$pm" "$dir/$1/data"; then die "$1's processes are not ours"; fi
  mapfile -t pg_children < <(children_of "$pm")
  kill -KILL "$patroni_pid" "$pm" "${pg_children[@]}" 2>/dev/null || true # a child may have just exited
  wait_gone "$patroni_pid" "$pm" "${pg_children[@]}" || die "$1's processes did not go away"
  echo "try-patroni: $1 crashed (SIGKILL to Patroni $patroni_pid, postmaster $pm and ${#pg_children[@]} children)"
}

if [[ $action == standby-loss ]]; then
  t0=$(now_ms)
  crash "$other"
  # Sample the acknowledgements every 0.1 s for 40 s: the longest time without one is
  # how long commits waited for the lost standby.
  last=$(wc -l <"$work/acks") last_at=$t0 longest=0 longest_end=0
  for _ in $(seq 400); do
    sleep 0.1
    n=$(wc -l <"$work/acks") t=$(now_ms)
    if ((n > last)); then
      if ((t - last_at > longest)); then longest=$((t - last_at)) longest_end=$((t - t0)); fi
      last=$n last_at=$t
    fi
    kill -0 "$writer" 2>/dev/null || break
  done
  kill -0 "$writer" 2>/dev/null || die "the writer failed: $(cat "$work/writer.err")"
  kill "$writer"
  wait "$writer" 2>/dev/null || true
  echo "commits stalled for at most $longest ms, resuming $longest_end ms after the standby crashed; $last acknowledged in all"
  echo "synchronous_standby_names on $leader now: '$("$PGBIN/psql" -X -At -h "$dir/$leader/sock" -p "$(value "${leader}_pg")" -U postgres -d postgres -c "SHOW synchronous_standby_names")'"
  ctl list
  exit 0
fi

# failover: the leader's host crashes under the writer.
t0=$(now_ms)
crash "$leader"
wait "$writer" || true
acked=$(sed -n 's/^ack //p' "$work/acks" | tail -1)
promoted=""
for _ in $(seq 1200); do
  if sql "INSERT INTO acked (id) VALUES (-1)" >/dev/null 2>&1; then promoted=$(now_ms); break; fi
  sleep 0.1
done
[[ -n $promoted ]] || die "no writable server through the URI 120 s after the crash: $(ctl list 2>&1)"
echo "the URI took writes again $((promoted - t0)) ms after the crash, on $(sql "SELECT inet_server_port()") ($other's port is $(value "${other}_pg"))"
missing=$(sql "SELECT count(*) FROM generate_series(1, $acked) g(id) WHERE NOT EXISTS (SELECT 1 FROM acked a WHERE a.id = g.id)")
total=$(sql "SELECT count(*) FROM acked WHERE id > 0")
echo "acknowledged before the crash: $acked; missing after the failover: $missing; rows there: $total"
ctl list
[[ $missing == 0 ]] || die "$missing acknowledged rows are missing"
echo "try-patroni: failover PASS (the crashed node stays down: Patroni is not restarted; stop cleans up)"

#!/usr/bin/env bash
# Starts a hermetic single-node Slurm 22.05 (Debian 12) on loopback for gpufed's tests and
# examples, as root and without systemd: munged (reused when one already answers),
# slurmctld, slurmd (node gpunode1, fake GPUs as GRES gpu:a100:2 and gpu:a100_1g.5gb:4) and
# slurmrestd with JWT auth. Adapted from ../shared/recipes/start-slurm.sh.
#
# Idempotent: when the cluster recorded in $BASE is already up it only refreshes the token;
# a half-dead one is stopped (recorded PIDs only) and started again.
#
# Settings (environment):
#   GPUFED_SLURM_STATE  state folder (default /tmp/gpufed-slurm); everything lives there
#   REST_PORT CTLD_PORT SLURMD_PORT   default 6820 6817 6818 (the recipe's ports)
#   CLUSTER_NAME        default gpufed
#   INSTALL=0           never call apt-get (fail when packages are missing)
# Afterwards: source $GPUFED_SLURM_STATE/env.sh (SLURM_CONF, SLURM_JWT, SLURMREST).
# Stop with tests/slurm/stop-slurm.sh; stop/start only slurmctld with tests/slurm/slurmctld.sh.
set -euo pipefail
# Daemons started with SLURM_JWT in their environment authenticate with auth/jwt instead of
# munge and slurmctld dies: never inherit it.
unset SLURM_JWT SLURMREST
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../testutil/port.sh
. "$HERE/../testutil/port.sh"
T0=$(date +%s.%N)
BASE=${GPUFED_SLURM_STATE:-/tmp/gpufed-slurm}
export GPUFED_SLURM_STATE=$BASE
REST_PORT=${REST_PORT:-6820}
CTLD_PORT=${CTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-6818}
CLUSTER_NAME=${CLUSTER_NAME:-gpufed}
NODE=gpunode1
# Nothing may depend on resolving the machine's hostname (a fresh system's /etc/hosts
# need not list it): the config names the controller and the node "localhost" with
# address 127.0.0.1, and the daemons run with the hostname "localhost" in their own UTS
# namespace (slurmctld resolves its own hostname to bind its port to one address).
HOST=localhost
PIDS="$BASE/pids"
export SLURM_CONF="$BASE/etc/slurm.conf"

die() { echo "start-slurm: $*" >&2; for f in slurmctld.log slurmd-$NODE.log slurmrestd.log munged.out; do
          [ -f "$BASE/log/$f" ] && { echo "--- $BASE/log/$f" >&2; tail -5 "$BASE/log/$f" >&2; }; done; exit 1; }
pid_of() { awk -v n="$1" '$1==n{print $2}' "$PIDS" 2>/dev/null | tail -1; }
alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
write_token() {
  local token
  token=$(scontrol token username=root lifespan="${TOKEN_LIFESPAN:-86400}" | sed 's/^SLURM_JWT=//') || return 1
  [ -n "$token" ] || return 1
  umask 077
  cat > "$BASE/env.sh.tmp" <<ENV
export SLURM_CONF=$SLURM_CONF
export SLURM_JWT=$token
export SLURMREST=http://127.0.0.1:$REST_PORT
ENV
  printf '%s' "$token" > "$BASE/token.tmp"
  mv "$BASE/env.sh.tmp" "$BASE/env.sh"; mv "$BASE/token.tmp" "$BASE/token"
}
rest_up() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$REST_PORT/slurm/v0.0.38/ping" 2>/dev/null | grep -q 401; }

# ---------- packages ----------
PKGS="munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin curl"
missing=""; for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  [ "${INSTALL:-1}" = 1 ] || die "missing packages:$missing (run GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || die "apt-get install$missing failed"
fi
[ "$(id -u)" = 0 ] || die "must run as root (slurmd and munge need it)"

# ---------- already running? ----------
if [ -f "$PIDS" ]; then
  if alive slurmctld && alive slurmd && alive slurmrestd && rest_up && scontrol ping 2>/dev/null | grep -q UP; then
    write_token || die "scontrol token failed"
    echo "start-slurm: already running in $BASE"; exit 0
  fi
  echo "start-slurm: stale cluster in $BASE, stopping it first" >&2
  "$HERE/stop-slurm.sh" >/dev/null 2>&1 || true
fi
for port in $REST_PORT $CTLD_PORT $SLURMD_PORT; do
  port_listening "$port" && die "port $port already in use (another Slurm? set REST_PORT/CTLD_PORT/SLURMD_PORT)"
done

rm -rf "$BASE"; mkdir -p "$BASE"/{etc,state,spool/$NODE,log,dev,run,jobs}
chmod 755 "$BASE" "$BASE/etc"; chmod 1777 "$BASE/jobs"
: > "$PIDS"
record() { echo "$1 $2" >> "$PIDS"; }

# Fake GPUs: slurmd wants character devices; clones of /dev/null. The trailing digit is
# the index Slurm reports in CUDA_VISIBLE_DEVICES.
for i in 0 1; do mknod "$BASE/dev/fake-a100-$i" c 1 3; done
for i in 0 1 2 3; do mknod "$BASE/dev/fake-mig-$i" c 1 3; done

# ---------- munge (shared per host: reuse a working one, never stop it) ----------
if ! (munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1); then
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
  rm -f /run/munge/munged.pid /run/munge/munge.socket.2.lock 2>/dev/null || true
  setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F >"$BASE/log/munged.out" 2>&1 &
  record munged $!
  for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munged does not answer"
fi

dd if=/dev/urandom bs=32 count=1 of="$BASE/state/jwt_hs256.key" 2>/dev/null
chmod 600 "$BASE/state/jwt_hs256.key"

# Real CPU topology avoids "Node reconfigured socket/core boundaries" drains.
HWTOPO=$(slurmd -C | head -1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
cat > "$SLURM_CONF" <<CONF
ClusterName=$CLUSTER_NAME
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$BASE/state/jwt_hs256.key
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$BASE/log/jobcomp.txt
MinJobAge=300
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$NODE NodeHostname=$HOST NodeAddr=127.0.0.1 $HWTOPO RealMemory=2000 Gres=gpu:a100:2,gpu:a100_1g.5gb:4 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$BASE/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=$NODE Name=gpu Type=a100        File=$BASE/dev/fake-a100-[0-1]
NodeName=$NODE Name=gpu Type=a100_1g.5gb File=$BASE/dev/fake-mig-[0-3]
CONF
chmod 644 "$SLURM_CONF" "$BASE/etc/gres.conf"

"$HERE/slurmctld.sh" start --cold || die "slurmctld did not start"

"$HERE/as-localhost.sh" slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$BASE/log/slurmd.out" 2>&1 &
record slurmd $!
for _ in $(seq 150); do
  st=$(sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
  alive slurmd || die "slurmd died"
  [ "$st" = idle ] && break; sleep 0.2
done
scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
[ "$(sinfo -h -n "$NODE" -o %T 2>/dev/null)" = idle ] || die "node $NODE not idle: $(sinfo -h -n "$NODE" -o '%T %E' 2>&1)"

# slurmrestd must not run as root; without slurmdbd only the slurm v0.0.38 plugin loads.
id slurmrest >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin slurmrest
setpriv --reuid=slurmrest --regid=slurmrest --init-groups \
  env SLURM_CONF="$SLURM_CONF" SLURM_JWT=daemon /usr/sbin/slurmrestd -a rest_auth/jwt -s openapi/v0.0.38 -f "$SLURM_CONF" \
  127.0.0.1:$REST_PORT >"$BASE/log/slurmrestd.log" 2>&1 &
record slurmrestd $!
for _ in $(seq 100); do rest_up && break; alive slurmrestd || break; sleep 0.1; done
alive slurmrestd && rest_up || die "slurmrestd did not come up on 127.0.0.1:$REST_PORT"

write_token || die "scontrol token failed"
T1=$(date +%s.%N)
echo "start-slurm: up in $(awk "BEGIN{printf \"%.1f\", $T1 - $T0}") s in $BASE (REST 127.0.0.1:$REST_PORT)"
echo "source $BASE/env.sh"

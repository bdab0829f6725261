#!/usr/bin/env bash
# Starts a hermetic single-node Slurm on loopback for gpufed's tests and examples, as root
# and without systemd: munged, slurmctld, slurmd (node gpunode1, fake GPUs as GRES
# gpu:a100:2 and gpu:a100_1g.5gb:4, partition gpu) and slurmrestd with JWT auth on
# 127.0.0.1. Two releases, side by side if wanted (own ports, state, munged):
#
#   --release 22.05  (default) Debian 12's Slurm on the host: REST v0.0.36-v0.0.38
#   --release 24.11  Debian 13's Slurm 24.11 in the cached trixie chroot built by
#                    slurm24-rootfs.sh (first time ~1 min, then reused): REST v0.0.40-v0.0.42
#   --prepare        only install the packages / build the chroot, start nothing
#
# Adapted from ../shared/recipes/start-slurm.sh and start-slurm24.sh. Unlike them it never
# uses the machine's host name: the controller is "localhost(127.0.0.1)", the node's
# address 127.0.0.1, and every daemon binds its configured address (NoInAddrAny), so a
# chroot whose /etc/hosts lacks the host name works too.
#
# Idempotent: when the cluster recorded in the state folder is up it only refreshes the
# token; a half-dead one is stopped (recorded PIDs only) and started again.
#
# Settings (environment):
#   GPUFED_SLURM_STATE  state folder (default /tmp/gpufed-slurm, 24.11: /tmp/gpufed-slurm24)
#   REST_PORT CTLD_PORT SLURMD_PORT   default 6820 6817 6818 (24.11: 6830 6837 6838)
#   CLUSTER_NAME        default gpufed (24.11: gpufed24)
#   INSTALL=0           never call apt-get or debootstrap (fail when something is missing)
#   SLURM24_ROOT        the 24.11 chroot (default /var/cache/gpufed-slurm24/rootfs)
# Afterwards: source $GPUFED_SLURM_STATE/env.sh (SLURM_CONF, SLURM_JWT, SLURMREST,
# SLURM_RELEASE; $GPUFED_SLURM_STATE/bin/slurm runs this release's client commands, e.g.
# `slurm squeue`). Stop with tests/slurm/stop-slurm.sh; stop/start only slurmctld with
# tests/slurm/slurmctld.sh.
set -euo pipefail
unset SLURM_JWT SLURMREST
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../testutil/port.sh
. "$HERE/../testutil/port.sh"
# shellcheck source=slurm-lib.sh
. "$HERE/slurm-lib.sh"
T0=$(date +%s.%N)

RELEASE=22.05 PREPARE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE=${2:-}; shift 2 ;;
    --release=*) RELEASE=${1#--release=}; shift ;;
    --prepare) PREPARE=1; shift ;;
    *) echo "usage: $0 [--release 22.05|24.11] [--prepare]" >&2; exit 2 ;;
  esac
done
slurm_settings || exit 2
export GPUFED_SLURM_STATE=$BASE
NODE=gpunode1
case $RELEASE in
  22.05) REST_VERSION=v0.0.38 REST_PLUGINS=openapi/v0.0.38 ;;   # without slurmdbd only this plugin loads
  24.11) REST_VERSION=v0.0.42 REST_PLUGINS=openapi/slurmctld ;; # data parsers v0.0.40-v0.0.42
esac

die() { echo "start-slurm ($RELEASE): $*" >&2
        for f in slurmctld.log slurmd-$NODE.log slurmctld.out slurmd.out slurmrestd.out munged.out; do
          [ -f "$BASE/log/$f" ] && { echo "--- $BASE/log/$f" >&2; tail -5 "$BASE/log/$f" >&2; }; done; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (slurmd, munge and the 24.11 chroot need it)"
if [ "$SLURM_UTS" != ns ]; then
  [ "$RELEASE" = 22.05 ] || die "needs namespaces (unshare -u -m): run as root on a VM or in a privileged container"
  getent hosts "$SLURM_HOST" >/dev/null ||
    die "this machine allows no UTS namespace, and its name '$SLURM_HOST' does not resolve: add it to /etc/hosts"
  echo "start-slurm ($RELEASE): no UTS namespaces here; using the machine's name $SLURM_HOST" >&2
fi

write_token() {
  local token
  token=$(in_slurm scontrol token username=root lifespan="${TOKEN_LIFESPAN:-86400}" | sed 's/^SLURM_JWT=//') || return 1
  [ -n "$token" ] || return 1
  umask 077
  cat > "$BASE/env.sh.tmp" <<ENV
export SLURM_CONF=$SLURM_CONF
export SLURM_JWT=$token
export SLURMREST=http://127.0.0.1:$REST_PORT
export SLURM_RELEASE=$RELEASE
case ":\$PATH:" in *":$BASE/bin:"*) ;; *) export PATH="$BASE/bin:\$PATH" ;; esac
ENV
  printf '%s' "$token" > "$BASE/token.tmp"
  mv "$BASE/env.sh.tmp" "$BASE/env.sh"; mv "$BASE/token.tmp" "$BASE/token"
  chmod 644 "$BASE/env.sh"   # the token is a test token; tests read it as any user
}
# slurmrestd answers: without a token every version answers 401 (24.11 too, even on /ping)
rest_up() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$REST_PORT/slurm/$REST_VERSION/ping" 2>/dev/null | grep -q 401; }
ctld_up() { in_slurm scontrol ping 2>/dev/null | grep -q UP; }

# ---------- packages ----------
case $RELEASE in
  22.05)
    PKGS="munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin curl"
    missing=""; for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [ -n "$missing" ]; then
      [ "${INSTALL:-1}" = 1 ] || die "missing packages:$missing (run GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null || die "apt-get install$missing failed"
    fi ;;
  24.11)
    for p in debootstrap curl; do
      dpkg -s "$p" >/dev/null 2>&1 && continue
      [ "${INSTALL:-1}" = 1 ] || die "missing package $p (run GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null || die "apt-get install $p failed"
    done
    if [ "${INSTALL:-1}" = 1 ]; then SLURM24_ROOT=$ROOT "$HERE/slurm24-rootfs.sh" || die "no Slurm 24.11 chroot"
    else [ -x "$ROOT/usr/sbin/slurmctld" ] || die "no Slurm 24.11 chroot in $ROOT (INSTALL=0)"; fi ;;
esac
[ "$PREPARE" = 1 ] && { echo "start-slurm ($RELEASE): prepared"; exit 0; }

# ---------- already running? ----------
if [ -f "$PIDS" ]; then
  if daemon_alive slurmctld && daemon_alive slurmd && daemon_alive slurmrestd && rest_up && ctld_up; then
    write_token || die "scontrol token failed"
    echo "start-slurm ($RELEASE): already running in $BASE"; exit 0
  fi
  echo "start-slurm ($RELEASE): stale cluster in $BASE, stopping it first" >&2
  GPUFED_SLURM_STATE=$BASE "$HERE/stop-slurm.sh" >/dev/null 2>&1 || true
fi
for port in $REST_PORT $CTLD_PORT $SLURMD_PORT; do
  port_listening "$port" && die "port $port already in use (another Slurm? set REST_PORT/CTLD_PORT/SLURMD_PORT)"
done

rm -rf "$BASE"; mkdir -p "$BASE"/{etc,state,spool/$NODE,log,dev,run,jobs,bin}
chmod 755 "$BASE" "$BASE/etc"; chmod 1777 "$BASE/jobs"
echo "$RELEASE" > "$BASE/release"
: > "$PIDS"
# From here on a failed start stops what it started (recorded PIDs); logs stay in $BASE/log.
on_exit() { local rc=$?; [ $rc = 0 ] || GPUFED_SLURM_STATE=$BASE "$HERE/stop-slurm.sh" >&2 || true; }
trap on_exit EXIT

# Fake GPUs: slurmd wants character devices; clones of /dev/null. The trailing digit is
# the index Slurm reports in CUDA_VISIBLE_DEVICES.
for i in 0 1; do mknod "$BASE/dev/fake-a100-$i" c 1 3; done
for i in 0 1 2 3; do mknod "$BASE/dev/fake-mig-$i" c 1 3; done

# ---------- munge ----------
AUTHINFO=""
if [ "$RELEASE" = 22.05 ]; then
  # The host's munged is shared: reuse a working one, never stop it.
  if ! (munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1); then
    [ -s /etc/munge/munge.key ] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
    chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
    install -d -o munge -g munge -m 0755 /run/munge
    install -d -o munge -g munge -m 0700 /var/lib/munge /var/log/munge
    rm -f /run/munge/munged.pid /run/munge/munge.socket.2.lock 2>/dev/null || true
    start_daemon munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F
    for _ in $(seq 50); do munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    munge -n </dev/null | unmunge >/dev/null 2>&1 || die "munged does not answer"
  fi
else
  # Its own munged, key and socket in the state folder: several 24.11 instances (and the
  # recipe's) can share the chroot.
  MSOCK="$BASE/munge/munge.socket.2"
  AUTHINFO="AuthInfo=socket=$MSOCK"
  mkdir -p "$BASE/munge"
  dd if=/dev/urandom bs=1 count=1024 of="$BASE/munge/munge.key" 2>/dev/null
  in_slurm sh -c 'chown -R munge:munge "$1" && chmod 755 "$1" && chmod 400 "$1/munge.key"' sh "$BASE/munge" ||
    die "cannot prepare $BASE/munge for the chroot's munge user"
  start_daemon munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
    --key-file="$BASE/munge/munge.key" --socket="$MSOCK" --pid-file="$BASE/munge/munged.pid" \
    --seed-file="$BASE/munge/munged.seed" --log-file="$BASE/munge/munged.log"
  for _ in $(seq 50); do in_slurm sh -c 'munge -S "$1" -n </dev/null | unmunge -S "$1"' sh "$MSOCK" >/dev/null 2>&1 && break; sleep 0.1; done
  in_slurm sh -c 'munge -S "$1" -n </dev/null | unmunge -S "$1"' sh "$MSOCK" >/dev/null 2>&1 || die "munged does not answer"
fi

dd if=/dev/urandom bs=32 count=1 of="$BASE/state/jwt_hs256.key" 2>/dev/null
chmod 600 "$BASE/state/jwt_hs256.key"

# ---------- slurm.conf ----------
# Real CPU topology avoids "Node reconfigured socket/core boundaries" drains.
HWTOPO=$(in_slurm slurmd -C | head -1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')
[ -n "$HWTOPO" ] || die "slurmd -C printed no CPU topology"
cat > "$SLURM_CONF" <<CONF
ClusterName=$CLUSTER_NAME
# "localhost" (the host name every daemon sees in its UTS namespace) resolves on any machine;
# the machine's own name may not (a fresh chroot's /etc/hosts need not list it)
SlurmctldHost=$SLURM_HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
# bind to the configured addresses (127.0.0.1), never INADDR_ANY
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
$AUTHINFO
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
# a minimal chroot has no /usr/bin/mail (24.11 complains about the default MailProg)
MailProg=/bin/true
MinJobAge=300
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$NODE NodeHostname=$SLURM_HOST NodeAddr=127.0.0.1 $HWTOPO RealMemory=2000 Gres=gpu:a100:2,gpu:a100_1g.5gb:4 State=UNKNOWN
PartitionName=gpu Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
CONF
cat > "$BASE/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=$NODE Name=gpu Type=a100        File=$BASE/dev/fake-a100-[0-1]
NodeName=$NODE Name=gpu Type=a100_1g.5gb File=$BASE/dev/fake-mig-[0-3]
CONF
# 24.11's slurmd initialises a cgroup plugin even with proctrack/linuxproc and task/none,
# and dies without a mounted cgroup file system unless it is switched off.
[ "$RELEASE" = 24.11 ] && echo "CgroupPlugin=disabled" > "$BASE/etc/cgroup.conf"
chmod 644 "$BASE"/etc/*.conf

# ---------- slurmctld, slurmd ----------
GPUFED_SLURM_STATE=$BASE "$HERE/slurmctld.sh" start --cold || die "slurmctld did not start"
start_daemon slurmd slurmd -D -N "$NODE" -f "$SLURM_CONF"
for _ in $(seq 150); do
  st=$(in_slurm sinfo -h -n "$NODE" -o %T 2>/dev/null || true)
  daemon_alive slurmd || die "slurmd died"
  [ "$st" = idle ] && break; sleep 0.2
done
in_slurm scontrol update NodeName="$NODE" State=RESUME >/dev/null 2>&1 || true
[ "$(in_slurm sinfo -h -n "$NODE" -o %T 2>/dev/null)" = idle ] || die "node $NODE not idle: $(in_slurm sinfo -h -n "$NODE" -o '%T %E' 2>&1)"

# ---------- slurmrestd ----------
# Must not run as root, and needs SLURM_JWT=daemon (the literal word) in ITS environment.
in_slurm sh -c 'id slurmrest >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin slurmrest'
in_slurm setpriv --reuid=slurmrest --regid=slurmrest --init-groups test -r "$SLURM_CONF" ||
  die "slurmrestd runs as user slurmrest, which cannot read $SLURM_CONF: put GPUFED_SLURM_STATE where every user may traverse (e.g. under /tmp, not /root)"
start_daemon slurmrestd SLURM_JWT=daemon setpriv --reuid=slurmrest --regid=slurmrest --init-groups \
  slurmrestd -a rest_auth/jwt -s "$REST_PLUGINS" -f "$SLURM_CONF" "127.0.0.1:$REST_PORT"
for _ in $(seq 100); do rest_up && break; daemon_alive slurmrestd || break; sleep 0.1; done
daemon_alive slurmrestd && rest_up || die "slurmrestd did not come up on 127.0.0.1:$REST_PORT"

# ---------- client wrapper, token ----------
cat > "$BASE/bin/slurm" <<WRAP
#!/usr/bin/env bash
# Runs a client command of this test Slurm ($RELEASE), e.g.: slurm squeue; slurm scontrol show jobs
RELEASE=$RELEASE GPUFED_SLURM_STATE=$BASE
. "$HERE/slurm-lib.sh"; slurm_settings; IN_SLURM_EXEC=1 in_slurm "\$@"
WRAP
chmod 755 "$BASE/bin/slurm"
write_token || die "scontrol token failed"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $(cat "$BASE/token")" \
       "http://127.0.0.1:$REST_PORT/slurm/$REST_VERSION/nodes")
[ "$code" = 200 ] || die "GET /slurm/$REST_VERSION/nodes with the new token answered HTTP $code"
echo "start-slurm ($RELEASE): up in $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $T0}") s in $BASE (REST 127.0.0.1:$REST_PORT)"
echo "source $BASE/env.sh"

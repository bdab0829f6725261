# shellcheck shell=bash
# Sourced by start-slurm.sh, stop-slurm.sh and slurmctld.sh: where a test Slurm lives and
# how its commands run, for both releases.
#
#   22.05  Debian 12's own packages on the host.
#   24.11  Debian 13's packages in the cached trixie chroot (slurm24-rootfs.sh). Every
#          daemon and client command runs in the chroot inside its own private mount
#          namespace (unshare -m) that mounts /proc, a read-only /sys and the host's data
#          folders (/tmp, /home, /srv, ..., the state folder: see shared_dirs) at the same
#          paths. Nothing is mounted on the host, so nothing has to be unmounted, and
#          several instances can share one chroot.
# Both: every command sees the host name "localhost" (see in_slurm).
#
# Callers set RELEASE (22.05 or 24.11) or leave it to the state folder's `release` file,
# then call slurm_settings. GPUFED_SLURM_STATE, REST_PORT, CTLD_PORT, SLURMD_PORT and
# CLUSTER_NAME override the defaults of the release.

# slurm_settings: BASE, ports, cluster name, ROOT and PIDS for $RELEASE.
slurm_settings() {
  case "$RELEASE" in
    22.05)
      BASE=${GPUFED_SLURM_STATE:-/tmp/gpufed-slurm}
      REST_PORT=${REST_PORT:-6820} CTLD_PORT=${CTLD_PORT:-6817} SLURMD_PORT=${SLURMD_PORT:-6818}
      CLUSTER_NAME=${CLUSTER_NAME:-gpufed}
      ROOT=""
      ;;
    24.11)
      BASE=${GPUFED_SLURM_STATE:-/tmp/gpufed-slurm24}
      REST_PORT=${REST_PORT:-6830} CTLD_PORT=${CTLD_PORT:-6837} SLURMD_PORT=${SLURMD_PORT:-6838}
      CLUSTER_NAME=${CLUSTER_NAME:-gpufed24}
      ROOT=${SLURM24_ROOT:-/var/cache/gpufed-slurm24/rootfs}
      ;;
    *) echo "unknown Slurm release '$RELEASE' (22.05 or 24.11)" >&2; return 2 ;;
  esac
  PIDS="$BASE/pids"
  SLURM_CONF="$BASE/etc/slurm.conf"
  # The host name the daemons see and slurm.conf names (see in_slurm). Without UTS
  # namespaces (an unprivileged container) 22.05 falls back to the machine's own name,
  # which must then resolve; 24.11 needs namespaces anyway (its mounts).
  if unshare -u true 2>/dev/null; then SLURM_UTS=ns SLURM_HOST=localhost; else SLURM_UTS=host SLURM_HOST=$(hostname -s); fi
}

# release_of_state DIR: the release a state folder was started with (22.05 when unknown).
release_of_state() { cat "$1/release" 2>/dev/null || echo 22.05; }

SLURM_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# in_slurm [NAME=VALUE...] CMD...: runs a command of this release with a clean environment
# and SLURM_CONF set, replacing the shell when IN_SLURM_EXEC=1 (so `(IN_SLURM_EXEC=1
# in_slurm ...) &` gives the command's own PID: unshare, sh, chroot and env all exec).
# No SLURM_JWT leaks in: daemons started with it authenticate with auth/jwt and die.
# Every command runs in its own UTS namespace whose host name is "localhost": Slurm
# resolves its own host name (slurmctld binds to it under NoCtldInAddrAny), and
# "localhost" resolves to 127.0.0.1 everywhere, while the machine's name may not (a fresh
# chroot's /etc/hosts does not list it).
in_slurm() {
  if [ -z "$ROOT" ] && [ "$SLURM_UTS" != ns ]; then
    exec_or_run env -i PATH="$SLURM_PATH" LANG=C.UTF-8 HOME=/root SLURM_CONF="$SLURM_CONF" "$@"
  elif [ -z "$ROOT" ]; then
    exec_or_run unshare -u sh -c 'hostname localhost && exec env -i "$@"' sh \
      PATH="$SLURM_PATH" LANG=C.UTF-8 HOME=/root SLURM_CONF="$SLURM_CONF" "$@"
  else
    local binds d
    binds=$(shared_dirs)
    for d in $binds; do mkdir -p "$ROOT$d"; done
    exec_or_run unshare -u -m --propagation private sh -c '
      root=$1 binds=$2; shift 2
      hostname localhost && mount -t proc proc "$root/proc" && mount -t sysfs -o ro sysfs "$root/sys" ||
        { echo "in_slurm: setting up the namespace (host name, /proc, /sys) failed" >&2; exit 1; }
      for d in $binds; do mount --rbind "$d" "$root$d" || { echo "in_slurm: cannot bind $d" >&2; exit 1; }; done
      exec chroot "$root" /usr/bin/env -i "$@"' sh "$ROOT" "$binds" \
      PATH="$SLURM_PATH" LANG=C.UTF-8 HOME=/root SLURM_CONF="$SLURM_CONF" "$@"
  fi
}

# shared_dirs: the host folders a 24.11 chroot sees at the same path, so jobs read and
# write the host's files as they do on 22.05 (a workload's workingDir, its scripts, its
# output): the usual places for user data that exist on this host, and the state folder.
# System folders (/usr, /etc, /var, ...) stay the chroot's: they hold Slurm 24.11.
# GPUFED_SLURM24_SHARE overrides the list (space-separated absolute paths).
shared_dirs() {
  local d out=""
  for d in ${GPUFED_SLURM24_SHARE:-/tmp /var/tmp /home /srv /mnt /opt /work /data /scratch}; do
    [ -d "$d" ] && [ ! -L "$d" ] && out="$out $d"
  done
  local covered=no
  for d in $out; do case "$BASE/" in "$d"/*) covered=yes ;; esac; done
  [ $covered = yes ] || out="$out $BASE"
  echo "$out"
}

# `exec` when asked to replace the shell (IN_SLURM_EXEC=1), a plain run otherwise.
exec_or_run() { if [ "${IN_SLURM_EXEC:-0}" = 1 ]; then exec "$@"; else "$@"; fi; }

# start_daemon NAME [NAME=VALUE...] CMD...: starts a daemon in the background, records
# "NAME PID" in $PIDS; its output goes to $BASE/log/NAME.out.
start_daemon() {
  local name=$1; shift
  (IN_SLURM_EXEC=1 in_slurm "$@") >>"$BASE/log/$name.out" 2>&1 &
  echo "$name $!" >>"$PIDS"
}

pid_of() { awk -v n="$1" '$1==n{print $2}' "$PIDS" 2>/dev/null | tail -1; }
# alive PID: running and not a zombie (kill -0 succeeds on zombies, and this machine's
# PID 1 reaps orphans only every few seconds).
alive() { [ -n "$1" ] && [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)" != Z ]; }
daemon_alive() { alive "$(pid_of "$1")"; }

# stop_pid NAME PID: SIGTERM, up to 10 s, then SIGKILL.
stop_pid() {
  local name=$1 pid=$2
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; echo "$name ($pid) killed -9"; else echo "$name ($pid) stopped"; fi
}

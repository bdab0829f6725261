#!/usr/bin/env bash
# Builds, once, the Debian 13 (trixie) chroot that runs Slurm 24.11 for gpufed's tests:
# Debian 12 ships only Slurm 22.05 (REST v0.0.36-v0.0.38), so start-slurm.sh --release
# 24.11 runs trixie's munge, slurmctld, slurmd and slurmrestd inside this chroot.
# Adapted from ../shared/recipes/start-slurm24.sh and shares its cache folder, so either
# one reuses what the other built.
#
#   - debootstrap --variant=minbase trixie from the host's own Debian mirror (the mirror of
#     its bookworm source; bookworm's debian-archive-keyring verifies trixie), then
#     apt-get install of the Slurm packages inside it, with a policy-rc.d that keeps the
#     maintainer scripts from starting daemons
#   - cached in $SLURM24_ROOT (default /var/cache/gpufed-slurm24/rootfs); a complete
#     chroot is reused as is (the check takes milliseconds), a half-built one is redone
#   - concurrent callers wait for each other (flock), so two tests never build it twice
#   - nothing stays mounted: apt runs in a private mount namespace (unshare -m) with its
#     own /proc, which disappears with it
#
# Usage: slurm24-rootfs.sh            (prints the seconds each step took; exit 0 when ready)
# Settings: SLURM24_ROOT, MIRROR (default: the host's bookworm mirror), SUITE (trixie).
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/slurm-lib.sh"   # slurm_mount_propagation
ROOT=${SLURM24_ROOT:-/var/cache/gpufed-slurm24/rootfs}
SUITE=${SUITE:-trixie}
CACHE=$(dirname "$ROOT")
# Slurm, and what test jobs commonly run besides coreutils and bash (jobs run in the chroot).
PKGS="munge slurmctld slurmd slurmrestd slurm-client slurm-wlm-jwt-plugin python3-minimal procps hostname"
CPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
secs_since() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $1}"; }
die() { echo "slurm24-rootfs: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"

# The chroot is complete when its package database says every Slurm package is installed.
complete() {
  [ -x "$ROOT/usr/bin/env" ] && chroot "$ROOT" /usr/bin/env -i PATH=$CPATH dpkg-query -W -f='${db:Status-Abbrev}\n' $PKGS \
    2>/dev/null | awk '$1!="ii"{bad=1} END{exit bad || NR==0}'
}
complete && exit 0

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9   # another caller may be building it right now: wait, then look again
complete && exit 0

command -v debootstrap >/dev/null || die "debootstrap is missing (GPUFED_TEST_DEPS=1 scripts/install-deps.sh installs it)"

# The host's own Debian mirror (its bookworm source), unless MIRROR is set.
. "$(cd "$(dirname "$0")/../../scripts" && pwd)/debian-sources.sh"
host_mirror() {
  local u
  u=$(host_source bookworm security)
  [ -n "$u" ] || die "no Debian bookworm mirror in /etc/apt/sources.list*; set MIRROR"
  echo "$u"
}
MIRROR=${MIRROR:-$(host_mirror)}

T=$(date +%s.%N)
if [ ! -x "$ROOT/usr/bin/env" ]; then
  PART="$ROOT.partial"
  rm -rf --one-file-system "$PART"
  echo "slurm24-rootfs: debootstrap $SUITE from $MIRROR into $ROOT (once) ..."
  debootstrap --variant=minbase "$SUITE" "$PART" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
    { tail -5 "$CACHE/debootstrap.log" >&2; die "debootstrap failed, see $CACHE/debootstrap.log"; }
  # Keep the packages' maintainer scripts from starting services in the chroot.
  printf '#!/bin/sh\nexit 101\n' >"$PART/usr/sbin/policy-rc.d"; chmod 755 "$PART/usr/sbin/policy-rc.d"
  mv "$PART" "$ROOT"
  echo "slurm24-rootfs: debootstrap took $(secs_since "$T") s"
fi

T=$(date +%s.%N)
[ -x "$ROOT/usr/sbin/policy-rc.d" ] || { printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"; chmod 755 "$ROOT/usr/sbin/policy-rc.d"; }
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
# A fresh chroot may have no /etc/hosts; the test Slurm never resolves the host's name, but
# "localhost" must resolve for the client tools.
grep -qs '^127\.0\.0\.1[[:space:]].*localhost' "$ROOT/etc/hosts" || printf '127.0.0.1 localhost\n::1 localhost\n' >>"$ROOT/etc/hosts"
unshare -m --propagation "$(slurm_mount_propagation)" sh -c '
  mount -t proc proc "$0/proc" || exit 1
  exec chroot "$0" /usr/bin/env -i PATH="$1" LANG=C.UTF-8 HOME=/root DEBIAN_FRONTEND=noninteractive sh -c "
    dpkg --configure -a && apt-get update -qq &&
    apt-get install -y -qq --no-install-recommends $2 && apt-get clean"' "$ROOT" "$CPATH" "$PKGS" \
  >"$CACHE/apt-install.log" 2>&1 || { tail -5 "$CACHE/apt-install.log" >&2; die "apt-get install in the chroot failed, see $CACHE/apt-install.log"; }
complete || die "packages still missing in $ROOT after apt-get install; see $CACHE/apt-install.log"
echo "slurm24-rootfs: installed Slurm $(chroot "$ROOT" /usr/bin/env -i PATH=$CPATH dpkg-query -W -f='${Version}' slurmctld) in $(secs_since "$T") s"

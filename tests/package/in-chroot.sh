#!/usr/bin/env bash
# The package stage of scripts/test.sh: deb-test.sh in a throwaway Debian 12 system, then
# the container image built from the package it made, and image-smoke.sh on that image.
#
# deb-test.sh installs build dependencies, creates the gpufed user, installs and purges the
# package: it must not run on the machine itself. Here it runs in a chroot made from a
# minimal bookworm debootstrapped once from the host's Debian mirror and cached in
# $GPUFED_PACKAGE_BASE (default /var/cache/gpufed-package/bookworm); each run works on a
# fresh copy of it, inside a private mount namespace (its /proc, /sys and /dev mounts go
# with it), and removes the copy when it ends. The project comes in as a clone of the
# repository's committed HEAD, as a source package would be built.
#
# Usage (root): tests/package/in-chroot.sh
# Exit: 0 when both tests passed; the failing test's status otherwise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "$here/../.." && pwd)
BASE=${GPUFED_PACKAGE_BASE:-/var/cache/gpufed-package/bookworm}
CPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
die() { echo "package: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mounts)"
command -v debootstrap >/dev/null || die "debootstrap is missing (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
command -v buildah >/dev/null || die "buildah is missing (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"

# The host's own bookworm mirror, unless MIRROR is set.
. "$project/scripts/debian-sources.sh"
host_mirror() {
  local u
  u=$(host_source bookworm security)
  [ -n "$u" ] || die "no Debian bookworm mirror in /etc/apt/sources.list*; set MIRROR"
  echo "$u"
}

# The base, once: complete when its marker exists (a half-made one is made again).
mkdir -p "$(dirname "$BASE")"
exec 9>"$(dirname "$BASE")/.lock"
flock 9
if [ ! -e "$BASE/.gpufed-complete" ]; then
  started=$(date +%s)
  rm -rf "$BASE"
  debootstrap --variant=minbase bookworm "$BASE" "${MIRROR:-$(host_mirror)}" >"$(dirname "$BASE")/debootstrap.log" 2>&1 ||
    die "debootstrap failed (see $(dirname "$BASE")/debootstrap.log)"
  cp /etc/resolv.conf "$BASE/etc/resolv.conf" 2>/dev/null || true
  # Maintainer scripts inside must not start services.
  printf '#!/bin/sh\nexit 101\n' >"$BASE/usr/sbin/policy-rc.d"
  chmod 755 "$BASE/usr/sbin/policy-rc.d"
  # A network that re-signs TLS needs its CA inside too.
  mkdir -p "$BASE/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$BASE/usr/local/share/ca-certificates/" 2>/dev/null || true
  chroot "$BASE" /usr/bin/env -i PATH=$CPATH bash -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git ca-certificates ccache >/dev/null &&
     update-ca-certificates >/dev/null 2>&1'
  touch "$BASE/.gpufed-complete"
  echo "package: made the bookworm base in $(($(date +%s) - started)) s"
fi
# A base made before ccache joined it gets it once.
if [ ! -x "$BASE/usr/bin/ccache" ]; then
  chroot "$BASE" /usr/bin/env -i PATH=$CPATH bash -c \
    'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ccache >/dev/null'
fi
flock -u 9

root=$(mktemp -d /var/tmp/gpufed-package.XXXXXX)
debs=$(mktemp -d /var/tmp/gpufed-debs.XXXXXX)
cleanup() {
  # Processes the test left inside the chroot are this run's: end them by PID.
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
  done
  rm -rf "$root" "$debs"
}
trap cleanup EXIT
cp -a "$BASE/." "$root/"
git clone -q "$project" "$root/root/project"
mkdir -p "$root/export"
commit=$(git -C "$project" rev-parse --short=12 HEAD)
# The package's objects (hardening flags: none shared with the other builds) are kept
# between runs in a ccache of their own, mounted into the chroot.
ccache_dir=${GPUFED_PACKAGE_CCACHE:-/var/cache/gpufed-package/ccache}
mkdir -p "$ccache_dir" "$root/ccache"

started=$(date +%s)
set +e
unshare -m --propagation private bash -c '
  set -e
  root=$1
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount --bind "$4" "$root/ccache"
  exec chroot "$root" /usr/bin/env -i HOME=/root PATH="$2" TERM=dumb GPUFED_COMMIT="$3" GPUFED_DEB_EXPORT=/export \
    CCACHE_DIR=/ccache CCACHE_BASEDIR=/root/project CCACHE_NOHASHDIR=true \
    bash -c "cd /root/project && tests/package/deb-test.sh"' _ "$root" "$CPATH" "$commit" "$ccache_dir"
rc=$?
set -e
echo "package: deb-test.sh exit $rc after $(($(date +%s) - started)) s"
((rc == 0)) || exit "$rc"

cp "$root"/export/*.deb "$debs/"
image=$debs/gpufed.oci.tar
started=$(date +%s)
"$project/scripts/build-image.sh" --output "$image" "$debs"/gpufed_*.deb
"$here/image-smoke.sh" "$image"
echo "package: image built and smoke-tested in $(($(date +%s) - started)) s"

#!/usr/bin/env bash
# Builds gpufed's container image from the Debian package, with nothing pulled from a
# registry: a Debian 12 base made by debootstrap from this machine's Debian mirror, the
# .deb(s) installed into it with apt (which fetches their dependencies from the same
# mirror), a fixed non-root user, written as an OCI archive.
#
#   scripts/build-image.sh [--output FILE] [--tag NAME:TAG] GPUFED_DEB [GPUFED_TOOLS_DEB]
#
#   - the base: debootstrap --variant=minbase bookworm, cached in $GPUFED_IMAGE_BASE
#     (default /var/cache/gpufed-image/bookworm) and reused while complete; the mirror is
#     the host's bookworm source (as tests/slurm/slurm24-rootfs.sh finds it) unless
#     MIRROR is set, and the image's apt also gets the host's bookworm-security source
#   - the user: gpufed, uid and gid 999, made before the package is installed (its
#     postinst then finds it): a fixed number, so Kubernetes' runAsNonRoot can check it
#     and deploy/kubernetes/deployment.yaml can name it
#   - entrypoint: gpufed run --config-file /etc/gpufed/gpufed.yaml, the package's file;
#     arguments given to the container are appended, so flags override the file
#     (e.g. --listen 0.0.0.0:8443 --tls-cert ... --tls-key ...). Mount your own
#     /etc/gpufed/gpufed.yaml and a volume on /var/lib/gpufed
#   - output: an OCI archive (default gpufed-VERSION.oci.tar in the current folder),
#     reference NAME:TAG (default gpufed:VERSION). `skopeo copy oci-archive:FILE
#     docker://REGISTRY/gpufed:VERSION` pushes it; tests/package/image-smoke.sh tests it
#
# Needs root, buildah and debootstrap (apt-get install buildah debootstrap). Builds run
# with `--isolation chroot`: the only isolation that works on machines where a runtime
# cannot set rlimits or make namespaces (podman run fails there).
set -euo pipefail

die() { echo "build-image: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }

output="" tag=""
while (($#)); do
  case $1 in
    --output) output=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    -h|--help) usage ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
(($# >= 1 && $# <= 2)) || usage
debs=()
for d in "$@"; do
  [[ -f $d && $d == *.deb ]] || die "not a .deb file: $d"
  debs+=("$(realpath "$d")")
done
[[ $(id -u) == 0 ]] || die "must run as root (debootstrap, buildah mount)"
command -v buildah >/dev/null || die "buildah is missing (apt-get install buildah)"
command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap)"

package=$(dpkg-deb --field "${debs[0]}" Package)
[[ $package == gpufed ]] || die "the first .deb must be the gpufed package, not $package"
version=$(dpkg-deb --field "${debs[0]}" Version)
[[ $(dpkg-deb --field "${debs[0]}" Architecture) == amd64 ]] || die "${debs[0]} is not an amd64 package"
output=${output:-$PWD/gpufed-$version.oci.tar}
# An image tag allows [A-Za-z0-9_.-]: 0.9.0~rc1 or 0.9.0+git1 become 0.9.0-rc1, 0.9.0-git1.
tag=${tag:-gpufed:$(tr -c 'A-Za-z0-9_.\n-' '-' <<<"$version")}

# The host's Debian sources: its bookworm mirror and, when it has one, its security mirror.
. "$(dirname "$(realpath "$0")")/debian-sources.sh"
mirror=${MIRROR:-$(host_source bookworm security)}
[[ -n $mirror ]] || die "no Debian bookworm mirror in /etc/apt/sources.list*; set MIRROR"
security=${SECURITY_MIRROR-$(host_source bookworm-security "")}

secs_since() { awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $1}"; }

# 1. The base file system, once.
base=${GPUFED_IMAGE_BASE:-/var/cache/gpufed-image/bookworm}
mkdir -p "$(dirname "$base")"
exec 9>"$(dirname "$base")/.lock"
flock 9   # two builds never debootstrap at once
if [[ ! -x $base/usr/bin/apt-get || ! -f $base/.complete ]]; then
  t=$(date +%s.%N)
  rm -rf --one-file-system "$base" "$base.partial"
  echo "build-image: debootstrap bookworm from $mirror into $base (once) ..."
  debootstrap --variant=minbase bookworm "$base.partial" "$mirror" >"$base.log" 2>&1 ||
    { tail -5 "$base.log" >&2; die "debootstrap failed, see $base.log"; }
  touch "$base.partial/.complete"
  mv "$base.partial" "$base"
  echo "build-image: debootstrap took $(secs_since "$t") s"
fi

# 2. A working container from it.
t=$(date +%s.%N)
ctr=$(buildah from --isolation chroot scratch)
cleanup() { buildah rm "$ctr" >/dev/null 2>&1 || true; }
trap cleanup EXIT
mnt=$(buildah mount "$ctr")
tar -C "$base" --exclude=./.complete -cf - . | tar -C "$mnt" -xpf -
{
  echo "deb $mirror bookworm main"
  echo "deb $mirror bookworm-updates main"
  [[ -z $security ]] || echo "deb $security bookworm-security main"
} >"$mnt/etc/apt/sources.list"
# No daemon may start while packages are installed (there is no init in the image).
printf '#!/bin/sh\nexit 101\n' >"$mnt/usr/sbin/policy-rc.d"
chmod 755 "$mnt/usr/sbin/policy-rc.d"
mkdir -p "$mnt/tmp/debs"
for d in "${debs[@]}"; do cp "$d" "$mnt/tmp/debs/"; done
buildah umount "$ctr" >/dev/null

# 3. The user first (fixed ids), then the packages with their dependencies, then no caches.
# shellcheck disable=SC2016 # expanded by the image's shell, not this one
buildah run --isolation chroot "$ctr" -- sh -ec '
  groupadd --system --gid 999 gpufed
  useradd --system --uid 999 --gid 999 --home-dir /var/lib/gpufed --no-create-home \
    --shell /usr/sbin/nologin --comment "gpufed controller" gpufed
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends /tmp/debs/*.deb >/dev/null
  apt-get clean
  rm -rf /tmp/debs /var/lib/apt/lists/* /var/cache/debconf/*-old /var/lib/dpkg/*-old /usr/sbin/policy-rc.d
  install -d -o gpufed -g gpufed -m 0750 /var/lib/gpufed
  test "$(id -u gpufed)" = 999
'

# 4. What the image runs, and as whom. The shipped gpufed.yaml listens on 127.0.0.1:8080,
# which nothing outside the container reaches: a deployment passes --listen (with TLS) or
# mounts its own file (deploy/kubernetes/configmap.yaml).
buildah config \
  --user 999:999 \
  --workingdir /var/lib/gpufed \
  --entrypoint '["/usr/bin/gpufed", "run", "--config-file", "/etc/gpufed/gpufed.yaml"]' \
  --cmd '' \
  --volume /var/lib/gpufed \
  --port 8080/tcp \
  --stop-signal SIGTERM \
  --label org.opencontainers.image.title=gpufed \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.description="gpufed controller: $package $version on Debian 12" \
  --label org.opencontainers.image.base.name=debian:bookworm-debootstrap \
  "$ctr"

# 5. The archive.
rm -f "$output"
buildah commit --quiet --format oci --disable-compression=false "$ctr" "oci-archive:$output:$tag" >/dev/null
echo "build-image: $output ($tag, $(du -h "$output" | cut -f1)) in $(secs_since "$t") s"

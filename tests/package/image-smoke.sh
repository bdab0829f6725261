#!/usr/bin/env bash
# Smoke test of the container image that scripts/build-image.sh writes, with buildah
# (`--isolation chroot`; podman run cannot start containers on machines that refuse
# setrlimit). Checks, in a container made from the archive:
#   1. the image's user is gpufed (uid 999), not root, and the entrypoint is
#      `gpufed run --config-file /etc/gpufed/gpufed.yaml`;
#   2. `gpufed version` names the installed package's version;
#   3. `gpufed validate /usr/share/gpufed/examples/quickstart` passes;
#   4. the quickstart runs to the end: gpufed run --config <quickstart> --until-idle --state /tmp/s;
#   5. the entrypoint's command line with the image's own /etc/gpufed/gpufed.yaml, the
#      quickstart as repository and a free loopback port, as the image's user, serves
#      /healthz, /readyz, the dashboard and /metrics (with the generated admin token).
#
# Usage (root): tests/package/image-smoke.sh IMAGE.oci.tar
# Exit: 0 all passed; 1 a check failed; 77 skipped (not root, or no buildah).
set -euo pipefail
archive=${1:?usage: image-smoke.sh IMAGE.oci.tar}
[[ -f $archive ]] || { echo "image-smoke: no such archive: $archive" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "image-smoke: skipped: needs root (buildah)"; exit 77; }
command -v buildah >/dev/null || { echo "image-smoke: skipped: no buildah (apt-get install buildah)"; exit 77; }
command -v curl >/dev/null || { echo "image-smoke: skipped: no curl"; exit 77; }

passed=0 failed=0
. "$(cd "$(dirname "$0")" && pwd)/wait-healthy.sh"
ok() { echo "image-smoke: ok: $*"; passed=$((passed + 1)); }
bad() { echo "image-smoke: FAIL: $*"; failed=$((failed + 1)); }

ctr=$(buildah from --quiet --isolation chroot "oci-archive:$(realpath "$archive")")
image=$(buildah inspect --type container --format '{{.FromImageID}}' "$ctr")
server=""
# The archive's image was copied into buildah's local storage for this test: removed
# again, so repeated runs do not pile up images.
cleanup() {
  if [[ -n $server ]]; then
    for p in /proc/[0-9]*; do  # the controller itself, not only buildah
      [[ $(cat "$p/comm" 2>/dev/null) == gpufed ]] && descends_from "${p#/proc/}" "$server" && kill "${p#/proc/}" 2>/dev/null
    done
    kill "$server" 2>/dev/null || true
  fi
  buildah rm "$ctr" >/dev/null 2>&1 || true
  buildah rmi "$image" >/dev/null 2>&1 || true
}
trap cleanup EXIT
run() { buildah run --isolation chroot "$ctr" -- "$@"; }
descends_from() {  # descends_from PID ANCESTOR
  local p=$1
  while [[ -n $p && $p != 0 && $p != 1 ]]; do
    [[ $p == "$2" ]] && return 0
    p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
  done
  return 1
}


# 1. Who runs, and what.
user=$(buildah inspect --type container --format '{{.OCIv1.Config.User}}' "$ctr")
entrypoint=$(buildah inspect --type container --format '{{.OCIv1.Config.Entrypoint}}' "$ctr")
uid=$(run id -u)
if [[ $user == 999:999 && $uid == 999 && $(run id -un) == gpufed ]]; then
  ok "runs as gpufed (uid $uid, image user $user)"
else
  bad "image user '$user', commands run as uid $uid; expected gpufed, 999:999"
fi
[[ $uid != 0 ]] || bad "the image's user is root"
if [[ $entrypoint == '[/usr/bin/gpufed run --config-file /etc/gpufed/gpufed.yaml]' ]]; then
  ok "entrypoint $entrypoint"
else
  bad "entrypoint is $entrypoint"
fi

# The image carries no private key: a key made when the package was installed would be
# in a layer every container of the image shares (gpufed-audit-keygen.service makes the
# Debian package's key at the first start; Kubernetes mounts the gpufed-audit-key Secret).
mnt=$(buildah mount "$ctr")
# (grep finds nothing in a good image and exits 1: not a failure of this check.)
keys=$({ find "$mnt" -xdev \( -name signing.key -o -name '*.key' \) -type f 2>/dev/null || true; } | sed "s|^$mnt||" | awk 'NR <= 5')
private=$({ grep -rlI --exclude-dir=doc -e 'BEGIN PRIVATE KEY' "$mnt/etc" "$mnt/var" 2>/dev/null || true; } | sed "s|^$mnt||" | awk 'NR <= 5')
buildah umount "$ctr" >/dev/null
if [[ -z $keys && -z $private ]]; then
  ok "the image holds no private key (no *.key file, no PEM private key under /etc or /var)"
else
  bad "the image holds a private key: ${keys//$'\n'/ } ${private//$'\n'/ }"
fi

# 2. The version.
package_version=$(run dpkg-query -W -f '${Version}' gpufed)
version_out=$(run gpufed version 2>&1) || bad "gpufed version exited $?"
if [[ $version_out == *"${package_version%%-*}"* ]]; then
  ok "gpufed version: $version_out"
else
  bad "gpufed version says '$version_out', the package is $package_version"
fi

# 3. validate.
if out=$(run gpufed validate /usr/share/gpufed/examples/quickstart 2>&1); then
  ok "gpufed validate /usr/share/gpufed/examples/quickstart"
else
  bad "gpufed validate exited non-zero:"; echo "$out" | tail -20
fi

# 4. The quickstart, start to end.
t=$(date +%s)
if out=$(run gpufed run --config /usr/share/gpufed/examples/quickstart --until-idle --state /tmp/s 2>&1); then
  ok "quickstart ran to idle in $(($(date +%s) - t)) s: $(grep -m1 -iE 'succeeded|completed|outcomes' <<<"$out" || true)"
else
  bad "the quickstart run failed:"; echo "$out" | tail -20
fi

# 5. The entrypoint's command line (flags after it override the file's keys), serving.
# chroot isolation shares this machine's network: a free loopback port, found here.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
command=(/usr/bin/gpufed run --config-file /etc/gpufed/gpufed.yaml)
# Read whole before grep: with pipefail, `grep -q` leaving early fails the pipeline (SIGPIPE).
run_help=$(run gpufed run --help 2>&1 || true)
if ! grep -q -- --config-file <<<"$run_help"; then
  # The entrypoint cannot work without it; the rest still checks serving as the image's user.
  bad "gpufed run has no --config-file option: the image's entrypoint cannot work"
  command=(/usr/bin/gpufed run)
fi
buildah run --isolation chroot "$ctr" -- "${command[@]}" \
  --config /usr/share/gpufed/examples/quickstart --state /tmp/served --listen "127.0.0.1:$port" \
  --speed 1 --max-time 10m >/tmp/image-smoke-run.log 2>&1 &
server=$!
if wait_healthy "$port" "$server" 60; then
  ok "the entrypoint's command line serves /healthz on 127.0.0.1:$port"
  mnt=$(buildah mount "$ctr")
  owner=$(stat -c %u "$mnt/tmp/served")
  token=$(tr -d '[:space:]' <"$mnt/tmp/served/admin.token")
  buildah umount "$ctr" >/dev/null
  if [[ $owner == 999 ]]; then ok "its state folder belongs to uid 999"; else bad "its state folder belongs to uid $owner"; fi
  for path in /readyz /ui/ /metrics /v1/clusters; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port$path")
    if [[ $code == 200 ]]; then ok "GET $path: 200"; else bad "GET $path: $code"; fi
  done
  metrics=$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$port/metrics" || true)
  if grep -q '^gpufed_' <<<"$metrics"; then
    ok "/metrics has gpufed_ series"
  else
    bad "/metrics has no gpufed_ series"
  fi
else
  bad "nothing answered /healthz on 127.0.0.1:$port; the run's output:"; tail -20 /tmp/image-smoke-run.log
fi
# SIGTERM to the controller, as a container runtime sends it: a graceful stop, exit 0.
# The controller is the gpufed process among the descendants of our `buildah run`.
pids=()
for p in /proc/[0-9]*; do
  [[ $(cat "$p/comm" 2>/dev/null) == gpufed ]] && descends_from "${p#/proc/}" "$server" && pids+=("${p#/proc/}")
done
if ((${#pids[@]} == 0)); then
  if kill -0 "$server" 2>/dev/null; then bad "no gpufed process under buildah run $server"; fi
else
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$server" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$server" 2>/dev/null; then
    bad "SIGTERM did not stop the controller within 30 s"
    kill -KILL "${pids[@]}" 2>/dev/null || true
  else
    status=0
    wait "$server" || status=$?
    if [[ $status == 0 ]]; then ok "SIGTERM stopped it with exit 0"; else bad "SIGTERM: exit $status"; fi
  fi
fi
server=""

echo "image-smoke: $passed passed, $failed failed"
((failed == 0))

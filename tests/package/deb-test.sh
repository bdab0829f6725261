#!/usr/bin/env bash
# The Debian package, end to end, as a Debian 12 administrator would meet it. Meant for a
# fresh Debian 12 system (it installs and removes packages and users), e.g. from the
# project root:
#   ../shared/tools/fresh-debian.sh tests/package/deb-test.sh
#
#  1. build: apt-get build-dep ./ (debian/control's Build-Depends), then
#     dpkg-buildpackage -b -us -uc; lintian on the result, failing on errors;
#  2. apt install ./gpufed_*.deb: dependencies from Debian alone; the gpufed user, the
#     conffile, man pages, examples and /var/lib/gpufed are there; the unit passes
#     systemd-analyze verify (its security score is printed); no audit key is made at
#     install time (an image built from the package would carry it);
#  3. the quickstart copied to /var/lib/gpufed/policy (the shipped file's repository),
#     the shipped gpufed.yaml edited as an admin would (a free loopback port, speed 60),
#     the first start's gpufed-audit-keygen.service run as root (its key: root's, 0600,
#     in /etc/gpufed/audit), its LoadCredential= copy made as systemd makes it, and the
#     unit's ExecStart line run as the unit's User with its UMask and that credential:
#     /healthz, /readyz, /ui/ and /metrics answer; the process is gpufed's, not root's;
#     the journal is signed by the credential's key, none is in the state folder; SIGTERM
#     stops it with exit 0 and the closed journal verifies with signing.pub;
#  4. apt purge keeps /var/lib/gpufed (state included), /etc/gpufed/audit and the user; after a reinstall,
#     purge with /var/lib/gpufed/.purge-ok removes it.
# systemd does not run in a chroot, so step 3 runs the command line without the unit's
# sandbox (systemd-analyze verify/security check the unit itself).
#
# Usage (root): tests/package/deb-test.sh [--prebuilt DIR]
#   --prebuilt DIR   skip step 1 and install DIR/gpufed_*.deb
# Settings: GPUFED_DEB_EXPORT=DIR copies the built .debs there (fresh-debian.sh's chroot
# shares /dev/shm with the host, so /dev/shm/NAME carries them out of it).
# Prints "deb-test: N passed, M failed"; exit 0 only when nothing failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/package/wait-healthy.sh"
prebuilt=""
if [[ ${1:-} == --prebuilt ]]; then prebuilt=$(realpath "${2:?--prebuilt DIR}"); fi
[[ $(id -u) == 0 ]] || { echo "deb-test: must run as root in a throwaway Debian 12 system" >&2; exit 2; }
grep -q '^12\.' /etc/debian_version || echo "deb-test: warning: not Debian 12 ($(cat /etc/debian_version))"

passed=0 failed=0
ok() { echo "deb-test: ok: $*"; passed=$((passed + 1)); }
bad() { echo "deb-test: FAIL: $*"; failed=$((failed + 1)); }
check() {  # check DESCRIPTION COMMAND...: ok when the command succeeds
  local what=$1; shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
finish() { echo "deb-test: $passed passed, $failed failed"; ((failed == 0)); exit $?; }
export DEBIAN_FRONTEND=noninteractive
apt_get() { apt-get -y -qq -o=Dpkg::Use-Pty=0 "$@"; }
secs() { echo $(($(date +%s) - $1)); }

# Tools the test itself uses: systemd for systemd-analyze (not started in a chroot),
# curl, python3 for a free port, lintian. Not the package's dependencies.
apt_get update
apt_get install --no-install-recommends systemd curl python3 lintian >/dev/null

# 1. Build.
if [[ -z $prebuilt ]]; then
  t=$(date +%s)
  (cd "$root" && apt_get build-dep ./ >/dev/null)
  ok "apt-get build-dep ./ installed debian/control's Build-Depends in $(secs "$t") s"
  t=$(date +%s)
  out=$(mktemp -d)
  # The repository is a clone: build in place, the .debs land in its parent folder.
  if (cd "$root" && nice -n 19 dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1; then
    ok "dpkg-buildpackage -b -us -uc in $(secs "$t") s"
  else
    bad "dpkg-buildpackage failed after $(secs "$t") s:"; tail -40 "$out/build.log"; finish
  fi
  debs=$(dirname "$root")
  changes=$(ls "$debs"/gpufed_*_amd64.changes)
  if lintian --fail-on error "$changes" >"$out/lintian.log" 2>&1; then
    ok "lintian: no errors ($(grep -c '^W:' "$out/lintian.log" || true) warnings)"
  else
    bad "lintian found errors:"
  fi
  grep -E '^[EW]:' "$out/lintian.log" || true
  if [[ -n ${GPUFED_DEB_EXPORT:-} ]]; then
    mkdir -p "$GPUFED_DEB_EXPORT" && cp "$debs"/gpufed*_amd64.deb "$changes" "$GPUFED_DEB_EXPORT/"
    echo "deb-test: copied the .debs to $GPUFED_DEB_EXPORT"
  fi
else
  debs=$prebuilt
fi
deb=$(ls "$debs"/gpufed_*_amd64.deb)
version=$(dpkg-deb --field "$deb" Version)
check "package version $version is VERSION's ($(cat "$root/VERSION"))" [ "${version%%-*}" = "$(cat "$root/VERSION")" ]

# 2. Install, with dependencies from Debian's archive only.
t=$(date +%s)
if apt_get install --no-install-recommends "$deb" >/dev/null; then
  ok "apt install ./$(basename "$deb") in $(secs "$t") s"
else
  bad "apt install ./$(basename "$deb") failed"; finish
fi
check "gpufed system user and group exist" getent passwd gpufed
check "the gpufed user has no login shell" [ "$(getent passwd gpufed | cut -d: -f7)" = /usr/sbin/nologin ]
check "/var/lib/gpufed exists, owned by gpufed" [ "$(stat -c %U "/var/lib/gpufed")" = gpufed ]
check "/etc/gpufed/gpufed.yaml is a conffile" grep -qx ' /etc/gpufed/gpufed.yaml [0-9a-f]*' \
  <(dpkg-query -W -f='${Conffiles}\n' gpufed)
check "man pages gpufed(1) and gpufed-run(1)" test -f /usr/share/man/man1/gpufed.1.gz -a -f /usr/share/man/man1/gpufed-run.1.gz
check "examples and stdlib under /usr/share/gpufed" test -d /usr/share/gpufed/examples/quickstart -a \
  -f /usr/share/gpufed/policies/stdlib/burst.yaml
check "README.Debian, NEWS, CHANGELOG.md, operations.md and tokens.example in /usr/share/doc/gpufed" bash -c '
  cd /usr/share/doc/gpufed && ls README.Debian* NEWS.Debian* CHANGELOG.md* operations.md* tokens.example* >/dev/null'
version_out=$(/usr/bin/gpufed version 2>&1 || true)
check "gpufed version ($version_out) names the package's version" grep -qF "${version%%-*}" <<<"$version_out"
check "the service is installed disabled" bash -c '! systemctl is-enabled --quiet gpufed 2>/dev/null'
unit=/lib/systemd/system/gpufed.service
keygen_unit=/lib/systemd/system/gpufed-audit-keygen.service
for u in "$unit" "$keygen_unit"; do
  if systemd-analyze verify "$u"; then ok "systemd-analyze verify $u"; else bad "systemd-analyze verify $u"; fi
done
check "the install made no audit key (/etc/gpufed/audit is absent)" test ! -e /etc/gpufed/audit
score=$(systemd-analyze security --offline=yes "$unit" 2>/dev/null | tail -1 || true)
echo "deb-test: $score"

# 3. The unit's command line, as the unit's user, with the shipped config file.
cp -r /usr/share/gpufed/examples/quickstart /var/lib/gpufed/policy
chown -R gpufed:gpufed /var/lib/gpufed/policy
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
config=/etc/gpufed/gpufed.yaml
sed -i -E "s|^listen: [^ ]+|listen: 127.0.0.1:$port|; s|^speed: 0 |speed: 60|" "$config"
check "the shipped config's repository is /var/lib/gpufed/policy" grep -q '^repository: /var/lib/gpufed/policy ' "$config"
user=$(sed -n 's/^User=//p' "$unit")
umask_value=$(sed -n 's/^UMask=//p' "$unit")
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")

# The first start: systemd runs gpufed-audit-keygen.service (root, its UMask) when its
# ConditionPathExists= holds, then gives gpufed.service the key as a credential: a copy in
# a folder only the unit's user can read, named in $CREDENTIALS_DIRECTORY.
credential=$(sed -n 's/^LoadCredential=//p' "$unit")
key_path=${credential#*:}
check "gpufed.service loads the credential audit-signing.key from the path the keygen unit makes" \
  grep -qx "ConditionPathExists=!$key_path" "$keygen_unit"
check "gpufed.service requires gpufed-audit-keygen.service" grep -qx 'Requires=gpufed-audit-keygen.service' "$unit"
keygen_start=$(sed -n 's/^ExecStart=//p' "$keygen_unit")
# shellcheck disable=SC2086 # split into words, as systemd does
(umask "$(sed -n 's/^UMask=//p' "$keygen_unit")" && $keygen_start) >/dev/null
check "the first start made the key, root's with mode 600 ($(stat -c '%U %a' "$key_path"))" \
  [ "$(stat -c '%U %a' "$key_path")" = "root 600" ]
creds=/run/credentials/gpufed.service
install -d -o "$user" -g "$user" -m 0500 "$creds"
install -o "$user" -g "$user" -m 0400 "$key_path" "$creds/${credential%%:*}"
# The help is read whole before grep looks: with pipefail, `grep -q` leaving early would
# fail the pipeline through SIGPIPE once the help is longer than one write.
run_help=$(/usr/bin/gpufed run --help 2>&1 || true)
if ! grep -q -- --config-file <<<"$run_help"; then
  # Without it the unit cannot start at all; the rest of this step still checks the
  # controller as the unit's user with the same settings given as flags.
  bad "gpufed run has no --config-file option: the unit's ExecStart cannot work"
  exec_start="/usr/bin/gpufed run --config /var/lib/gpufed/policy --state /var/lib/gpufed/state --listen 127.0.0.1:$port --speed 60"
fi
echo "deb-test: running as $user (umask $umask_value): $exec_start"
log=$(mktemp)
# shellcheck disable=SC2086 # the ExecStart line is split into words, as systemd does
(umask "$umask_value" && cd /var/lib/gpufed && exec runuser -u "$user" -- env CREDENTIALS_DIRECTORY="$creds" $exec_start) >"$log" 2>&1 &
server=$!
if wait_healthy "$port" "$server" 120; then
  ok "the unit's ExecStart serves /healthz on 127.0.0.1:$port"
  pid=""   # the gpufed process (runuser is its parent); procps is not in a minimal system
  for p in /proc/[0-9]*; do
    if [[ $(cat "$p/comm" 2>/dev/null) == gpufed && $(stat -c %U "$p" 2>/dev/null) == "$user" ]]; then pid=${p#/proc/}; fi
  done
  check "the controller runs as $user" [ -n "$pid" ]
  check "its state folder is private to $user" [ "$(stat -c '%U %a' /var/lib/gpufed/state)" = "$user 700" ]
  token=$(tr -d '[:space:]' </var/lib/gpufed/state/admin.token)
  for path in /readyz /ui/ /metrics /v1/clusters; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port$path")
    check "GET $path: $code" [ "$code" = 200 ]
  done
  check "GET /metrics without a token is refused" [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" != 200 ]
  check "the run says its audit key is the service's credential" grep -q "audit log's key is the service's credential audit-signing.key" "$log"
  check "no signing key in the state folder" test ! -e /var/lib/gpufed/state/audit/signing.key
  check "/readyz gives no warning about the key" bash -c "! curl -s -H 'Authorization: Bearer $token' http://127.0.0.1:$port/readyz | grep -q 'beside the journal'"
  # SIGTERM, as systemd's KillSignal: a graceful stop with exit 0.
  kill -TERM "${pid:-$server}"
  status=0
  wait "$server" || status=$?
  check "SIGTERM stops it with exit 0 (got $status)" [ "$status" = 0 ]
  check "the closed journal verifies with /etc/gpufed/audit/signing.pub" \
    /usr/bin/gpufed audit verify --require-closed --key /etc/gpufed/audit/signing.pub /var/lib/gpufed/state/audit
else
  bad "nothing answered /healthz on 127.0.0.1:$port; its output:"; tail -30 "$log"
  kill "$server" 2>/dev/null || true
fi

# 4. Purge keeps the state unless asked.
apt_get purge gpufed >/dev/null
check "purge removed /etc/gpufed/gpufed.yaml" test ! -e /etc/gpufed/gpufed.yaml
check "purge kept /var/lib/gpufed and its state" test -d /var/lib/gpufed/state -a -d /var/lib/gpufed/policy
check "purge kept the gpufed user" getent passwd gpufed
check "purge kept the audit key in /etc/gpufed/audit" test -f "$key_path"
apt_get install --no-install-recommends "$deb" >/dev/null
check "a reinstall keeps the old state" test -d /var/lib/gpufed/state
touch /var/lib/gpufed/.purge-ok
apt_get purge gpufed >/dev/null
check "purge with /var/lib/gpufed/.purge-ok removed /var/lib/gpufed" test ! -e /var/lib/gpufed

finish

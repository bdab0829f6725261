#!/usr/bin/env bash
# The dashboard's browser tests: installs puppeteer-core (pinned in package-lock.json) into
# a cache folder with `npm ci` when the lockfile changed, then runs dashboard.test.mjs with
# node's test runner against GPUFED on the quickstart, in Debian's Chromium.
#
#   run.sh GPUFED SOURCE_DIR ARTIFACT_DIR
#
# Exit status: 0 passed, 1 failed, 2 usage, 77 skipped (no chromium or node, or npm could
# not install puppeteer-core); under CI=true or GPUFED_REQUIRE_ALL=1 those are failures,
# so a required test never reads as green because it could not run.
# Environment: GPUFED_NPM_CACHE (default ~/.cache/gpufed-npm), CHROMIUM (default
# /usr/bin/chromium).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -eq 3 ]] || { echo "usage: $0 GPUFED SOURCE_DIR ARTIFACT_DIR" >&2; exit 2; }
gpufed=$1 source=$2 artifacts=$3

skip() {
  if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then
    echo "browser: FAILED: $* (CI=true or GPUFED_REQUIRE_ALL=1: dependencies are required)"
    exit 1
  fi
  echo "browser: SKIPPED: $*"
  exit 77
}

command -v node >/dev/null 2>&1 || skip "node is not installed (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
chromium=${CHROMIUM:-/usr/bin/chromium}
[[ -x $chromium ]] || skip "$chromium is missing (apt-get install chromium, or GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
modules=$("$here/install-modules.sh") || skip "cannot install puppeteer-core with npm ci (offline?)"

mkdir -p "$artifacts"
start=$(date +%s)
GPUFED=$gpufed GPUFED_SOURCE_DIR=$source GPUFED_ARTIFACTS=$artifacts GPUFED_BROWSER_MODULES=$modules CHROMIUM=$chromium \
  timeout 600 node --test --test-concurrency=1 --test-reporter=spec "$here/dashboard.test.mjs"
rc=$?
echo "browser: exit $rc after $(($(date +%s) - start)) s; screenshots in $artifacts"
exit "$rc"

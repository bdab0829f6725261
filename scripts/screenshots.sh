#!/usr/bin/env bash
# Regenerates the README's dashboard pictures, docs/img/{fleet,queue,tenants,decisions,audit}.png:
# starts `gpufed run` on the quickstart (127.0.0.1, a port of its own, a temporary state),
# opens each page at 1280x800 in Debian's headless Chromium with an admin token, saves
# the PNGs and stops the controller it started. Usage: scripts/screenshots.sh [BUILD_DIR]
# (default build; the gpufed binary must be built: scripts/build.sh BUILD_DIR -- gpufed).
# Needs chromium and node (GPUFED_TEST_DEPS=1 scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
gpufed=$build/controller/gpufed
[[ -x $gpufed ]] || { echo "screenshots: $gpufed is not built (scripts/build.sh $build -- gpufed)" >&2; exit 2; }
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || { echo "screenshots: chromium is missing (apt-get install chromium)" >&2; exit 2; }
modules=$(tests/browser/install-modules.sh)
GPUFED_BROWSER_MODULES=$modules timeout 300 node tests/browser/screenshots.mjs "$gpufed" "$PWD" docs/img

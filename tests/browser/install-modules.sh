#!/usr/bin/env bash
# Installs puppeteer-core as package-lock.json pins it into a cache folder
# (GPUFED_NPM_CACHE, default ~/.cache/gpufed-npm/browser) and prints that folder. Idempotent:
# a stamp holds the lockfile's hash, so a second run does nothing and works offline.
# Never downloads a browser: puppeteer-core has no download step (the tests use Debian's
# chromium). Used by run.sh, scripts/screenshots.sh and scripts/install-deps.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${GPUFED_NPM_CACHE:-$HOME/.cache/gpufed-npm}/browser
mkdir -p "$dir"
want=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
stamp=$dir/node_modules/.gpufed-lock.sha256
have() { (cd "$dir" && node -e 'require.resolve("puppeteer-core")') >/dev/null 2>&1; }
# Serialise concurrent installs (two test trees at once); flock is optional.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock"
  flock 9
fi
if [[ -f $stamp && $(cat "$stamp") == "$want" ]] && have; then
  echo "$dir"
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "install-modules: npm is missing" >&2; exit 1; }
cp "$here/package.json" "$here/package-lock.json" "$dir/"
echo "install-modules: npm ci in $dir" >&2
(cd "$dir" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >&2
have
echo "$want" >"$stamp"
echo "$dir"

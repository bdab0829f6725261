#!/usr/bin/env bash
# Fails (exit 1) when the repository's version sources disagree: VERSION at the root,
# debian/changelog's upstream version (its newest entry, without an epoch or a Debian
# revision) and, when present, the newest "## X.Y.Z" heading of CHANGELOG.md. Run by
# debian/rules before the package is built and by the package_version CTest.
# Usage: scripts/check-version.sh [REPO_ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fail() { echo "check-version: $*" >&2; exit 1; }

[[ -f $root/VERSION ]] || fail "no VERSION file in $root"
version=$(tr -d '[:space:]' <"$root/VERSION")
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+([~+.][0-9A-Za-z.~+]+)?$ ]] ||
  fail "VERSION holds '$version', not a version (X.Y.Z, optionally followed by ~rc1 or +something)"

# The newest entry's version: "gpufed (VERSION) DIST; urgency=..." on the first line.
# Read directly, so that the check needs no dpkg-dev.
[[ -f $root/debian/changelog ]] || fail "no debian/changelog in $root"
first=$(head -n 1 "$root/debian/changelog")
[[ $first =~ ^gpufed\ \(([^\)]+)\) ]] || fail "debian/changelog's first line is not 'gpufed (VERSION) ...': $first"
debian=${BASH_REMATCH[1]}
upstream=${debian#*:}      # epoch
upstream=${upstream%-*}    # Debian revision (the last '-' and what follows)
[[ $upstream == "$version" ]] ||
  fail "VERSION says $version but debian/changelog says $debian (upstream $upstream): add a debian/changelog entry (dch -v $version)"

if [[ -f $root/CHANGELOG.md ]]; then
  newest=$(grep -m 1 -E '^## [0-9]' "$root/CHANGELOG.md" | awk '{print $2}' || true)
  [[ -z $newest || $newest == "$version" ]] ||
    fail "VERSION says $version but CHANGELOG.md's newest release is $newest: add a section for $version"
fi
echo "check-version: $version (VERSION, debian/changelog $debian${newest:+, CHANGELOG.md})"

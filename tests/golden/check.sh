#!/usr/bin/env bash
# Usage: check.sh GPUFED_BINARY REPO_ROOT. Fails with a diff when output drifts.
set -euo pipefail
gpufed=$1; root=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/cases.sh"
cd "$root"
failed=0; passed=0
for case in "${golden_cases[@]}"; do
  file=${case%%|*}; args=${case#*|}
  # shellcheck disable=SC2086
  if diff -u "$here/$file" <("$gpufed" $args); then
    passed=$((passed + 1))
  else
    echo "golden mismatch: $file (gpufed $args)"; failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

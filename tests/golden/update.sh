#!/usr/bin/env bash
# Regenerates the golden files from a built gpufed. Usage: update.sh [GPUFED_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gpufed=${1:-$root/build/controller/gpufed}
source "$here/cases.sh"
cd "$root"
for case in "${golden_cases[@]}"; do
  file=${case%%|*}; args=${case#*|}
  # shellcheck disable=SC2086
  "$gpufed" $args > "$here/$file"
done

#!/usr/bin/env bash
# Policy-authoring fixtures (issue 17): each folder here is a small policy repository
# with `args` (the gpufed command line, run inside the folder) and `expected` (its exit
# status, stdout and stderr, revisions written as REV). The outputs are compared exactly,
# so positions and messages are pinned.
#   check.sh GPUFED_BINARY            compare every case
#   check.sh GPUFED_BINARY --update   rewrite every `expected` (review the diff)
set -uo pipefail
gpufed=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
passed=0; failed=0
run_case() {  # run_case DIR -> the case's output in the `expected` format
  local dir=$1 out err rc
  out=$(mktemp); err=$(mktemp)
  # shellcheck disable=SC2046
  (cd "$dir" && eval "\"$gpufed\" $(cat args)") >"$out" 2>"$err"
  rc=$?
  echo "exit $rc"
  echo "--- stdout"
  sed -E 's/sha256:[0-9a-f]{64}/REV/g' "$out"
  echo "--- stderr"
  sed -E 's/sha256:[0-9a-f]{64}/REV/g' "$err"
  rm -f "$out" "$err"
}
for dir in "$here"/*/; do
  dir=${dir%/}; name=$(basename "$dir")
  [[ -f $dir/args ]] || continue
  if [[ $update == --update ]]; then
    run_case "$dir" >"$dir/expected"; echo "updated $name"; continue
  fi
  if diff -u "$dir/expected" <(run_case "$dir"); then
    passed=$((passed + 1)); echo "ok   $name"
  else
    failed=$((failed + 1)); echo "FAIL $name (gpufed $(cat "$dir/args"))"
  fi
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]

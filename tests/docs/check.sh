#!/usr/bin/env bash
# docs/policy-reference.md must be exactly `gpufed docs rules`, a blank line and
# `gpufed docs lua`: the reference is generated from the tables the loader checks rules
# against, and this test fails when the file drifts from them.
#   check.sh GPUFED_BINARY REPO_ROOT            compare (exit 1 with a diff on drift)
#   check.sh GPUFED_BINARY REPO_ROOT --update   rewrite the file
set -euo pipefail
gpufed=$1; root=$2
file=$root/docs/policy-reference.md
generate() { "$gpufed" docs rules && echo && "$gpufed" docs lua; }
if [[ ${3:-} == --update ]]; then
  generate >"$file"
  echo "wrote $file"
  exit 0
fi
if ! diff -u "$file" <(generate); then
  echo "docs/policy-reference.md differs from gpufed docs rules + gpufed docs lua;"
  echo "regenerate it with: tests/docs/check.sh build/controller/gpufed . --update"
  exit 1
fi
echo "docs/policy-reference.md matches gpufed docs rules + gpufed docs lua"

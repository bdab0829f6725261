#!/usr/bin/env bash
# The generated references must equal what the binary prints:
# - docs/policy-reference.md: `gpufed docs rules`, a blank line and `gpufed docs lua`
#   (from the tables the loader checks rules against);
# - docs/field-reference.md: `gpufed docs fields` (from the JSON Schemas).
# The test fails when a file drifts from its source.
#   check.sh GPUFED_BINARY REPO_ROOT            compare (exit 1 with a diff on drift)
#   check.sh GPUFED_BINARY REPO_ROOT --update   rewrite the files
set -euo pipefail
gpufed=$1; root=$2
policy() { "$gpufed" docs rules && echo && "$gpufed" docs lua; }
fields() { "$gpufed" docs fields; }
status=0
for doc in policy fields; do
  name=${doc%s}-reference.md   # policy-reference.md, field-reference.md
  file=$root/docs/$name
  if [[ ${3:-} == --update ]]; then
    "$doc" >"$file"
    echo "wrote $file"
    continue
  fi
  if ! diff -u "$file" <("$doc"); then
    echo "docs/$name differs from what gpufed docs prints;"
    echo "regenerate it with: tests/docs/check.sh build/controller/gpufed . --update"
    status=1
  else
    echo "docs/$name matches gpufed docs"
  fi
done
exit $status

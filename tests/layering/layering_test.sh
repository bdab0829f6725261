#!/usr/bin/env bash
# The layering check (scripts/check-layers.py) on the real tree, and on copies of it
# with a planted forbidden include and a planted forbidden CMake link, which it must
# refuse, naming the file, the line and the rule.
# Usage: layering_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
check=$src/scripts/check-layers.py
fail() { echo "layering_test: FAILED: $*" >&2; exit 1; }

python3 "$check" "$src" || fail "the tree breaks its own layers.txt (above)"

# A copy of what the check reads: layers.txt and the modules' sources and CMake files.
plant() {
  rm -rf "$work"
  mkdir -p "$work"
  cp "$src/layers.txt" "$work/"
  (cd "$src" && find controller connectors policies \( -name '*.h' -o -name '*.cc' -o -name CMakeLists.txt \) -print0 |
     tar --null -T - -cf -) | tar -xf - -C "$work"
}

# refused WHAT PATTERN: the check on the planted copy exits 1 and names the violation.
refused() {
  local rc=0 out
  out=$(python3 "$check" "$work") || rc=$?
  ((rc == 1)) || fail "$1 passed the check (exit $rc): $out"
  grep -q -- "$2" <<<"$out" || fail "$1 was not named with its file, line and rule: $out"
}

# The model (below the store) including the store.
plant
sed -i '0,/^#include "/s//#include "controller\/store\/store.h"\n#include "/' "$work/controller/model/model.cc"
refused "an include of controller/store from controller/model" \
  '^controller/model/model.cc:[0-9]*: includes controller/store/store.h (controller/store), but layers.txt lets controller/model use only: controller/common$'

# The placer linking a connector.
plant
sed -i '0,/DEPS /s//DEPS gpufed_connector_sim /' "$work/controller/placement/CMakeLists.txt"
refused "a CMake link from controller/placement to connectors/sim" \
  '^controller/placement/CMakeLists.txt:[0-9]*: gpufed_placement links gpufed_connector_sim (connectors/sim)'

# A malformed layers.txt is an error of its own, not a pass.
plant
echo "controller/model: controller/nowhere" >>"$work/layers.txt"
set +e
python3 "$check" "$work" >/dev/null 2>&1
rc=$?
set -e
((rc != 0)) || fail "a layers.txt naming an unknown module passed"
rm -rf "$work"
echo "layering_test: ok (the tree passes; a planted include and a planted link are refused)"

#!/usr/bin/env bash
# scripts/lint.sh on a planted tree: a copy of the script and the root's .clang-format and
# .clang-tidy, with small C++ files of its own and their compile commands, in a git
# repository made here. The lint must refuse a 200-line function, a misformatted file and
# a finding in a changed header, naming file and line; pass clean files; take exactly the
# files changed since .ci/lint-base (committed, modified, new; not deleted ones, not
# other folders or kinds); and fail, not pass, without clang-tidy or a known base.
# Usage: lint_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2
fail() { echo "lint_test: FAILED: $*" >&2; exit 1; }
skip() {
  if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then
    fail "$* (CI=true or GPUFED_REQUIRE_ALL=1: dependencies are required)"
  fi
  echo "lint_test: SKIPPED: $*"
  exit 77
}
for tool in clang-format-19 clang-tidy-19 git; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
done
unset GIT_DIR GIT_WORK_TREE GPUFED_LINT_BASE GPUFED_LINT_BUILD_DIR GPUFED_CLANG_FORMAT GPUFED_CLANG_TIDY

rm -rf "$work"
mkdir -p "$work/scripts" "$work/.ci" "$work/build" "$work/controller/planted" "$work/docs"
cp "$src/.clang-format" "$src/.clang-tidy" "$work/"
cp "$src/scripts/lint.sh" "$work/scripts/"
cd "$work"
p=controller/planted

# A function of `lines` statements, formatted as .clang-format wants.
function_of() {
  local name=$1 lines=$2
  echo "int $name(int x) {"
  for ((i = 0; i < lines; ++i)); do echo "  x += $i;"; done
  echo "  return x;"
  echo "}"
}
module() {  # module NAME BODY...: a namespaced file of its own
  printf '#include "controller/planted/planted.h"\n\nnamespace planted {\n\n'
  shift
  printf '%s\n' "$@"
  printf '\n}  // namespace planted\n'
}
cat >$p/planted.h <<'H'
#pragma once

namespace planted {

int Clean(int x);

}  // namespace planted
H
module clean "int Clean(int x) { return x + 1; }" >$p/clean.cc
module short "$(function_of Short 20)" >$p/short.cc
module gone "int Gone(int x) { return x; }" >$p/gone.cc
module other "int Other(int x) { return x * 2; }" >$p/other.cc
printf '[\n' >build/compile_commands.json
for f in clean short gone other long; do
  printf '{"directory": "%s", "file": "%s/%s/%s.cc", "command": "/usr/bin/c++ -std=c++20 -I%s -c %s/%s.cc"},\n' \
    "$work" "$work" "$p" "$f" "$work" "$p" "$f" >>build/compile_commands.json
done
sed -i '$ s/},$/}/' build/compile_commands.json
printf ']\n' >>build/compile_commands.json

git init -q .
git add -A
git -c user.name=lint-test -c user.email=lint-test@localhost commit -q -m base
git rev-parse HEAD >.ci/lint-base
git add .ci/lint-base
git -c user.name=lint-test -c user.email=lint-test@localhost commit -q -m "set the lint base"

# lint ARGS...: runs the planted lint, its output in $out and its status in $rc.
lint() {
  rc=0
  out=$(scripts/lint.sh "$@" 2>&1) || rc=$?
}
expect() {  # expect STATUS WHAT: the last lint's status
  ((rc == $1)) || fail "$2: exit $rc, expected $1: $out"
}
names() {  # names PATTERN WHAT: the last lint's output has a line matching PATTERN
  grep -qE -- "$1" <<<"$out" || fail "$2 was not named (no line matching '$1'): $out"
}

# Clean files pass.
lint $p/clean.cc $p/short.cc $p/planted.h
expect 0 "clean files"

# A 200-line function is refused with its file, line and the check.
module long "$(function_of Long 200)" >$p/long.cc
lint $p/long.cc
expect 1 "a 200-line function"
names "^$p/long\\.cc:5:[0-9]+: .*function 'Long' exceeds .*\\[readability-function-size" "the 200-line function"
names '^lint: FAILED: 1 finding\(s\) \(0 clang-format, 1 clang-tidy\) in the 1 file\(s\) linted$' "the summary"

# A misformatted file is refused with its file and the first line that differs.
module other "int Other(int x) { return x * 2; }" "int  Misformatted( int x ){return x;}" >$p/other.cc
lint $p/other.cc
expect 1 "a misformatted file"
names "^$p/other\\.cc:6:[0-9]+: error: not formatted as \\.clang-format says .*\\[clang-format\\]$" "the misformatted line"
git checkout -q -- $p/other.cc

# A finding in a header is this change's only when the header is one of its files.
printf '#pragma once\n\nnamespace planted {\n\n%s\n\n}  // namespace planted\n' \
  "inline $(function_of Inline 160)" >$p/planted.h
clang-format-19 -i $p/planted.h
lint $p/clean.cc
expect 0 "a .cc whose unchanged header has a finding"
lint $p/clean.cc $p/other.cc $p/planted.h
expect 1 "a changed header with a 160-line function"
names "^$p/planted\\.h:[0-9]+:[0-9]+: .*function 'Inline' exceeds .*\\[readability-function-size" "the header's function"
names '^lint: FAILED: 1 finding\(s\) \(0 clang-format, 1 clang-tidy\) in the 3 file\(s\) linted$' \
  "the header's finding once (not once per file that includes it)"
git checkout -q -- $p/planted.h

# Without files: what changed since .ci/lint-base. Committed (short.cc), modified
# (other.cc), new (long.cc); not the deleted gone.cc, nor files of other folders or kinds.
module short "$(function_of Short 21)" >$p/short.cc
git -c user.name=lint-test -c user.email=lint-test@localhost commit -q -am "a change"
module other "int Other(int x) { return x * 2; }" "int  Misformatted( int x ){return x;}" >$p/other.cc
git rm -q $p/gone.cc
cp $p/long.cc docs/long.cc
echo "not C++" >$p/notes.txt
lint
expect 1 "the changed files"
names "^lint: 3 file\\(s\\): $p/long\\.cc $p/other\\.cc $p/short\\.cc$" "exactly the changed source files"
names '^lint: FAILED: 2 finding\(s\) \(1 clang-format, 1 clang-tidy\) in the 3 file\(s\) linted$' "the summary of the changed files"

# GPUFED_LINT_BASE overrides the file; a base the clone does not have is an error.
GPUFED_LINT_BASE=HEAD lint
names "^lint: 2 file\\(s\\): $p/long\\.cc $p/other\\.cc$" "the files changed since GPUFED_LINT_BASE"
GPUFED_LINT_BASE=0123456789abcdef0123456789abcdef01234567 lint
expect 2 "an unknown base"

# No clang-tidy: an error, never a pass.
GPUFED_CLANG_TIDY=clang-tidy-missing lint $p/clean.cc
expect 2 "a missing clang-tidy"
names "clang-tidy-missing is not installed" "the missing tool"

cd /
rm -rf "$work"
echo "lint_test: ok (clean files pass; a long function, a misformatted file and a changed header's finding are refused; the changed files are linted)"

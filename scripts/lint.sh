#!/usr/bin/env bash
# Lints the C++ files a change touches: clang-format-19 (--dry-run -Werror, the root's
# .clang-format) and clang-tidy-19 (the root's .clang-tidy, with the compile commands of
# a configured build tree). test.sh's `lint` stage runs it after the build.
#
#   scripts/lint.sh [FILE...]
#
# Without FILE: the .cc and .h files under controller/ connectors/ policies/ fuzz/ bench/
# tests/ that differ between the base commit and the working tree (committed since the
# base, staged, unstaged, or new and not ignored); deleted files are skipped. With FILE:
# those files, whatever git says (tests/lint plants files this way).
#
# The base: GPUFED_LINT_BASE if set, else the commit in .ci/lint-base, else HEAD~1.
# .ci/lint-base holds the commit of the last reviewed landing on main, and whoever lands
# a change moves it to the landing before theirs. Why a checked-in commit: CI runs on a
# clean clone of main itself, where HEAD already is the change; a merge-base with main
# is HEAD (nothing to lint), HEAD~1 covers only the last commit of a change made of
# several, and remote refs and CI variables differ between CI systems. A commit in the
# tree gives the same file list in any full clone, on any machine. A base the clone
# does not have (a shallow clone) is an error, not a smaller lint.
#
# Findings are printed as FILE:LINE:COL: MESSAGE [check], then a summary. Findings in a
# header are reported when that header is itself one of the files (clang-tidy reaches
# headers through the .cc files that include them); an unchanged header's findings are
# not this change's. Exit status: 0 clean, 1 findings, 2 a missing tool, build tree or
# base (never a silent pass).
#
# Environment: GPUFED_LINT_BASE (see above), GPUFED_LINT_BUILD_DIR (default build; needs
# compile_commands.json, CMAKE_EXPORT_COMPILE_COMMANDS is on in CMakeLists.txt),
# GPUFED_LINT_JOBS (parallel clang-tidy processes, default 2), GPUFED_CLANG_FORMAT and
# GPUFED_CLANG_TIDY (the tools, default clang-format-19 and clang-tidy-19).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=${GPUFED_LINT_BUILD_DIR:-build}
jobs=${GPUFED_LINT_JOBS:-2}
source_dirs=(controller connectors policies fuzz bench tests)

die() {
  echo "lint: $*" >&2
  exit 2
}

clang_format=${GPUFED_CLANG_FORMAT:-clang-format-19}
clang_tidy=${GPUFED_CLANG_TIDY:-clang-tidy-19}
for tool in "$clang_format" "$clang_tidy"; do
  command -v "$tool" >/dev/null ||
    die "$tool is not installed (GPUFED_TEST_DEPS=1 scripts/install-deps.sh installs it)"
done

# The files to lint, relative to the root, one per line.
list_changed() {
  local base=${GPUFED_LINT_BASE:-} from=GPUFED_LINT_BASE
  if [[ -z $base && -f .ci/lint-base ]]; then
    base=$(grep -m1 -vE '^[[:space:]]*(#|$)' .ci/lint-base | tr -d '[:space:]' || true) from=.ci/lint-base
  fi
  if [[ -z $base ]]; then base=HEAD~1 from="no .ci/lint-base"; fi
  git rev-parse --verify --quiet "$base^{commit}" >/dev/null ||
    die "base commit '$base' ($from) is not in this clone (a shallow clone? fetch its history, or set GPUFED_LINT_BASE)"
  echo "lint: files changed since $(git rev-parse --short "$base^{commit}") ($from: $base)" >&2
  {
    git diff --name-only --diff-filter=d "$base" -- "${source_dirs[@]}"
    git ls-files --others --exclude-standard -- "${source_dirs[@]}"
  } | { grep -E '\.(cc|h)$' || true; } | sort -u
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

files=()
if (($#)); then
  for f in "$@"; do
    f=${f#./}
    [[ -f $f ]] || die "$f: no such file"
    files+=("$f")
  done
else
  list_changed >"$out/files" || exit  # its own `die`: a missing base is no empty list
  mapfile -t files <"$out/files"
fi
if ((${#files[@]} == 0)); then
  echo "lint: no C++ files to lint"
  exit 0
fi
echo "lint: ${#files[@]} file(s): ${files[*]}"

# clang-format: a violation is reported at its first line; the file's other violations
# follow from running clang-format-19 -i on it.
format_findings=0
: >"$out/findings"
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run -Werror "$f" >/dev/null 2>"$out/format"; then
    line=$(grep -m1 -E '^[^ ]+:[0-9]+:[0-9]+: ' "$out/format" | cut -d: -f2,3 || true)
    echo "$f:${line:-1:1}: error: not formatted as .clang-format says ($clang_format -i $f) [clang-format]" >>"$out/findings"
    format_findings=$((format_findings + 1))
  fi
done

# clang-tidy: one process per file, $jobs at a time. Only the listed headers' findings
# are shown (see the header comment); a file that does not compile is a finding.
[[ -f $build_dir/compile_commands.json ]] ||
  die "$build_dir/compile_commands.json is missing: configure and build first (scripts/build.sh $build_dir)"
header_regex='^$'
headers=()
for f in "${files[@]}"; do
  if [[ $f == *.h ]]; then headers+=("$(sed -E 's/[.+*?^$()|{}]/\\&/g' <<<"$root/$f")"); fi
done
if ((${#headers[@]})); then header_regex="^($(IFS='|'; echo "${headers[*]}"))\$"; fi
export build_dir header_regex out clang_tidy
tidy_one() {
  local f=$1 log
  log=$out/tidy.$(tr '/' '_' <<<"$f")
  # GCC's warning flags in the compile commands that clang does not know are not findings.
  # Nor is clang's deprecation of libstdc++ 12's own internals (get_temporary_buffer,
  # reached through std::stable_sort in C++20): GCC's -Werror build already fails on any
  # deprecated declaration our code uses.
  if ! "$clang_tidy" -p "$build_dir" --quiet --header-filter="$header_regex" \
      --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-deprecated-declarations "$f" >"$log" 2>&1; then
    echo "$f" >"$log.failed"
  fi
}
export -f tidy_one
printf '%s\0' "${files[@]}" | xargs -0 -n1 -P "$jobs" bash -c 'tidy_one "$1"' _

# Each finding once (a header's comes from every listed .cc that includes it), its path
# made relative to the root. Notes (a function's line count, macro expansions) are left
# out: the check's name and clang-tidy-19 on the file give them.
shopt -s nullglob
: >"$out/tidy"
for log in "$out"/tidy.*; do
  [[ $log == *.failed ]] && continue
  found=$(grep -E '^[^ :]+:[0-9]+:[0-9]+: (warning|error): ' "$log" | sed "s|^$root/||" || true)
  if [[ -n $found ]]; then
    echo "$found" >>"$out/tidy"
  elif [[ -f $log.failed ]]; then
    echo "$(head -n1 "$log.failed"):1:1: error: $clang_tidy failed: $(tail -n1 "$log") [clang-tidy]" >>"$out/tidy"
  fi
done
tidy_findings=$(sort -u "$out/tidy" | wc -l)

total=$((format_findings + tidy_findings))
if ((total)); then
  sort -u "$out/findings" "$out/tidy"
  echo "lint: FAILED: $total finding(s) ($format_findings clang-format, $tidy_findings clang-tidy) in the ${#files[@]} file(s) linted" >&2
  exit 1
fi
echo "lint: ok (${#files[@]} file(s), $clang_format and $clang_tidy clean)"

#!/usr/bin/env bash
# Installs what the tests need, builds and runs the whole test suite: an optimised build
# runs everything (unit, integration against real rsyslog and Slurm, whole-loop and crash
# runs, golden, schema conformance, benchmark and replay smoke tests); then a Debug build
# under AddressSanitizer and UndefinedBehaviorSanitizer runs every test except
# tests/integration (kept lean so CI stays within its time budget on 2 cores); last, a short
# run of every libFuzzer target (scripts/fuzz.sh).
#
# Skips: a test that cannot start a real dependency (rsyslog, Slurm, ajv, ...) fails under
# CI=true or GPUFED_REQUIRE_ALL=1, and may skip otherwise. The last line gives the number
# of skipped tests, with each one's reason above it; under CI it must be 0.
set -euo pipefail
cd "$(dirname "$0")/.."
GPUFED_TEST_DEPS=1 scripts/install-deps.sh
jobs=$(nproc)
require_all=0
[[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]] && require_all=1
skip_report=$(mktemp)
trap 'rm -f "$skip_report"' EXIT

# run_ctest DIR [ctest args...]: runs one build's tests and appends a line per skipped
# test (CTest "Skipped"/"Not Run", or a GoogleTest case marked SKIPPED) with its reason.
run_ctest() {
  local dir=$1; shift
  local rc=0
  ctest --test-dir "$dir" --output-on-failure -j "$jobs" "$@" | tee "$dir/ctest.out" || rc=$?
  local log="$dir/Testing/Temporary/LastTest.log"
  grep -E '\*\*\*Skipped|\*\*\*Not Run|Not Run \(Disabled\)' "$dir/ctest.out" | { while read -r line; do
    local name reason
    name=$(sed -E 's/.*Test +#[0-9]+: ([^ ]+).*/\1/' <<<"$line")
    reason=$(awk -v t="$name" '$0 ~ "^[0-9]+/[0-9]+ Test: "t"$" {on=1} on && /SKIPPED: / {sub(/.*SKIPPED: /, ""); print; exit}
                   on && /^<end of output>/ {exit}' "$log" 2>/dev/null)
    echo "$dir: $name: ${reason:-no reason printed}" >>"$skip_report"
  done; } || true
  grep -h -E '^\[  SKIPPED \] [^ ]+\.[^ ]+ \(' "$log" 2>/dev/null | sed -E "s|^\[  SKIPPED \] |$dir: |" >>"$skip_report" || true
  return "$rc"
}

status=0
scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
run_ctest build || status=$?

if [[ $status == 0 && "${GPUFED_SANITIZERS:-1}" == 1 ]]; then
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFED_SANITIZE=ON -DGPUFED_BUILD_BENCH=OFF \
    -DGPUFED_BUILD_INTEGRATION_TESTS=OFF
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest build-asan -LE no-sanitizer || status=$?
fi

# A short run of every libFuzzer target (fuzz/; clang-19 with ASan/UBSan in build-fuzz) on
# the checked-in corpus: any crash, leak, timeout or out-of-memory fails CI.
# GPUFED_FUZZ_RUNS inputs per target (default 20000; 0 skips the stage) from the fixed
# GPUFED_FUZZ_SEED (default 1), not a time: the stage does the same amount of work on a
# slow machine as on a fast one, and mutates from the same seed. (Not bit-for-bit the
# same inputs: Lua seeds its string hashes from the clock and addresses, which moves
# coverage.) Longer, time-bounded campaigns: scripts/fuzz.sh TARGET SECONDS
# (bench/README.md, "Fuzzing").
fuzz_runs=${GPUFED_FUZZ_RUNS:-20000}
if [[ $status == 0 && $fuzz_runs != 0 ]]; then
  GPUFED_FUZZ_RUNS=$fuzz_runs scripts/fuzz.sh || status=$?
fi

skipped=$(wc -l <"$skip_report")
if ((skipped)); then
  echo "skipped tests and why:"
  sed 's/^/  /' "$skip_report"
fi
echo "test.sh: $skipped tests skipped"
if ((require_all && skipped)); then
  echo "test.sh: FAILED: CI=true or GPUFED_REQUIRE_ALL=1 requires every test to run" >&2
  exit 1
fi
exit "$status"

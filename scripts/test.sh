#!/usr/bin/env bash
# Installs what the tests need, builds, lints the C++ files the change touches
# (scripts/lint.sh) and runs the whole test suite: an optimised build runs everything
# (unit, integration against real rsyslog and Slurm, whole-loop and crash runs, golden,
# schema conformance, benchmark and replay smoke tests); then a Debug build
# under AddressSanitizer and UndefinedBehaviorSanitizer runs every test except
# tests/integration (kept lean so CI stays within its time budget on 2 cores); last, a short
# run of every libFuzzer target (scripts/fuzz.sh).
#
# Stages: each one says when it starts; the first that fails is named with the command,
# its exit status and the last lines of its log (build-logs/test-STAGE.log), and the script
# exits non-zero. Every stage's output is also kept in its log.
#
# Skips: a test that cannot start a real dependency (rsyslog, Slurm, ajv, ...) fails under
# CI=true or GPUFED_REQUIRE_ALL=1, and may skip otherwise. The last line gives the number
# of skipped tests, with each one's reason above it; under CI it must be 0.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
require_all=0
if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then require_all=1; fi
logs=$PWD/build-logs
mkdir -p "$logs"
skip_report=$(mktemp)
trap 'rm -f "$skip_report"' EXIT

stage=""
stage_log=/dev/null
stage_started=0
# begin_stage NAME: the stage that the following commands belong to.
begin_stage() {
  stage=$1
  stage_log=$logs/test-$1.log
  : >"$stage_log"
  stage_started=$SECONDS
  echo "test.sh: stage '$stage' started ($(date -u +%H:%M:%S))"
}
end_stage() { echo "test.sh: stage '$stage' passed in $((SECONDS - stage_started)) s"; }
# fail STATUS COMMAND...: names the stage, the command and its status, shows the end of
# the stage's log and exits with STATUS (1 if it was 0).
fail() {
  local rc=$1; shift
  {
    echo "test.sh: FAILED in stage '$stage': '$*' exited with status $rc"
    ((rc == 127)) && echo "test.sh: (status 127: a command was not found; see the log lines below)"
    if [[ -s $stage_log ]]; then
      echo "test.sh: the last lines of $stage_log:"
      tail -n 40 "$stage_log" | sed 's/^/  | /'
    fi
  } >&2
  exit $((rc == 0 ? 1 : rc))
}
# run COMMAND...: runs a step of the current stage, its output shown and kept in the
# stage's log; a failure ends the script through `fail`.
run() {
  local rc=0
  "$@" > >(tee -a "$stage_log") 2> >(tee -a "$stage_log" >&2) || rc=$?
  wait  # the tee processes have written everything before anything else is printed
  ((rc == 0)) || fail "$rc" "$@"
}
# A command that fails outside `run` (this script's own plumbing) is named too.
trap 'rc=$?; fail "$rc" "$BASH_COMMAND"' ERR

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

begin_stage deps
run env GPUFED_TEST_DEPS=1 scripts/install-deps.sh
end_stage

begin_stage build
run scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
end_stage
# clang-format-19 and clang-tidy-19 on the C++ files changed since .ci/lint-base
# (scripts/lint.sh), with the compile commands the build just wrote. A missing tool or
# base fails the stage (lint.sh exits 2), it never passes for having linted nothing.
begin_stage lint
run scripts/lint.sh
end_stage
begin_stage tests
run run_ctest build
end_stage

if [[ "${GPUFED_SANITIZERS:-1}" == 1 ]]; then
  begin_stage asan-build
  run scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFED_SANITIZE=ON -DGPUFED_BUILD_BENCH=OFF \
    -DGPUFED_BUILD_INTEGRATION_TESTS=OFF
  end_stage
  begin_stage asan-tests
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 run run_ctest build-asan -LE no-sanitizer
  end_stage
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
if [[ $fuzz_runs != 0 ]]; then
  begin_stage fuzz
  run env GPUFED_FUZZ_RUNS="$fuzz_runs" scripts/fuzz.sh
  end_stage
fi

# What gpufed ships (tests/package/): the Debian package built, installed, run as its
# service user and purged in a throwaway Debian 12 chroot, then the container image made
# from it and smoke-tested with buildah (tests/package/in-chroot.sh; root). 0 skips it.
if [[ "${GPUFED_PACKAGE_TESTS:-1}" == 1 ]]; then
  begin_stage package
  run tests/package/in-chroot.sh
  end_stage
fi

begin_stage skips
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

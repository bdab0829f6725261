#!/usr/bin/env bash
# Installs what the tests need, builds and runs the whole test suite: an optimised build
# runs everything (unit, integration against real rsyslog and Slurm, whole-loop and crash
# runs, golden, schema conformance, benchmark and replay smoke tests); then a Debug build
# under AddressSanitizer and UndefinedBehaviorSanitizer runs every test except
# tests/integration (kept lean so CI stays within its time budget on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
GPUFED_TEST_DEPS=1 scripts/install-deps.sh
jobs=$(nproc)

scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo
ctest --test-dir build --output-on-failure -j "$jobs"

if [[ "${GPUFED_SANITIZERS:-1}" == 1 ]]; then
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFED_SANITIZE=ON -DGPUFED_BUILD_BENCH=OFF \
    -DGPUFED_BUILD_INTEGRATION_TESTS=OFF
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE no-sanitizer
fi

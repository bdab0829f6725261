#!/usr/bin/env bash
# CTest's bench_smoke: every benchmark once, so none of them rots. Google Benchmark 1.7
# reports a benchmark that called SkipWithError as "ERROR OCCURRED" and still exits 0, so
# this wrapper decides: an error whose message says a dependency is unavailable is a skip
# (exit 77, reason printed) outside CI, and a failure under CI=true or
# GPUFED_REQUIRE_ALL=1; any other error is always a failure.
#   smoke.sh GPUFED_BENCH [benchmark flags...]
set -uo pipefail
bench=$1; shift
out=$(mktemp); trap 'rm -f "$out"' EXIT
"$bench" "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
[[ $rc == 0 ]] || { echo "bench_smoke: gpufed-bench exited $rc"; exit 1; }
errors=$(grep 'ERROR OCCURRED' "$out" || true)
[[ -z $errors ]] && exit 0
if grep -qv 'unavailable' <<<"$errors"; then
  echo "bench_smoke: FAILED: a benchmark reported an error:"; echo "$errors"; exit 1
fi
if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then
  echo "bench_smoke: FAILED: dependencies are required (CI=true or GPUFED_REQUIRE_ALL=1):"; echo "$errors"; exit 1
fi
echo "bench_smoke: SKIPPED: $(sed -E "s/.*ERROR OCCURRED: *//" <<<"$errors" | sort -u | paste -sd ';')"
exit 77

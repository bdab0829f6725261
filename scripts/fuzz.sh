#!/usr/bin/env bash
# Builds and runs gpufed's libFuzzer targets (fuzz/, see fuzz/README.md).
#
#   scripts/fuzz.sh --list                  the targets, one per line
#   scripts/fuzz.sh [TARGET] [SECONDS]      fuzz TARGET (default: every target, one after
#                                           the other) for SECONDS each (default 60, or
#                                           $GPUFED_FUZZ_SECONDS)
#   scripts/fuzz.sh --merge [TARGET] [SECONDS]   the same, then folds inputs that add
#                                           coverage back into fuzz/corpus/TARGET
#   GPUFED_FUZZ_RUNS=N [GPUFED_FUZZ_SEED=S] scripts/fuzz.sh
#                                           N inputs per target from seed S (default 1)
#                                           instead of a time: the same work on every
#                                           machine (CI's stage, scripts/test.sh)
#
# Installs what is missing (clang-19, its fuzzer runtime, llvm-19's symbolizer), builds
# the fuzz targets and every gpufed library (the libraries are where clang's
# -Wthread-safety checks the lock annotations: a violation fails the build) in
# $GPUFED_FUZZ_BUILD_DIR (default build-fuzz: clang, ASan, UBSan). Each run writes new
# inputs to a scratch folder and reads the checked-in corpus read-only, so fuzz/corpus
# changes only with --merge. Prints exec/s and executions per target; exits 1 on any
# finding (crash, leak, timeout, out of memory) after printing the artifact and the
# command that reproduces it.
set -euo pipefail
cd "$(dirname "$0")/.."

targets() { for f in fuzz/fuzz_*.cc; do f=${f#fuzz/fuzz_}; echo "${f%.cc}"; done; }

merge=0
args=()
for a in "$@"; do
  case $a in
    --list) targets; exit 0 ;;
    --merge) merge=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) args+=("$a") ;;
  esac
done
selected=$(targets)
seconds=${GPUFED_FUZZ_SECONDS:-60}
runs=${GPUFED_FUZZ_RUNS:-}
seed=${GPUFED_FUZZ_SEED:-1}
[[ -z $runs || $runs =~ ^[0-9]+$ ]] || { echo "fuzz.sh: GPUFED_FUZZ_RUNS must be a whole number, not '$runs'" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ ]] || { echo "fuzz.sh: GPUFED_FUZZ_SEED must be a whole number, not '$seed'" >&2; exit 2; }
if ((${#args[@]} >= 1)); then
  if ! targets | grep -qx -- "${args[0]}"; then
    echo "fuzz.sh: unknown target '${args[0]}'; targets:" >&2
    targets | sed 's/^/  /' >&2
    exit 2
  fi
  selected=${args[0]}
fi
((${#args[@]} >= 2)) && seconds=${args[1]}
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2; }

GPUFED_FUZZ_DEPS=1 scripts/install-deps.sh
dir=${GPUFED_FUZZ_BUILD_DIR:-build-fuzz}
# The compiler is fixed at a build dir's first configure: clang-19 for this one.
if [[ ! -f $dir/CMakeCache.txt ]]; then
  CC=clang-19 CXX=clang++-19 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUFED_FUZZ=ON \
    -DGPUFED_BUILD_TESTS=OFF -DGPUFED_BUILD_BENCH=OFF -DGPUFED_BUILD_INTEGRATION_TESTS=OFF >/dev/null
fi
# gpufed_libraries: every library, compiled by clang with -Wthread-safety -Werror
# (fuzz/CMakeLists.txt), also those no target links.
build_targets=(gpufed_libraries)
for t in $selected; do build_targets+=("fuzz_$t"); done
scripts/build.sh "$dir" -- "${build_targets[@]}"

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer-19 || true)}
# malloc_context_size=0: no stack is unwound per allocation (35-50 % more executions on
# the loader and audit targets); a finding's allocation stacks come back when its input
# is run again with ASAN_OPTIONS=detect_leaks=1 (fuzz/README.md).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:malloc_context_size=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
mkdir -p "$dir/fuzz-logs"
status=0
printf '%-16s %10s %14s %8s %s\n' target exec/s executions rss_mb result
for t in $selected; do
  bin=$dir/fuzz/fuzz_$t
  scratch=$(mktemp -d)
  artifacts=$dir/fuzz-artifacts/$t
  mkdir -p "$artifacts"
  log=$dir/fuzz-logs/$t.log
  dict=()
  [[ -f fuzz/dict/$t.dict ]] && dict=(-dict="fuzz/dict/$t.dict")
  rc=0
  # One worker: the machine has 2 cores. -timeout: one input slower than 10 s is a finding.
  budget=(-max_total_time="$seconds")
  [[ -n $runs ]] && budget=(-runs="$runs" -seed="$seed")
  "$bin" "${budget[@]}" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" "${dict[@]}" "$scratch" "fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  if ((rc == 0)); then
    printf '%-16s %10s %14s %8s %s\n' "$t" "${rate:-?}" "${execs:-?}" "${rss:-?}" ok
    if ((merge)); then
      "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 "fuzz/corpus/$t" "$scratch" >>"$log" 2>&1
      echo "  merged: fuzz/corpus/$t now holds $(ls "fuzz/corpus/$t" | wc -l) inputs"
    fi
  else
    status=1
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    printf '%-16s %10s %14s %8s %s\n' "$t" "${rate:-?}" "${execs:-?}" "${rss:-?}" "FINDING (exit $rc)"
    grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|==ERROR' "$log" | sed 's/^/  /' || true
    echo "  log:       $log"
    echo "  artifact:  ${artifact:-none written}"
    # The innermost frames of gpufed's own code, and the input itself when it is small:
    # a CI log is often all there is to reproduce a finding from.
    grep -E '^ +#[0-9]+ .* in gpufed::' "$log" | head -6 | sed -E 's/^ +(#[0-9]+) 0x[0-9a-f]+ in /  \1 /' | cut -c1-220 || true
    if [[ -n $artifact ]]; then
      echo "  reproduce: $bin $artifact"
      if (($(stat -c %s "$artifact") <= 8192)); then
        echo "  input (base64; decode with base64 -d > crash): $(base64 -w0 "$artifact")"
      fi
    fi
  fi
  rm -rf "$scratch"
done
exit "$status"

#!/usr/bin/env bash
# clang++-19 with the thread-safety flags of the clang build (the arguments after WORK_DIR,
# CMake's GPUFED_THREAD_SAFETY_FLAGS) and -Werror on small files that include
# controller/common/mutex.h: each planted violation must fail naming its line and the
# analysis' message; code that keeps its locks (scoped locks, a Locked helper, a CondVar
# wait loop, relocking, FairMutex) must compile, with clang and with g++ (where the
# attributes expand to nothing).
# Usage: thread_safety_test.sh SOURCE_DIR WORK_DIR FLAG...
set -euo pipefail
src=$1
work=$2
shift 2
flags=("$@")
fail() { echo "thread_safety_test: FAILED: $*" >&2; exit 1; }
skip() {
  if [[ ${CI:-} == true || ${GPUFED_REQUIRE_ALL:-0} == 1 ]]; then
    fail "$* (CI=true or GPUFED_REQUIRE_ALL=1: dependencies are required)"
  fi
  echo "thread_safety_test: SKIPPED: $*"
  exit 77
}
command -v clang++-19 >/dev/null || skip "clang++-19 is not installed (GPUFED_TEST_DEPS=1 scripts/install-deps.sh)"
((${#flags[@]})) || fail "no thread-safety flags given (GPUFED_THREAD_SAFETY_FLAGS is empty)"
rm -rf "$work"
mkdir -p "$work"

# A class in the shape the tree uses: members under a Mutex, a Locked helper, an entry
# point that takes the lock, a FairMutex-guarded counter, a pointer whose target is guarded.
header() {
  cat <<'H'
#include <memory>

#include "controller/common/fair_mutex.h"
#include "controller/common/mutex.h"

namespace planted {

class Queue {
 public:
  void Push(int v) EXCLUDES(mu_);
  int Pop() EXCLUDES(mu_);
  void Drain() EXCLUDES(mu_);
  void Count() EXCLUDES(fair_);
  int Violation();

 private:
  void PushLocked(int v) REQUIRES(mu_) { items_ += v; }

  gpufed::Mutex mu_;
  gpufed::CondVar ready_;
  int items_ GUARDED_BY(mu_) = 0;
  std::unique_ptr<int> peak_ PT_GUARDED_BY(mu_) = std::make_unique<int>(0);
  gpufed::FairMutex fair_;
  long counted_ GUARDED_BY(fair_) = 0;
};

void Queue::Push(int v) {
  gpufed::MutexLock lock(mu_);
  PushLocked(v);
  if (items_ > *peak_) *peak_ = items_;
  ready_.NotifyAll();
}

int Queue::Pop() {
  gpufed::MutexLock lock(mu_);
  while (items_ == 0) ready_.Wait(mu_);
  return items_--;
}

void Queue::Drain() {
  gpufed::MutexLock lock(mu_);
  const int n = items_;
  lock.Unlock();
  (void)n;  // work without the lock
  lock.Lock();
  items_ = 0;
}

void Queue::Count() {
  gpufed::MutexLock lock(fair_);
  ++counted_;
}
H
}
# plant NAME BODY: Queue::Violation defined as BODY, in NAME.cc.
plant() {
  { header; printf 'int Queue::Violation() {\n%s\n}\n\n}  // namespace planted\n' "$2"; } >"$work/$1.cc"
}
compile() {  # compile COMPILER FILE [FLAGS...]: its output in $out, its status in $rc
  local cxx=$1 file=$2
  shift 2
  rc=0
  out=$("$cxx" -std=c++20 -I"$src" -fsyntax-only -Wall -Wextra -Werror "$@" "$work/$file" 2>&1) || rc=$?
}
# refused NAME BODY PATTERN: the planted body fails to compile, with PATTERN on its line.
refused() {
  plant "$1" "$2"
  compile clang++-19 "$1.cc" "${flags[@]}"
  ((rc != 0)) || fail "$1 compiled; -Wthread-safety must refuse it"
  local line
  line=$(grep -n '^int Queue::Violation() {$' "$work/$1.cc" | cut -d: -f1)
  grep -qE -- "$1\\.cc:$((line + 1)):[0-9]+: error: $3 \\[-Werror,-Wthread-safety" <<<"$out" ||
    fail "$1 was refused, but not with '$3' at its line $((line + 1)): $out"
}

# Code that keeps its locks compiles, with clang and the analysis and with g++.
plant clean "  gpufed::MutexLock lock(mu_);
  return items_;"
compile clang++-19 clean.cc "${flags[@]}"
((rc == 0)) || fail "code that keeps its locks was refused: $out"
if command -v g++ >/dev/null; then
  compile g++ clean.cc
  ((rc == 0)) || fail "g++ refused the annotated code (the attributes must expand to nothing): $out"
fi

refused unlocked_read "  return items_;" "reading variable 'items_' requires holding mutex 'mu_'"
refused unlocked_write "  items_ = 1;
  return 0;" "writing variable 'items_' requires holding mutex 'mu_' exclusively"
refused locked_helper_unlocked "  PushLocked(1);
  return 0;" "calling function 'PushLocked' requires holding mutex 'mu_' exclusively"
refused entry_point_under_its_lock "  gpufed::MutexLock lock(mu_); Push(1);
  return 0;" "cannot call function 'Push' while mutex 'mu_' is held"
refused pointee_unlocked "  return *peak_;" "reading the value pointed to by 'peak_' requires holding mutex 'mu_'"
refused after_unlock "  gpufed::MutexLock lock(mu_); lock.Unlock(); return items_;" \
  "reading variable 'items_' requires holding mutex 'mu_'"
refused fair_mutex_unlocked "  return static_cast<int>(counted_);" "reading variable 'counted_' requires holding mutex 'fair_'"
refused wait_without_lock "  ready_.Wait(mu_);
  return 0;" "calling function 'Wait' requires holding mutex 'mu_' exclusively"

rm -rf "$work"
echo "thread_safety_test: ok (8 planted violations refused with their line; code that keeps its locks compiles with clang and g++)"

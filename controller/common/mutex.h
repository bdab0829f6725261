#pragma once
// Mutexes that clang's thread-safety analysis (-Wthread-safety) can check.
//
// Why: libstdc++'s std::mutex and std::lock_guard carry no capability attributes, so
// clang cannot tell which lock guards which member. Code that shares state between
// threads uses these instead and says what each lock guards:
//
//   mutable Mutex mu_;
//   int pending_ GUARDED_BY(mu_) = 0;           // read or written only with mu_ held
//   void DrainLocked() REQUIRES(mu_);           // the caller holds mu_
//   Status Flush() EXCLUDES(mu_);               // takes mu_ itself
//   ...
//   MutexLock lock(mu_);                        // held to the end of the scope
//
// The clang build that scripts/fuzz.sh makes (build-fuzz) compiles every library with
// -Wthread-safety -Werror (controller/common/README.md); GCC ignores the attributes.
// The macros follow clang's documentation (clang.llvm.org/docs/ThreadSafetyAnalysis.html).
#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define GPUFED_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define GPUFED_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are locks. On a scoped lock class: it holds one for its life.
#define CAPABILITY(x) GPUFED_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY GPUFED_THREAD_ANNOTATION(scoped_lockable)
// On a member: read or written only while the lock is held (PT_: the pointee).
#define GUARDED_BY(x) GPUFED_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) GPUFED_THREAD_ANNOTATION(pt_guarded_by(x))
// On a lock member: the order in which two locks may be taken (checked with
// -Wthread-safety-beta only; here it documents the order).
#define ACQUIRED_BEFORE(...) GPUFED_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) GPUFED_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// On a function: the caller holds the lock / must not hold it (the function takes it).
#define REQUIRES(...) GPUFED_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) GPUFED_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: it takes the lock and returns holding it / it lets go of a held lock.
#define ACQUIRE(...) GPUFED_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) GPUFED_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) GPUFED_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: the lock it returns.
#define RETURN_CAPABILITY(x) GPUFED_THREAD_ANNOTATION(lock_returned(x))
// Turns the analysis off for one function: only where the pattern is beyond it, with a
// comment saying why.
#define NO_THREAD_SAFETY_ANALYSIS GPUFED_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace gpufed {

class CondVar;

// std::mutex with capability attributes. Lock it through MutexLock; Lock/Unlock are for
// the few places where a scope cannot say it (each says why).
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // True when it took the lock.
  bool TryLock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a lock from its construction to the end of its scope, like std::lock_guard;
// Unlock and Lock let go of it and take it again inside the scope (the analysis follows
// both). Works with any lock that has Lock/Unlock (Mutex, FairMutex).
template <typename M>
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(M& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  // Takes over a lock the caller already holds (after a TryLock, say) and lets go of it
  // at the end of the scope.
  MutexLock(M& mu, std::adopt_lock_t) REQUIRES(mu) : mu_(mu) {}
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  M& mu_;
  bool held_ = true;
};

// A condition variable for Mutex. Waits are loops in the caller, where the analysis sees
// the lock held while the condition is read (a predicate lambda is a function of its own,
// which the analysis cannot tie to the caller's lock):
//
//   while (!ready_) ready_cv_.Wait(mu_);
class CondVar {
 public:
  // Lets go of `mu`, sleeps until notified (or spuriously), takes `mu` again.
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's scope owns it
  }
  // The same, at most until `deadline`; false when it passed without a notification.
  template <typename ChronoClock, typename Dur>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<ChronoClock, Dur>& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool notified = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return notified;
  }
  template <typename Rep, typename Period>
  bool WaitFor(Mutex& mu, const std::chrono::duration<Rep, Period>& timeout) REQUIRES(mu) {
    return WaitUntil(mu, std::chrono::steady_clock::now() + timeout);
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace gpufed

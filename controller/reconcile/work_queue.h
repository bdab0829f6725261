#pragma once
// Keys (workload names, "cluster/<name>") with per-key exponential backoff, in the
// manner of controller-runtime's rate-limited queue: a key that failed is not retried
// before its delay has passed; success forgets its failures. Time comes from the
// caller, so the queue works in virtual time. Not thread-safe (the loop owns it).
#include <map>
#include <string>

#include "controller/common/duration.h"

namespace gpufed::reconcile {

class WorkQueue {
 public:
  WorkQueue(Duration base = Duration::FromSeconds(1), Duration cap = Duration::FromSeconds(300))
      : base_(base), cap_(cap) {}

  // False while `key` waits out a backoff at `now`.
  bool Ready(const std::string& key, Duration now) const {
    auto it = entries_.find(key);
    return it == entries_.end() || it->second.not_before <= now;
  }
  // Records a failure: the next try waits base * 2^(failures-1), at most cap.
  Duration Backoff(const std::string& key, Duration now) {
    Entry& e = entries_[key];
    int64_t delay = base_.millis();
    for (int i = 1; i < e.failures + 1 && delay < cap_.millis(); ++i) delay *= 2;
    if (delay > cap_.millis()) delay = cap_.millis();
    ++e.failures;
    e.not_before = now + Duration::FromMillis(delay);
    return Duration::FromMillis(delay);
  }
  void Forget(const std::string& key) { entries_.erase(key); }
  int Failures(const std::string& key) const {
    auto it = entries_.find(key);
    return it == entries_.end() ? 0 : it->second.failures;
  }
  // Earliest time a backed-off key becomes ready after `now`; zero when none.
  Duration NextDue(Duration now) const {
    Duration best;
    for (const auto& [key, e] : entries_) {
      if (e.not_before > now && (best.millis() == 0 || e.not_before < best)) best = e.not_before;
    }
    return best;
  }

 private:
  struct Entry {
    int failures = 0;
    Duration not_before;
  };
  Duration base_;
  Duration cap_;
  std::map<std::string, Entry> entries_;
};

}  // namespace gpufed::reconcile

#pragma once
// The tenant and name of every unfinished row in the Store's mirror (unfinished_rows.h),
// with its state: what numbering a submission checks (store_submit.cc: a live workload of
// that tenant and name refuses it). The mirror lives under the Store's lock, which a pass
// holds for milliseconds at a time (copying thousands of rows, or a transaction of
// hundreds of updates); this index has a lock of its own, so a group of API submissions
// is numbered without waiting for the pass. The mirror keeps it in step (Put, Forget,
// Load), always under the Store's lock as well, so it never says more than the mirror.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/common/mutex.h"
#include "controller/store/records.h"

namespace gpufed::store {

class LiveNames {
 public:
  static std::string Key(const std::string& tenant, const std::string& name) { return tenant + '\n' + name; }

  // For each of `keys` (Key), the state of the unfinished row that holds it, or none.
  // False when the mirror is not loaded: then nothing is known, and `states` is untouched.
  bool Find(const std::vector<std::string>& keys, std::vector<std::optional<WorkloadState>>* states) const
      EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!loaded_) return false;
    states->clear();
    for (const std::string& key : keys) {
      auto it = states_.find(key);
      states->push_back(it == states_.end() ? std::nullopt : std::optional<WorkloadState>(it->second));
    }
    return true;
  }
  bool loaded() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return loaded_;
  }

  void Set(const std::string& key, WorkloadState state) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    states_[key] = state;
  }
  void Erase(const std::string& key) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    states_.erase(key);
  }
  // Empties the index; `loaded`: whether it now stands for the database (an empty mirror
  // that was loaded) or for nothing known (a forgotten one).
  void Reset(bool loaded) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    states_.clear();
    loaded_ = loaded;
  }
  void MarkLoaded() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    loaded_ = true;
  }

 private:
  mutable Mutex mu_;
  bool loaded_ GUARDED_BY(mu_) = false;
  std::unordered_map<std::string, WorkloadState> states_ GUARDED_BY(mu_);
};

}  // namespace gpufed::store

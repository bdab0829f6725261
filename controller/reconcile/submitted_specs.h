#pragma once
// Workload specs the API has just parsed, handed to the loop so that it does not parse
// them again. An API submission is checked with the loader (controller_api.cc) on an
// HTTP thread; the loop then needs the same spec (Reconciler::SpecOf) and used to parse
// the stored text once more, on its own thread: at 1,000 clusters that second parse was
// 18 % of the loop's time. A spec is handed over only with the revision it was checked
// against, and the loop takes it only under that same revision (else it parses).
//
// Thread-safe. Bounded: beyond kCapacity the oldest entries go (their workloads are
// parsed by the loop as before), so specs the loop never asks for cannot pile up.
#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "controller/common/mutex.h"
#include "controller/model/workload.h"

namespace gpufed::reconcile {

class SubmittedSpecs {
 public:
  static constexpr size_t kCapacity = 8192;

  struct Entry {
    std::string revision;  // the policy revision the spec was checked against
    model::Workload spec;
  };

  void Put(const std::string& uid, Entry entry) {
    MutexLock lock(mu_);
    if (!entries_.emplace(uid, std::move(entry)).second) return;
    order_.push_back(uid);
    while (entries_.size() > kCapacity && !order_.empty()) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
    // Taken entries leave their uid in order_: drop those now and then (amortised O(1)).
    if (order_.size() > 2 * kCapacity) {
      std::deque<std::string> kept;
      for (std::string& id : order_) {
        if (entries_.count(id) != 0) kept.push_back(std::move(id));
      }
      order_ = std::move(kept);
    }
  }

  // The spec handed over for `uid` under `revision`, removed; nothing when there is none
  // (or it was checked under another revision, which is dropped).
  std::optional<model::Workload> Take(const std::string& uid, const std::string& revision) {
    MutexLock lock(mu_);
    auto it = entries_.find(uid);
    if (it == entries_.end()) return std::nullopt;
    std::optional<model::Workload> spec;
    if (it->second.revision == revision) spec = std::move(it->second.spec);
    entries_.erase(it);  // its uid leaves order_ later (Put)
    return spec;
  }

  size_t size() const {
    MutexLock lock(mu_);
    return entries_.size();
  }

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);
  std::deque<std::string> order_ GUARDED_BY(mu_);  // uids in the order they were put (eviction)
};

}  // namespace gpufed::reconcile

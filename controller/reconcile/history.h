#pragma once
// The dashboard's charts over time: samples of the fleet (GPUs allocated and capacity
// per cluster) and of each tenant (queue depth, spend against its budget), taken after a
// pass at most once per `interval` of controller time, kept for `window` (a day) in a
// ring buffer that the store persists, so a restarted controller still shows the last
// day. Not thread-safe: the Controller's mu_ guards it.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/reconcile/fleet_view.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

struct HistoryOptions {
  Duration interval = Duration::FromSeconds(60);
  Duration window = Duration::FromSeconds(24 * 3600);
};

class History {
 public:
  History(store::Store* store, HistoryOptions options = {}) : store_(store), options_(options) {}  // store outlives this
  // Reads the samples of the last window before `now` back from the store.
  Status Restore(Duration now);
  // True when a sample is due at `now` (none yet, or `interval` since the last).
  bool Due(Duration now) const;
  // Takes a sample at `now` (kept in memory and in the store; older than the window dropped).
  Status Sample(Duration now, const std::vector<ClusterView>& clusters, const std::vector<TenantView>& tenants);
  // {"samples": [{"at", "atSeconds", "clusters", "queue", "spend"}], "latestSeconds"},
  // oldest first; only samples taken after `since` when given (a poll asks for what it
  // has not seen; latestSeconds, the newest sample's time or null, tells it when the
  // controller's clock started over). A tenant caller (`tenant` not empty) sees only its
  // own tenant in queue and spend.
  nlohmann::json ToJson(const std::string& tenant, std::optional<Duration> since = std::nullopt) const;
  size_t size() const { return samples_.size(); }

 private:
  struct Entry {
    Duration at;
    nlohmann::json sample;  // {"clusters", "queue", "spend"}
  };
  store::Store* store_;
  HistoryOptions options_;
  std::deque<Entry> samples_;
};

}  // namespace gpufed::reconcile

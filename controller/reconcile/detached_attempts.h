#pragma once
// Attempts the loop has given up on while their cluster did not answer (lostAfter): the
// workload moved on (requeued, or cancelled by request), but the cluster may still run
// the job. Each stays here until the cluster answers again and confirms the job's end
// (cancelled by gpufed if it still runs), and is then metered from the cluster's own
// record of the job. Kept in the store's meta `detached_attempts` (JSON), written before
// the requeue that detaches an attempt, so a crash between the two leaves an entry that
// the next pass drops (its key is still the workload's live attempt) rather than a job
// nobody cancels. Few entries, changed only by outages: each change rewrites them all.
// An entry also keeps the attempt as last reported before the silence: booked only when
// the cluster answers again without any record of the job (it forgot ended jobs, or was
// removed), as the least it ran.
#include <map>
#include <string>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/status.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

struct DetachedAttempt {
  std::string key;       // <uid>.a<attempt>, the connector's key
  std::string uid;
  std::string workload;  // the name
  std::string tenant;
  int attempt = 0;
  std::string cluster;
  bool cloud = false;
  std::string outcome;   // what the attempt is booked as: "lost", or "cancelled" (by request)
  Duration detached;     // when the loop gave up on it
  // The last report of the attempt before the cluster fell silent (zero: none).
  double last_gpu_seconds = 0;
  Money last_cost;
  Duration started;
  Duration last_heard;   // when the silence began
  bool operator==(const DetachedAttempt&) const = default;
};

class DetachedAttempts {
 public:
  static constexpr const char* kMetaKey = "detached_attempts";

  // Reads the entries from `store` the first time; later calls do nothing.
  Status Load(store::Store& store);
  // Durable before they return (one commit each).
  Status Add(const DetachedAttempt& attempt, store::Store& store);
  Status Remove(const std::string& key, store::Store& store);
  const std::map<std::string, DetachedAttempt>& entries() const { return entries_; }

  // The meta value and back: DataLoss naming the entry a damaged value breaks at.
  static std::string Encode(const std::map<std::string, DetachedAttempt>& entries);
  static Result<std::map<std::string, DetachedAttempt>> Decode(const std::string& text);

 private:
  Status Save(store::Store& store) const;

  std::map<std::string, DetachedAttempt> entries_;  // by key
  bool loaded_ = false;
};

}  // namespace gpufed::reconcile

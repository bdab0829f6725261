#pragma once
// Ships the journal to every AuditSink while the controller runs: one Shipper per sink,
// each on its own thread, starting from its durable cursor (so it first catches up on
// whatever an earlier run left unacknowledged) and then following the journal's durable
// head as records are appended. A receiver outage only delays a sink: nothing is
// dropped, and the lag is visible (metrics, lag-limit changes for the journal and
// /readyz) until it catches up.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "controller/audit/journal_storage.h"
#include "controller/audit/records.h"
#include "controller/audit/shipper.h"
#include "controller/common/mutex.h"
#include "controller/model/audit_sink.h"

namespace gpufed::audit {

struct LiveShippingOptions {
  Env* env = nullptr;  // required; must outlive the LiveShipping
  std::string audit_dir;
  std::string repo_root;                  // TLS file paths of the sinks are relative to it
  std::function<uint64_t()> durable_head;  // required: AuditJournal::last_seq, thread-safe
  // Readers of the journal, one per shipper and its lag check (AuditTrail::source_factory:
  // a journal kept elsewhere); null: the file journal of `audit_dir`. Cursors stay in
  // `audit_dir` either way.
  JournalSourceFactory open_source;
  int64_t max_idle_micros = 100'000;      // longest a caught-up sink waits before looking again
  // How long a sink must stay past its lag limit before it counts as lagging: a pass that
  // appends a burst of records is not an episode, a receiver outage is.
  int64_t lag_grace_micros = 1'000'000;
};

// One sink as the controller reports it.
struct SinkStatus {
  std::string name;
  std::string describe;  // "syslog-tls 127.0.0.1:6514"
  model::LagAction on_lag_limit = model::LagAction::kAlert;
  ShipperStats stats;
  bool lagging = false;  // past the lag limit for longer than the grace
};

// A sink paired with the spec it came from (tests pass their own Sink).
struct SinkSetup {
  model::AuditSink spec;
  std::unique_ptr<Sink> sink;
};

class LiveShipping {
 public:
  // Builds a sink per spec (MakeSink) and starts shipping. Fails, starting nothing, when a
  // sink cannot be built or its cursor does not fit this journal.
  static Result<std::unique_ptr<LiveShipping>> Start(const LiveShippingOptions& options,
                                                     const std::vector<model::AuditSink>& specs);
  static Result<std::unique_ptr<LiveShipping>> StartWith(const LiveShippingOptions& options,
                                                         std::vector<SinkSetup> sinks);
  // Stops the threads and persists the cursors (the journal itself is never written).
  ~LiveShipping();

  // Tells the sinks that records were appended, so a caught-up sink sends them now
  // instead of after its idle wait.
  void Wake() EXCLUDES(mu_);
  std::vector<SinkStatus> Sinks() const EXCLUDES(mu_);
  // Lag-limit crossings since the last call, in the order they happened.
  std::vector<SinkLagChange> TakeLagChanges() EXCLUDES(mu_);
  // Blocks until every sink acknowledged `head`, `timeout_micros` passes, or `abort`
  // returns true (polled while waiting). Returns the names of the sinks still behind.
  std::vector<std::string> WaitAcknowledged(uint64_t head, int64_t timeout_micros, const std::function<bool()>& abort)
      EXCLUDES(mu_);
  // Prometheus text: per-sink lag (records, seconds), acknowledged seq, connection,
  // failures and whether the sink is past its lag limit.
  std::string Metrics() const EXCLUDES(mu_);
  // The sink specs this instance ships to, to restart shipping when a revision changes them.
  bool Ships(const std::vector<model::AuditSink>& specs) const;

 private:
  struct Worker {
    model::AuditSink spec;
    std::string describe;
    std::unique_ptr<Shipper> shipper;
    std::thread thread;
    // What the last step left, guarded by LiveShipping::mu_ (a member of another class,
    // which GUARDED_BY cannot name from here). Waiters read this rather
    // than the shipper's live stats, so a lag change is queued before the
    // acknowledgement that caused it becomes visible.
    ShipperStats stats;
    int64_t over_since = -1;  // when the shipper went past the limit; -1: within it
    bool lagging = false;
  };
  explicit LiveShipping(const LiveShippingOptions& options) : options_(options) {}
  void Loop(Worker* worker) EXCLUDES(mu_);

  LiveShippingOptions options_;
  std::vector<std::unique_ptr<Worker>> workers_;
  mutable Mutex mu_;
  CondVar wake_;        // sinks: new records or stop
  CondVar progressed_;  // waiters: a sink stepped
  bool stopping_ GUARDED_BY(mu_) = false;
  uint64_t wakes_ GUARDED_BY(mu_) = 0;
  std::vector<SinkLagChange> changes_ GUARDED_BY(mu_);
};

}  // namespace gpufed::audit

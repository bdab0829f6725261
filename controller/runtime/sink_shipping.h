#pragma once
// The journal's shipping while the controller runs: an audit::LiveShipping for the
// active revision's AuditSinks, attached to the controller (lag records, readiness,
// metrics, pause), restarted from the durable cursors when a revision changes the sinks.
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/live_shipping.h"
#include "controller/reconcile/controller.h"

namespace gpufed::runtime {

class SinkShipping {
 public:
  // `controller` and `env` must outlive this.
  // `open_source`: readers of a journal kept elsewhere (AuditTrail::source_factory); null:
  // the file journal of `audit_dir`. Cursors stay in `audit_dir` either way.
  SinkShipping(reconcile::Controller& controller, audit::Env* env, std::string audit_dir,
               audit::JournalSourceFactory open_source = nullptr)
      : controller_(controller), env_(env), audit_dir_(std::move(audit_dir)), open_source_(std::move(open_source)) {}
  ~SinkShipping() { Reset(); }
  SinkShipping(const SinkShipping&) = delete;
  SinkShipping& operator=(const SinkShipping&) = delete;

  // Ships to exactly these sinks (a no-op when they are the ones it ships to).
  Status Follow(const std::vector<model::AuditSink>& sinks);
  audit::LiveShipping* live() { return live_.get(); }

 private:
  void Reset();
  reconcile::Controller& controller_;
  audit::Env* env_;
  std::string audit_dir_;
  audit::JournalSourceFactory open_source_;
  std::unique_ptr<audit::LiveShipping> live_;
};

}  // namespace gpufed::runtime

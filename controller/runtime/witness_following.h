#pragma once
// The journal's witnessing while the controller runs: an audit::LiveWitnessing for the
// active revision's AuditWitnesses, attached to the controller (metrics, /readyz) and
// restarted when a revision changes them. Each witness resumes from the cosigned
// checkpoint kept beside the journal.
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/audit_trail.h"
#include "controller/audit/env.h"
#include "controller/audit/live_witnessing.h"
#include "controller/reconcile/controller.h"

namespace gpufed::runtime {

class WitnessFollowing {
 public:
  // `controller`, `trail` and `env` must outlive this.
  WitnessFollowing(reconcile::Controller& controller, audit::AuditTrail& trail, audit::Env* env,
                   std::function<void(const std::string&)> log)
      : controller_(controller), trail_(trail), env_(env), log_(std::move(log)) {}
  ~WitnessFollowing() { Reset(); }
  WitnessFollowing(const WitnessFollowing&) = delete;
  WitnessFollowing& operator=(const WitnessFollowing&) = delete;

  // Sends checkpoints to exactly these witnesses (a no-op when it already does).
  // FailedPrecondition when the journal's tiles, which the proofs come from, are unavailable.
  Status Follow(const std::vector<model::AuditWitness>& witnesses);
  audit::LiveWitnessing* live() { return live_.get(); }

 private:
  void Reset();
  reconcile::Controller& controller_;
  audit::AuditTrail& trail_;
  audit::Env* env_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<audit::LiveWitnessing> live_;
};

}  // namespace gpufed::runtime

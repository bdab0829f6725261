#include "controller/runtime/witness_following.h"

namespace gpufed::runtime {

Status WitnessFollowing::Follow(const std::vector<model::AuditWitness>& witnesses) {
  if (live_ && live_->Serves(witnesses)) return Status::Ok();
  Reset();
  if (witnesses.empty()) return Status::Ok();
  if (trail_.tiles() == nullptr) {
    return FailedPrecondition("the journal's tiles are unavailable, so no consistency proof can be sent to a witness");
  }
  audit::LiveWitnessingOptions o;
  o.env = env_;
  o.audit_dir = trail_.dir();
  o.repo_root = controller_.repo_root();
  o.newest_checkpoint = [journal = &trail_.journal()] { return journal->last_checkpoint().note; };
  o.tree = trail_.tiles();
  o.log = log_;
  Result<std::unique_ptr<audit::LiveWitnessing>> started = audit::LiveWitnessing::Start(o, witnesses);
  if (!started.ok()) return started.status();
  live_ = std::move(started).value();
  controller_.AttachWitnessing(live_.get());
  return Status::Ok();
}

void WitnessFollowing::Reset() {
  if (!live_) return;
  controller_.AttachWitnessing(nullptr);  // before the threads go
  live_.reset();
}

}  // namespace gpufed::runtime

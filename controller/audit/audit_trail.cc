#include "controller/audit/audit_trail.h"

#include "controller/audit/records.h"
#include "controller/audit/signing_key.h"

namespace gpufed::audit {

Result<std::unique_ptr<AuditTrail>> AuditTrail::Open(const AuditTrailOptions& options) {
  std::unique_ptr<AuditTrail> trail(new AuditTrail());
  trail->dir_ = options.dir;
  trail->env_ = options.env;
  if (trail->env_ == nullptr) {
    trail->own_env_ = NewPosixEnv();
    trail->env_ = trail->own_env_.get();
  }
  if (options.durability == Durability::kUnsynced) {
    trail->unsynced_env_ = NewUnsyncedEnv(trail->env_);
    trail->env_ = trail->unsynced_env_.get();
  }
  Result<Signer> signer = LoadOrCreateSigningKey(*trail->env_, options.dir);
  if (!signer.ok()) {
    return Status(signer.status().code(), "audit signing key in " + options.dir + ": " + signer.status().message());
  }
  trail->signer_.emplace(std::move(signer).value());
  trail->key_id_ = trail->signer_->key_id();
  JournalOptions jo;
  jo.env = trail->env_;
  jo.dir = options.dir;
  jo.signer = &*trail->signer_;
  jo.checkpoint_interval_micros = options.checkpoint_interval_micros;
  RecoveryInfo recovery;
  Result<std::unique_ptr<AuditJournal>> journal = AuditJournal::Open(jo, &recovery);
  if (!journal.ok()) {
    return Status(journal.status().code(), "audit journal " + options.dir + ": " + journal.status().message());
  }
  trail->journal_ = std::move(journal).value();
  if (recovery.truncated_bytes > 0) {
    // A failure leaves the journal unhealthy, which the loop reports and stops placing on.
    (void)trail->journal_->Append(JournalRepairedRecord(recovery.last_seq, recovery.truncated_bytes,
                                                        recovery.quarantined, recovery.first_dropped_seq,
                                                        recovery.last_dropped_seq));
  }
  return trail;
}

AuditTrail::~AuditTrail() = default;

}  // namespace gpufed::audit

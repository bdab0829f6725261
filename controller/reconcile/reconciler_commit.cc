// Where a pass's decisions and the store rows that follow from them become durable
// (Reconciler::CommitDecisions): the journal's records first, or with the rows that act.
#include <set>

#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

namespace {

// A decision the loop acts on through a connector: a placement (its submit intent) or a
// preemption's victim (its preempt intent).
bool Acts(const LoggedDecision& d) {
  return d.ctx.kind == placement::DecisionKind::kPreempt || d.decision->outcome == placement::Outcome::kPlaced;
}

}  // namespace

Status Reconciler::CommitDecisions(const std::vector<LoggedDecision>& decisions,
                                   const std::vector<store::ActionRow>& intents,
                                   const std::vector<store::Store::WorkloadUpdate>& updates,
                                   std::vector<std::pair<std::string, std::string>>* signatures) {
  const Duration now = clock_->Now();
  auto journalled = [&] {
    if (signatures == nullptr) return;
    for (auto& [uid, sig] : *signatures) last_decision_[uid] = std::move(sig);
    signatures->clear();
  };
  if (decisions.empty()) {
    journalled();
    return store_->RecordIntentsAndUpdates(intents, updates, now);
  }
  if (intents.empty() || !log_->carries_store_writes()) {
    GPUFED_RETURN_IF_ERROR(log_->RecordAll(decisions));
    journalled();
    // The log holds the decisions durably; their rows may wait for the store's next commit.
    for (const LoggedDecision& d : decisions) store_->RecordDecisionLater(DecisionRowOf(*d.decision, d.ctx));
    return store_->RecordIntentsAndUpdates(intents, updates, now);
  }
  // The rows of the decisions that act (their decision rows, intents and new states) ride
  // in the records' transaction: a placement's record and its intent are one commit. The
  // rest (queued decisions' rows and states) commit after it on the store's own session,
  // as before: riding them too made every journal commit under load carry a pass's
  // hundreds of queued rows, and API submissions, which share those commits, wait for
  // them (bench/README.md, "A decision and its rows in one commit").
  std::set<std::string> acting;
  std::vector<store::DecisionRow> acting_rows;
  for (const LoggedDecision& d : decisions) {
    if (!Acts(d)) continue;
    acting.insert(d.ctx.uid);
    acting_rows.push_back(DecisionRowOf(*d.decision, d.ctx));
  }
  std::vector<store::Store::WorkloadUpdate> acting_updates, other_updates;
  for (const store::Store::WorkloadUpdate& u : updates) {
    (acting.count(u.record.uid) > 0 ? acting_updates : other_updates).push_back(u);
  }
  GPUFED_RETURN_IF_ERROR(store_->RecordIntentsAndUpdatesWith(
      [&](const store::RidingWrites& writes) { return log_->RecordAllWith(decisions, writes); }, acting_rows, intents,
      acting_updates, now));
  journalled();
  for (const LoggedDecision& d : decisions) {
    if (!Acts(d)) store_->RecordDecisionLater(DecisionRowOf(*d.decision, d.ctx));
  }
  return store_->RecordIntentsAndUpdates({}, other_updates, now);
}

}  // namespace gpufed::reconcile

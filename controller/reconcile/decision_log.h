#pragma once
// Where the loop records each decision before acting on it (write-ahead). The store
// implementation below indexes decisions for `explain` and the API; the audit journal
// (controller/audit) plugs in behind the same interface as the tamper-evident log.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/core/connector.h"
#include "controller/common/status.h"
#include "controller/placement/decision_object.h"
#include "controller/placement/plan.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

struct DecisionContext {
  std::string revision;   // the policy revision the decision was made under
  Duration at;
  int attempt = 1;
  placement::DecisionKind kind = placement::DecisionKind::kPlace;  // or kPreempt: a victim the loop stops
  std::string uid;             // the workload's uid (store record)
  std::string beneficiary;     // preempt: the workload the victim makes room for
  std::string beneficiary_tenant;  // and its tenant (the store's copy, which tenants read,
                                   // names only a beneficiary of the victim's own tenant)
  const model::Cluster* cluster = nullptr;  // the binding's cluster in the revision, if declared
};

// A connector action the loop applied and what came of it (audit).
struct ActionResult {
  connectors::Action action;
  std::string uid;  // the workload's, whose attempt action.key names
  std::string cluster;
  Status status;
};

// One decision of a batch (DecisionLog::RecordAll).
struct LoggedDecision {
  const placement::Decision* decision = nullptr;
  DecisionContext ctx;
};

class DecisionLog {
 public:
  virtual ~DecisionLog() = default;
  // The planner pass whose decisions follow (its inputs, for replay). A failure means
  // none of them can be recorded.
  virtual Status BeginPass(const placement::Plan& plan, const placement::Snapshot& snapshot) {
    (void)plan;
    (void)snapshot;
    return Status::Ok();
  }
  // The pass begun by BeginPass is over (its plan and snapshot are about to go).
  virtual void EndPass() {}
  // Durable when OK. The loop does not act on a decision whose Record failed.
  virtual Status Record(const placement::Decision& decision, const DecisionContext& ctx) = 0;
  // Records `decisions` in order, all durable when OK: a log that can makes them durable
  // together (the journal: one fdatasync for a pass's decisions, not one each). On an
  // error the loop acts on none of them.
  virtual Status RecordAll(const std::vector<LoggedDecision>& decisions) {
    for (const LoggedDecision& d : decisions) GPUFED_RETURN_IF_ERROR(Record(*d.decision, d.ctx));
    return Status::Ok();
  }
  // Whether RecordAllWith commits store writes in the decisions' own transaction (the
  // journal in PostgreSQL, issue 38).
  virtual bool carries_store_writes() const { return false; }
  // RecordAll, with `writes` (the store's rows that follow from the decisions) run in the
  // transaction that commits them: OK means both are durable. An error of the writes' own
  // (the decisions recorded, the writes undone) is returned as it is. A log that cannot
  // carry them records nothing and says so (FailedPrecondition).
  virtual Status RecordAllWith(const std::vector<LoggedDecision>& decisions, const store::RidingWrites& writes) {
    (void)decisions;
    (void)writes;
    return FailedPrecondition("this decision log cannot commit the store's writes with its decisions");
  }
  // What finished attempts used and cost, as the loop is about to book them in the store
  // (`booked_at`: the loop's clock). All durable when OK (the journal: in one fdatasync);
  // the loop books only what this took, so a chargeback from the log never misses an
  // attempt the store charged.
  virtual Status RecordMetered(const std::vector<store::AttemptRow>& attempts, Duration booked_at) {
    (void)attempts;
    (void)booked_at;
    return Status::Ok();
  }
};

// The decision as the store keeps and the API serves it: the decision object
// (placement/decision_object.h) with the attempt, revision and time it was made at.
nlohmann::json DecisionToJson(const placement::Decision& decision, const DecisionContext& ctx);

// The store's row of a decision (the index `explain` and the API read): the decision object
// with its context; the loop writes it in the commit of the decision's intents and
// updates (Reconciler::CommitDecisions).
store::DecisionRow DecisionRowOf(const placement::Decision& decision, const DecisionContext& ctx);

// Records to every log in order; stops at the first failure. Put the audit journal
// first: a decision the journal did not take is then in no log and never acted on. The
// first log alone carries store writes (RecordAllWith); the others record after it.
class TeeDecisionLog : public DecisionLog {
 public:
  explicit TeeDecisionLog(std::vector<DecisionLog*> logs) : logs_(std::move(logs)) {}
  Status BeginPass(const placement::Plan& plan, const placement::Snapshot& snapshot) override {
    for (DecisionLog* log : logs_) GPUFED_RETURN_IF_ERROR(log->BeginPass(plan, snapshot));
    return Status::Ok();
  }
  void EndPass() override {
    for (DecisionLog* log : logs_) log->EndPass();
  }
  Status Record(const placement::Decision& decision, const DecisionContext& ctx) override {
    for (DecisionLog* log : logs_) GPUFED_RETURN_IF_ERROR(log->Record(decision, ctx));
    return Status::Ok();
  }
  Status RecordAll(const std::vector<LoggedDecision>& decisions) override {
    for (DecisionLog* log : logs_) GPUFED_RETURN_IF_ERROR(log->RecordAll(decisions));
    return Status::Ok();
  }
  bool carries_store_writes() const override { return !logs_.empty() && logs_.front()->carries_store_writes(); }
  Status RecordAllWith(const std::vector<LoggedDecision>& decisions, const store::RidingWrites& writes) override {
    if (!carries_store_writes()) return DecisionLog::RecordAllWith(decisions, writes);
    GPUFED_RETURN_IF_ERROR(logs_.front()->RecordAllWith(decisions, writes));
    for (size_t i = 1; i < logs_.size(); ++i) GPUFED_RETURN_IF_ERROR(logs_[i]->RecordAll(decisions));
    return Status::Ok();
  }
  Status RecordMetered(const std::vector<store::AttemptRow>& attempts, Duration booked_at) override {
    for (DecisionLog* log : logs_) GPUFED_RETURN_IF_ERROR(log->RecordMetered(attempts, booked_at));
    return Status::Ok();
  }

 private:
  std::vector<DecisionLog*> logs_;
};

}  // namespace gpufed::reconcile

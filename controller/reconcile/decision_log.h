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

class StoreDecisionLog : public DecisionLog {
 public:
  explicit StoreDecisionLog(store::Store* store) : store_(store) {}  // store must outlive this
  Status Record(const placement::Decision& decision, const DecisionContext& ctx) override;

 private:
  store::Store* store_;
};

// Records to every log in order; stops at the first failure. Put the audit journal
// first: a decision the journal did not take is then in no log and never acted on.
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
  Status RecordMetered(const std::vector<store::AttemptRow>& attempts, Duration booked_at) override {
    for (DecisionLog* log : logs_) GPUFED_RETURN_IF_ERROR(log->RecordMetered(attempts, booked_at));
    return Status::Ok();
  }

 private:
  std::vector<DecisionLog*> logs_;
};

}  // namespace gpufed::reconcile

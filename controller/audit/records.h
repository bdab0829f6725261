#pragma once
// Builders of the record payloads the controller appends (docs/audit-format.md lists
// every field). Pure functions: no I/O, no clock.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/audit/record.h"
#include "controller/common/build_info.h"
#include "controller/common/durability.h"
#include "controller/common/money.h"
#include "controller/model/workload.h"
#include "controller/placement/decision_object.h"
#include "controller/placement/plan.h"

namespace gpufed::audit {

// What a decision record needs besides the Decision itself.
struct DecisionContext {
  std::string revision;         // policy revision in force
  std::string inputs;           // snapshot digest (SnapshotStore) of the placer pass
  std::string workload_uid;
  std::string spec_hash;        // WorkloadSpecHash
  std::optional<Money> budget_left;        // tenant budget left after this decision
  std::optional<Money> cloud_budget_left;
  Duration decided_at;          // the plan's virtual time
  nlohmann::json data;          // {"sensitivity", "pii", "residency"} of the workload
  placement::DecisionKind kind = placement::DecisionKind::kPlace;
  const model::Cluster* cluster = nullptr;  // of the binding: its zone, region, provider
};

AuditRecord DecisionRecord(const placement::Decision& decision, const DecisionContext& context);

// Records for every decision of `plan`, in order, with spec hashes, budget left (the
// tenant's limit minus its spend so far minus what this plan placed before) and the
// compliance facts. `uid` maps a workload to its uid; default: "<name>@<spec hash 12>".
std::vector<AuditRecord> PlanRecords(const placement::Plan& plan, const placement::Snapshot& snapshot,
                                     const std::string& inputs_digest,
                                     const std::function<std::string(const model::Workload&)>& uid = {});

// The same records one at a time, for a loop that records a few decisions of a large
// plan: budget left accrues over every decision before the one asked for, but only
// that one's record (spec hash, canonical JSON) is built. Cheapest when asked in plan
// order. `plan` and `snapshot` must outlive the builder.
class PlanRecordBuilder {
 public:
  PlanRecordBuilder(const placement::Plan& plan, const placement::Snapshot& snapshot, std::string inputs_digest,
                    std::function<std::string(const model::Workload&)> uid = {});
  // The record of the decision for `tenant`'s `workload`; nothing when the plan has none.
  std::optional<AuditRecord> For(const std::string& tenant, const std::string& workload);

 private:
  struct Spend {
    Money total, cloud;
  };
  // Adds `d` to its tenant's spend so far; the tenant, or null when unknown.
  const model::Tenant* Account(const placement::Decision& d);
  AuditRecord Build(const placement::Decision& d, const model::Tenant* tenant);
  void Rewind();

  const placement::Plan& plan_;
  const placement::Snapshot& snapshot_;
  std::string inputs_digest_;
  std::function<std::string(const model::Workload&)> uid_;
  std::map<std::string, const model::Workload*> by_name_;  // by QualifiedName
  std::map<std::string, Spend> spent_;  // by tenant: before the plan, then as it places
  size_t next_ = 0;                     // decisions accounted so far
};

// `removed_with_work`: the clusters this revision removes while attempts still run there
// (cluster -> active attempts); they are observed until those end.
AuditRecord PolicyActivatedRecord(const std::string& revision, const std::string& repo, int tests_passed,
                                  const std::map<std::string, int>& removed_with_work = {});
// A change to the connector set (reconcile/connector_set.h): `change` is added, replaced,
// removed, returned or retired; `revision` the one in force; `active_attempts` for removed.
struct ClusterConnectorChange {
  std::string cluster;
  std::string change;
  std::string connector_type;
  std::string revision;
  int active_attempts = 0;
};
AuditRecord ClusterConnectorRecord(const ClusterConnectorChange& change);
AuditRecord PolicyRejectedRecord(const std::string& revision, const std::string& repo,
                                 const std::vector<std::string>& problems);

struct ConnectorActionResult {
  std::string action;       // submit | cancel | preempt | requeue
  std::string key;          // idempotency key (workload uid + attempt)
  std::string workload;
  std::string workload_uid;
  std::string tenant;       // the workload's
  std::string cluster;
  int attempt = 1;
  uint64_t decision_seq = 0;  // the decision record it carries out
  bool ok = false;
  std::string status;       // the connector's status code name
  std::string message;
  std::string external_id;  // e.g. the Slurm job id
};
AuditRecord ConnectorActionRecord(const ConnectorActionResult& result);

// `durability` kUnsynced adds "durability": "unsynced" (a simulation that did not fsync).
// The record names the binary: its version and commit (build_info.h).
AuditRecord ControllerStartRecord(const BuildInfo& build, const std::string& state_dir,
                                  Durability durability = Durability::kSynced);
AuditRecord ControllerStopRecord(const std::string& reason);
// The start cut a torn tail off: the bytes (never acknowledged) after `after_seq`, kept
// at `quarantine`.
// `first_dropped`..`last_dropped`: complete records of the torn commit that were cut with
// it (0, 0: only an incomplete line).
AuditRecord JournalRepairedRecord(uint64_t after_seq, uint64_t bytes, const std::string& quarantine,
                                  uint64_t first_dropped = 0, uint64_t last_dropped = 0);
// A sink's lag crossed its limit (`lagging`) or came back within it. `action` is what the
// controller does meanwhile: "alert" (keeps placing) or "pause" (stops placing).
struct SinkLagChange {
  std::string sink;
  bool lagging = false;
  uint64_t lag_records = 0;
  int64_t lag_millis = 0;
  uint64_t acknowledged = 0;
  std::string action = "alert";
  std::string last_error;
};
AuditRecord SinkLagRecord(const SinkLagChange& change);
// A tenant's spend (metered plus running estimates) reached `level` of a limit.
struct BudgetAlertEvent {
  std::string tenant;
  std::string period;  // the period's label, e.g. "2026-11"
  std::string scope;   // "all" or "cloud"
  double level = 0;
  std::string spent;   // money as text, e.g. "412.50 EUR"
  std::string limit;
};
AuditRecord BudgetAlertRecord(const BudgetAlertEvent& alert);
// In one pass, more than `error_budget` of a policy's hook calls failed (raised an error
// or ran out of budget). `enforcement` says what the failures did: a deny policy's
// failed admit/filter hooks denied (fail closed); warn/dryrun ones were only reported.
struct PolicyDegradedEvent {
  std::string policy;
  std::string revision;
  std::string enforcement;
  int64_t calls = 0;
  int64_t errors = 0;
  double error_budget = 0;
  std::string last_error;  // policy, file, line and message
};
AuditRecord PolicyDegradedRecord(const PolicyDegradedEvent& event);

// One finished attempt as its connector metered it and the store booked it: GPU-seconds
// used and their price, also for attempts that were lost, preempted or cancelled (they
// are charged for what they used). Times are the controller clock (docs/audit-format.md).
struct MeteredAttempt {
  std::string workload;
  std::string uid;
  std::string tenant;
  std::string cluster;
  int attempt = 1;
  std::string outcome;     // succeeded | failed | lost | preempted | cancelled
  double gpu_seconds = 0;  // recorded to the millisecond
  Money cost;              // exact, with its currency
  bool cloud = false;
  Duration started;        // zero when the cluster never reported it running
  Duration finished;
  Duration booked_at;      // when the loop booked it
};
AuditRecord AttemptMeteredRecord(const MeteredAttempt& attempt);

// Who did what to a workload. Each record names the principal (an API token's name,
// server/token_table.h, never the token; `repository` or `scenario` for the controller's
// own sources) and the workload's tenant, uid and name, so an auditor can follow a workload
// from its submission through its decisions and connector actions by uid.
//
// A workload accepted for placement, journalled before the store keeps it (write-ahead: a
// submission the journal did not take is refused and never stored).
struct WorkloadSubmission {
  std::string workload;   // its name
  std::string uid;
  std::string tenant;
  std::string principal;  // the API caller's name; "repository"; "scenario"
  std::string source;     // "api", "repository" or "scenario"
  std::string spec_hash;  // WorkloadSpecHash of the workload as accepted (its decisions' specHash)
  std::string revision;   // the policy revision it was accepted under
  std::string commit;     // the revision's Git commit ("" outside a Git checkout)
  Duration accepted_at;   // the controller's clock
};
AuditRecord WorkloadSubmittedRecord(const WorkloadSubmission& submission);
// A cancel asked for a workload, journalled before it takes effect (the API answers 202
// only after). `state` is the workload's when asked (pending, queued, placed, running, ...).
struct WorkloadCancellation {
  std::string workload;
  std::string uid;
  std::string tenant;
  std::string principal;
  std::string state;
  int attempt = 1;
  std::string cluster;    // of the current attempt, when it has one
  Duration cancelled_at;  // the controller's clock
};
AuditRecord WorkloadCancelledRecord(const WorkloadCancellation& cancellation);

}  // namespace gpufed::audit

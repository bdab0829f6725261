#pragma once
// Rows of the controller's store, as plain structs. Times are virtual-clock offsets
// (the run's clock), stored as milliseconds.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/action_key.h"
#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/qualified_name.h"
#include "controller/common/status.h"

namespace gpufed::store {

// A workload's lifecycle. Terminal: Succeeded, Failed, Rejected, Cancelled.
// Pending -> Queued|Placed|Rejected; Placed -> Running -> Succeeded|Failed;
// Placed|Running -> Preempted|Failed(lost) -> Requeued (attempt + 1) -> Queued|Placed.
enum class WorkloadState {
  kPending,
  kQueued,
  kPlaced,
  kRunning,
  kSucceeded,
  kFailed,
  kPreempted,
  kRequeued,
  kRejected,
  kCancelled,
};
const char* StateName(WorkloadState state);
Result<WorkloadState> ParseState(const std::string& name);
bool IsTerminal(WorkloadState state);
// Waiting for the placer: Pending, Queued, Requeued.
bool IsWaiting(WorkloadState state);
// Holding capacity on a cluster: Placed, Running.
bool IsActive(WorkloadState state);

struct WorkloadRecord {
  std::string name;
  std::string uid;              // unique per accepted submission; action keys derive from it
  std::string tenant;
  std::string source;           // "repo", "api" or "scenario"
  std::string spec_text;        // the submitted document (api); empty for repo/scenario
  Duration submitted;
  WorkloadState state = WorkloadState::kPending;
  std::string reason;
  int attempt = 1;
  std::string cluster;          // of the current attempt, when placed
  std::string binding_json = "{}";
  Duration resume_from;         // checkpointed progress the current attempt starts from
  Duration progress;            // last observed
  Duration checkpoint;          // last observed checkpoint
  Duration started;             // first time any attempt ran (wait time ends here)
  Duration finished;
  Money estimate;               // the current attempt's decision cost estimate
  Money cost;                   // metered, all finished attempts
  int64_t gpu_milli = 0;        // requested, for usage
  bool cloud = false;           // current attempt runs off-prem
  bool cancel_requested = false;
  // What the loop last journalled of the current attempt when it did not place it (the
  // decision's outcome and every cluster's verdict; reconciler_plan.cc's Signature), empty
  // once placed. A pass journals a Queued decision only when it differs; stored, so that
  // a new leader's first pass does not journal the whole queue again (schema 11).
  std::string decision_signature;
  int64_t updated_seq = 0;      // bumps on every write (optimistic checks, tests)

  // "<uid>.a<attempt>": the idempotency key of the current attempt's actions.
  std::string ActionKey() const { return gpufed::ActionKey(uid, attempt); }
  bool operator==(const WorkloadRecord&) const = default;
};

struct Transition {
  std::string workload;         // the workload's uid
  int attempt = 0;
  std::string from;
  std::string to;
  std::string reason;
  Duration at;
};

struct DecisionRow {
  int64_t seq = 0;
  Duration at;
  std::string workload;         // the name
  int attempt = 0;
  std::string revision;
  std::string outcome;          // placed, queued, rejected, preempt
  std::string cluster;
  std::string reason;
  std::string record_json;      // the full decision with every cluster's verdict
  std::string tenant;
  std::string uid;
};

enum class ActionState { kIntent, kApplied, kFailed };
struct ActionRow {
  std::string kind;
  std::string key;
  std::string workload;
  int attempt = 0;
  std::string cluster;
  ActionState state = ActionState::kIntent;
  std::string error;
  Duration created;
  std::string payload = "{}";   // the action as the connector receives it (JSON)
};

struct AttemptRow {
  std::string workload;         // the name
  int attempt = 0;
  std::string tenant;
  std::string cluster;
  std::string outcome;
  double gpu_seconds = 0;
  Money cost;
  bool cloud = false;
  Duration started;
  Duration finished;
  std::string uid;              // with attempt, what an attempt is booked under
};

// Where the store's append-only tables end at one moment (Store::Mark): the rows written
// after it are a later span's own, as `gpufed run`'s summary of one process reads them.
struct StoreMark {
  int64_t transition_id = 0;  // status_history's last id
  int64_t attempt_rowid = 0;  // attempts' last rowid (booked attempts are never deleted)
};

// The status transitions written after a mark (Store::TransitionsAfter).
struct TransitionsAfterMark {
  std::map<std::string, int64_t> entered;         // state name -> transitions into it
  std::map<std::string, Duration> running_since;  // ActionKey -> its last entry into Running
};

// How many workloads one tenant has in one state (one row per currency), and what
// they cost (metrics).
struct StateCount {
  std::string tenant;
  WorkloadState state = WorkloadState::kPending;
  int64_t workloads = 0;
  Money cost;
  int64_t gpu_milli = 0;  // GPUs requested (1000 = one), summed
  Duration oldest_submitted;  // the earliest submission among them (unfinished states only; 0 otherwise)
};

// What a tenant's running work is expected to cost (its decisions' estimates).
// `all` and `cloud` are in the currency of the tenant's first estimate (by currency
// code); estimates in other currencies are summed apart, never added as plain numbers
// (tenant_spend.h converts each through the repository's exchange rates).
struct ActiveEstimate {
  Money all;
  Money cloud;
  MoneyTotals other_all;
  MoneyTotals other_cloud;
};

// Metered cost a tenant was booked on one UTC day (`day`: its midnight).
struct MeteredDayRow {
  std::string tenant;
  Duration day;
  Money spent;
  Money cloud_spent;
};

struct UsageRow {
  std::string tenant;
  Money spent;
  Money cloud_spent;
  double gpu_seconds = 0;
};

}  // namespace gpufed::store

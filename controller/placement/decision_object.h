#pragma once
// The decision object: the one JSON form of a placement decision. The audit journal's
// decision record, the store's decision rows (which GET .../decisions, `explain` and the
// dashboard read) and `gpufed plan -o json` all carry it, field for field; each adds only
// what it alone knows around it (the journal: inputs digest, spec hash, budget left; the
// store: attempt and time; the plan: nothing). camelCase, and versioned by
// `decisionVersion` so a reader can tell it from rows written before it existed.
//
//   decisionVersion  1
//   workload, tenant, priority
//   outcome          placed | queued | rejected | preempted
//   reason
//   cost             placed: the estimate ("12.40 EUR")
//   target           placed or preempted: {cluster, nodes, gpus, gpuMilliEach, migProfile?,
//                    migStart?, provisionsNode, readyAfterMillis, zone?, region?, provider?}
//   verdicts         [{cluster, eligible, fitsNow, rule?, reason?, cost?, score?, warnings?}]
//   verdictGroups?, deniedBy?, warnings?
//   preempted?       [{workload, tenant, priority, cluster, nodes, checkpointable, lostWorkMillis}]
//   exchangeRates?   [{from, to, rate, asOf, source}]: the declared rates its money checks
//                    used (added within version 1: older records simply have none)
//
// docs/audit-format.md describes every field.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"
#include "controller/model/cluster.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {

inline constexpr int kDecisionObjectVersion = 1;

// A placer decision, or the stop of a running victim that a placement preempts (its
// binding is what is stopped; its outcome reads "preempted").
enum class DecisionKind { kPlace, kPreempt };
// The decision's outcome as every record of it reads: "preempted" for a victim's stop,
// else the placer's outcome (OutcomeName: placed, queued, rejected).
const char* DecisionOutcomeName(const Decision& decision, DecisionKind kind);

// The decision object. `cluster` is the cluster of the binding, when known: its zone,
// region and provider go into `target` (what compliance reads).
nlohmann::json DecisionObject(const Decision& decision, DecisionKind kind = DecisionKind::kPlace,
                              const model::Cluster* cluster = nullptr);

// Every top-level key DecisionObject can write, in no particular order: a host's record
// projected onto them is the decision object it carries.
const std::vector<std::string>& DecisionObjectKeys();

// A stored decision object read back as typed values (explain). Reads version 1 and the
// snake_case rows a store kept before it (no decisionVersion: fits_now, binding).
struct StoredVerdict {
  std::string cluster;
  bool eligible = false;
  bool fits_now = false;
  std::string rule;
  std::string reason;
  std::string cost;
  double score_total = 0;
};
struct StoredDecision {
  int version = 0;  // 0: a row from before the decision object
  std::string outcome;
  std::string reason;
  std::string cluster;  // target.cluster (binding.cluster in version 0)
  std::vector<StoredVerdict> verdicts;
};
Result<StoredDecision> ReadDecisionObject(const nlohmann::json& object);

}  // namespace gpufed::placement

#pragma once
// Re-runs the placer on a journalled decision's recorded inputs (its snapshot) under the
// recorded policy revision, or a what-if one, and compares the outcome. Used by `gpufed
// audit replay SEQ` and `--all`. Consecutive decisions of one pass share a snapshot, so
// the last replayed plan is kept; revisions are loaded once per repository, through
// RecordedRevisions (the one way audit commands recover a recorded revision).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/snapshot_store.h"
#include "controller/cli/recorded_revisions.h"
#include "controller/common/status.h"
#include "controller/model/workload.h"
#include "controller/placement/plan.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {

struct ReplaySettings {
  std::string audit_dir;   // empty with --store alone
  std::string policy_dir;  // what-if repository (the revision may differ)
  std::string repo_dir;    // the recorded repository, moved here (the revision must match)
};

struct ReplayComparison {
  uint64_t seq = 0;
  std::string workload, tenant;
  std::string recorded_revision, replayed_revision;
  nlohmann::json recorded, replayed;   // Essentials() of each
  nlohmann::json differences;          // key -> {"recorded","replayed"}
  bool same = false;
  int snapshot_format = 0;
};

// A decision the placer made (with its recorded inputs), as opposed to a record of the
// loop stopping a preemption victim: only those replay.
bool IsPlacerDecision(const nlohmann::json& record);

// The parts of a decision record that make its outcome; what replay compares.
nlohmann::json DecisionEssentials(const nlohmann::json& decision);
// "placed on CLUSTER [nodes], COST" / "queued" ...
std::string DescribeEssentials(const nlohmann::json& essentials);

class DecisionReplayer {
 public:
  // `snapshots`: where the decisions' inputs are read (the audit folder's files, or the
  // database's table with --store; OpenSnapshotStore in audit_commands.h).
  DecisionReplayer(std::unique_ptr<audit::SnapshotStore> snapshots, ReplaySettings settings);
  ~DecisionReplayer();

  // `record` is a decision record (RecordJson). Errors: its snapshot is missing or
  // damaged, the repository does not activate, or (without a what-if) its revision is
  // not the recorded one.
  Result<ReplayComparison> Replay(const nlohmann::json& record);

 private:
  struct Pass;
  Result<const policy::Revision*> RevisionFor(const std::string& recorded_repo, const std::string& recorded_revision);
  Result<const Pass*> PassFor(const std::string& digest, const std::string& recorded_revision);

  ReplaySettings settings_;
  std::unique_ptr<audit::SnapshotStore> snapshots_;  // one for every replayed decision (a file store indexes once)
  RecordedRevisions revisions_;     // --repo first, then the snapshot's repository; --policy by Load
  std::unique_ptr<Pass> last_pass_;
};

}  // namespace gpufed::cli

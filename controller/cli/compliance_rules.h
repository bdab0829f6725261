#pragma once
// What `gpufed audit report` checks each placement against: the compliance rules of the
// policy revision that decided it (audit/compliance.h), read from that revision's
// repository, recovered the way `audit replay` recovers it (recorded_revisions.h). The
// audit module cannot load a repository, so the rules are resolved here and handed to
// audit::BuildReport.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/compliance.h"
#include "controller/audit/env.h"
#include "controller/audit/snapshot_store.h"
#include "controller/cli/recorded_revisions.h"
#include "controller/common/status.h"
#include "controller/model/config.h"

namespace gpufed::cli {

// The checks `config` enforces of the standard library's: restricted-only-onprem where a
// deny policy imports stdlib/data-sensitivity, pii-zones and sensitivity-zones where a deny
// policy runs stdlib/compliance-zones.lua (imported or named directly) with that policy's
// merged params. Policies with enforcement warn or dryrun are listed as not enforcing.
audit::ComplianceRules ComplianceRulesOf(const model::Config& config);

// The rules of the revision that decided each decision of one journal.
class DecisionComplianceRules {
 public:
  // `snapshots`: where the decisions' inputs are (the audit folder's, or the database's
  // with --store). `moved`: --repo folders (RecordedRevisions).
  DecisionComplianceRules(std::unique_ptr<audit::SnapshotStore> snapshots, std::vector<std::string> moved);

  // For a decision record (RecordJson): NotFound/FailedPrecondition/DataLoss saying why
  // its revision is not available ("revision R is not available: ..."). Each revision is
  // loaded once, each snapshot read once.
  Result<audit::ComplianceRules> For(const nlohmann::json& decision);

 private:
  std::unique_ptr<audit::SnapshotStore> snapshots_;
  RecordedRevisions revisions_;
  std::map<std::string, Result<audit::ComplianceRules>> by_revision_;  // found, or why not found
  std::map<std::string, Status> unreadable_snapshots_;                 // by digest
};

}  // namespace gpufed::cli

#include <algorithm>
#include <filesystem>

#include "controller/model/audit_sink.h"
#include "controller/model/cluster.h"
#include "controller/model/config.h"
#include "controller/model/policy.h"
#include "controller/model/policy_test.h"
#include "controller/model/tenant.h"
#include "controller/model/workload.h"

namespace gpufed::model {

const char* GpuSharingName(GpuSharing s) {
  switch (s) {
    case GpuSharing::kNone: return "none";
    case GpuSharing::kMig: return "mig";
    case GpuSharing::kMemory: return "memory";
  }
  return "none";
}

const char* WorkloadTypeName(WorkloadType t) {
  switch (t) {
    case WorkloadType::kTraining: return "training";
    case WorkloadType::kFineTuning: return "fine-tuning";
    case WorkloadType::kInference: return "inference";
    case WorkloadType::kRendering: return "rendering";
    case WorkloadType::kSimulation: return "simulation";
    case WorkloadType::kBatch: return "batch";
  }
  return "batch";
}

const char* SensitivityName(Sensitivity s) {
  switch (s) {
    case Sensitivity::kPublic: return "public";
    case Sensitivity::kInternal: return "internal";
    case Sensitivity::kConfidential: return "confidential";
    case Sensitivity::kRestricted: return "restricted";
  }
  return "internal";
}

const char* TopologyName(Topology t) { return t == Topology::kSameNode ? "same-node" : "any"; }

const char* BudgetPeriodName(BudgetPeriod p) {
  switch (p) {
    case BudgetPeriod::kDaily: return "daily";
    case BudgetPeriod::kWeekly: return "weekly";
    case BudgetPeriod::kMonthly: return "monthly";
  }
  return "monthly";
}

const char* EnforcementName(Enforcement e) {
  switch (e) {
    case Enforcement::kDeny: return "deny";
    case Enforcement::kWarn: return "warn";
    case Enforcement::kDryRun: return "dryrun";
  }
  return "deny";
}

const char* MatchOpName(MatchOp op) {
  switch (op) {
    case MatchOp::kEquals: return "equals";
    case MatchOp::kIn: return "in";
    case MatchOp::kNotIn: return "notIn";
    case MatchOp::kExists: return "exists";
    case MatchOp::kGte: return "gte";
    case MatchOp::kGt: return "gt";
    case MatchOp::kLte: return "lte";
    case MatchOp::kLt: return "lt";
    case MatchOp::kContains: return "contains";
    case MatchOp::kContainsAll: return "containsAll";
  }
  return "equals";
}

const char* AuditSinkTypeName(AuditSinkType t) { return t == AuditSinkType::kHttps ? "https" : "syslog-tls"; }
const char* LagActionName(LagAction a) { return a == LagAction::kPause ? "pause" : "alert"; }

bool Cluster::holds_dataset(const std::string& dataset) const {
  return std::find(datasets.begin(), datasets.end(), dataset) != datasets.end();
}

int Cluster::present_nodes() const {
  int n = 0;
  for (const NodePool& pool : node_pools) n += pool.count;
  return n;
}

std::string DeclaredPath(const Cluster& cluster, const std::string& path) {
  std::filesystem::path p(path);
  if (path.empty() || p.is_absolute() || cluster.metadata.location.file.empty()) return path;
  return (std::filesystem::path(cluster.metadata.location.file).parent_path() / p).lexically_normal().string();
}

bool SameDeclaration(const Cluster& a, const Cluster& b) {
  // Moving a document within its file, or to another file, changes nothing the cluster is.
  Cluster unplaced = b;
  unplaced.metadata.location = a.metadata.location;
  unplaced.connector = a.connector;
  return a == unplaced && SameConnector(a.connector, b.connector);
}

const Cluster* Config::FindCluster(const std::string& name) const {
  for (const Cluster& c : clusters) {
    if (c.metadata.name == name) return &c;
  }
  return nullptr;
}

const Tenant* Config::FindTenant(const std::string& name) const {
  for (const Tenant& t : tenants) {
    if (t.metadata.name == name) return &t;
  }
  return nullptr;
}

Given Given::Over(const Given& defaults) const {
  Given merged = *this;
  if (!merged.waited) merged.waited = defaults.waited;
  if (!merged.queue_ahead) merged.queue_ahead = defaults.queue_ahead;
  if (!merged.running) merged.running = defaults.running;
  if (!merged.usage) merged.usage = defaults.usage;
  if (!merged.unhealthy) merged.unhealthy = defaults.unhealthy;
  return merged;
}

}  // namespace gpufed::model

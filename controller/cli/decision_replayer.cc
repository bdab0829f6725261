#include "controller/cli/decision_replayer.h"

#include <deque>

#include "controller/audit/inputs.h"
#include "controller/audit/records.h"
#include "controller/common/qualified_name.h"
#include "controller/config/loader.h"
#include "controller/placement/snapshot_builder.h"

namespace gpufed::cli {

bool IsPlacerDecision(const nlohmann::json& r) {
  auto inputs = r.find("inputs");
  return r.value("kind", "") == "decision" && r.value("outcome", "") != "preempted" && inputs != r.end() &&
         inputs->is_string() && !inputs->get<std::string>().empty();
}

nlohmann::json DecisionEssentials(const nlohmann::json& d) {
  nlohmann::json out = {{"outcome", d.value("outcome", "")}, {"reason", d.value("reason", "")}};
  if (d.contains("target")) {
    for (const char* k : {"cluster", "nodes", "gpus", "gpuMilliEach", "migProfile"}) {
      if (d["target"].contains(k)) out[std::string("target.") + k] = d["target"][k];
    }
  }
  for (const char* k : {"cost", "deniedBy", "budgetLeft", "warnings", "preempted"}) {
    if (d.contains(k)) out[k] = d[k];
  }
  if (d.contains("verdicts")) {
    for (const nlohmann::json& v : d["verdicts"]) {
      std::string c = "verdict." + v.value("cluster", "?");
      out[c] =
          v.value("eligible", false) ? std::string("eligible") : v.value("rule", "") + ": " + v.value("reason", "");
    }
  }
  if (d.contains("verdictGroups")) {  // large federations: clusters counted by rule
    for (const nlohmann::json& g : d["verdictGroups"]) {
      out["verdictGroup." + g.value("rule", "eligible")] = g.value("clusters", 0);
    }
  }
  return out;
}

std::string DescribeEssentials(const nlohmann::json& e) {
  std::string s = e.value("outcome", "?");
  if (e.contains("target.cluster"))
    s += " on " + e["target.cluster"].get<std::string>() + " " + e["target.nodes"].dump();
  if (e.contains("cost")) s += ", " + e["cost"].get<std::string>();
  return s;
}

// One replayed pass: the workloads the snapshot names (the snapshot points into them)
// and the records the plan makes, by QualifiedName (names repeat across tenants).
struct DecisionReplayer::Pass {
  std::string digest;
  std::string revision;       // the revision it was replayed under
  int format = 0;
  std::deque<model::Workload> workloads;
  std::map<std::string, nlohmann::json> records;
};

DecisionReplayer::DecisionReplayer(std::unique_ptr<audit::SnapshotStore> snapshots, ReplaySettings settings)
    : settings_(std::move(settings)),
      snapshots_(std::move(snapshots)),
      revisions_(settings_.repo_dir.empty() ? std::vector<std::string>{}
                                            : std::vector<std::string>{settings_.repo_dir}) {}
DecisionReplayer::~DecisionReplayer() = default;

Result<const policy::Revision*> DecisionReplayer::RevisionFor(const std::string& recorded_repo,
                                                              const std::string& recorded_revision) {
  // A what-if replays under whatever revision the other repository is at.
  if (!settings_.policy_dir.empty()) return revisions_.Load(settings_.policy_dir);
  return revisions_.Find(recorded_repo, recorded_revision);
}

Result<const DecisionReplayer::Pass*> DecisionReplayer::PassFor(const std::string& digest,
                                                                const std::string& recorded_revision) {
  if (last_pass_ && last_pass_->digest == digest) return last_pass_.get();
  Result<audit::SnapshotInputs> inputs = audit::ReadSnapshot(*snapshots_, digest);
  if (!inputs.ok()) return Status(inputs.status().code(), digest + ": " + inputs.status().message());
  Result<const policy::Revision*> revision = RevisionFor(inputs->repo, recorded_revision);
  if (!revision.ok()) return revision.status();
  const model::Config& config = (*revision)->config;

  auto pass = std::make_unique<Pass>();
  pass->digest = digest;
  pass->revision = config.revision;
  pass->format = inputs->format;
  auto load = [&](const nlohmann::json& document) -> Result<const model::Workload*> {
    std::string name = document.contains("metadata") ? document["metadata"].value("name", "?") : "?";
    config::LoadResult w = config::LoadText(document.dump(), "snapshot:" + name, &config);
    if (!w.ok() || w.config.workloads.size() != 1) {
      std::string why;
      for (const config::Diagnostic& d : w.diagnostics.items()) why += "\n  " + d.ToString();
      return InvalidArgument("recorded workload " + name + " does not load under revision " + config.revision + why);
    }
    pass->workloads.push_back(std::move(w.config.workloads[0]));
    return &pass->workloads.back();
  };
  // The recorded inputs, through the one builder: usage as the journal recorded it.
  placement::Snapshot& recorded = inputs->snapshot;
  placement::SnapshotFacts facts;
  facts.config = &config;
  facts.hooks = (*revision)->hooks.get();
  facts.now = recorded.now;
  facts.running = std::move(recorded.running);
  facts.observed = std::move(recorded.observed);
  facts.recorded_usage = std::move(recorded.usage);
  facts.fair_share_half_life = recorded.fair_share_half_life;
  facts.onprem_queue_depth = recorded.onprem_queue_depth;
  facts.explain_clusters = recorded.explain_clusters;
  facts.pod_mix = std::move(recorded.pod_mix);
  for (const nlohmann::json& d : inputs->pending_documents) {
    Result<const model::Workload*> w = load(d);
    if (!w.ok()) return w.status();
    facts.pending.push_back(*w);
  }
  for (size_t i = 0; i < facts.running.size(); ++i) {
    Result<const model::Workload*> w = load(inputs->running_documents[i]);
    if (!w.ok()) return w.status();
    facts.running[i].workload = *w;
  }
  const placement::Snapshot snapshot = placement::BuildSnapshot(std::move(facts));
  placement::Plan plan = placement::MakePlan(snapshot);
  for (audit::AuditRecord& r : audit::PlanRecords(plan, snapshot, digest)) {
    const std::string key = QualifiedName(r.payload.value("tenant", ""), r.payload.value("workload", ""));
    pass->records[key] = std::move(r.payload);
  }
  last_pass_ = std::move(pass);
  return last_pass_.get();
}

Result<ReplayComparison> DecisionReplayer::Replay(const nlohmann::json& record) {
  ReplayComparison c;
  c.seq = record.value("seq", uint64_t{0});
  c.workload = record.value("workload", "");
  c.tenant = record.value("tenant", "");
  c.recorded_revision = record.value("revision", "");
  if (!IsPlacerDecision(record)) {
    return InvalidArgument("seq " + std::to_string(c.seq) + " is not a placer decision with recorded inputs");
  }
  Result<const Pass*> pass = PassFor(record.value("inputs", ""), c.recorded_revision);
  if (!pass.ok()) return Status(pass.status().code(), "seq " + std::to_string(c.seq) + ": " + pass.status().message());
  c.replayed_revision = (*pass)->revision;
  c.snapshot_format = (*pass)->format;
  auto again = (*pass)->records.find(QualifiedName(c.tenant, c.workload));
  if (again == (*pass)->records.end()) {
    return Internal("seq " + std::to_string(c.seq) + ": the replayed plan has no decision for " + c.workload);
  }
  c.recorded = DecisionEssentials(record);
  c.replayed = DecisionEssentials(again->second);
  c.differences = nlohmann::json::object();
  for (const auto& [k, v] : c.recorded.items()) {
    if (!c.replayed.contains(k) || c.replayed[k] != v) {
      c.differences[k] = {{"recorded", v}, {"replayed", c.replayed.contains(k) ? c.replayed[k] : nullptr}};
    }
  }
  for (const auto& [k, v] : c.replayed.items()) {
    if (!c.recorded.contains(k)) c.differences[k] = {{"recorded", nullptr}, {"replayed", v}};
  }
  c.same = c.differences.empty();
  return c;
}

}  // namespace gpufed::cli

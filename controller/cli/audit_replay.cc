// gpufed audit replay SEQ: re-runs the placer on a decision's recorded inputs, under
// the recorded policy revision (or, with --policy DIR, a what-if revision), and shows
// whether the outcome is the same. Exit 0 same, 3 different, 1 error.
#include <filesystem>
#include <iostream>

#include "controller/audit/inputs.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/audit/records.h"
#include "controller/cli/audit_commands.h"
#include "controller/config/loader.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {
namespace {

struct ReplayOptions {
  uint64_t seq = 0;
  std::string audit_dir;
  std::string policy_dir;
  bool json = false;
};

constexpr int kDifferent = 3;

int Fail(const std::string& message) {
  std::cerr << "gpufed audit replay: " << message << "\n";
  return 1;
}

// The parts of a decision that make its outcome; what replay compares.
nlohmann::json Essentials(const nlohmann::json& d) {
  nlohmann::json out = {{"outcome", d.value("outcome", "")}, {"reason", d.value("reason", "")}};
  if (d.contains("target")) {
    for (const char* k : {"cluster", "nodes", "gpus", "gpuMilliEach", "migProfile"}) {
      if (d["target"].contains(k)) out[std::string("target.") + k] = d["target"][k];
    }
  }
  for (const char* k : {"cost", "deniedBy", "budgetLeft", "warnings"}) {
    if (d.contains(k)) out[k] = d[k];
  }
  if (d.contains("verdicts")) {
    for (const nlohmann::json& v : d["verdicts"]) {
      std::string c = "verdict." + v.value("cluster", "?");
      out[c] = v.value("eligible", false) ? std::string("eligible") : v.value("rule", "") + ": " + v.value("reason", "");
    }
  }
  if (d.contains("verdictGroups")) {  // large federations: clusters counted by rule
    for (const nlohmann::json& g : d["verdictGroups"]) {
      out["verdictGroup." + g.value("rule", "eligible")] = g.value("clusters", 0);
    }
  }
  return out;
}

std::string Describe(const nlohmann::json& e) {
  std::string s = e.value("outcome", "?");
  if (e.contains("target.cluster")) s += " on " + e["target.cluster"].get<std::string>() + " " + e["target.nodes"].dump();
  if (e.contains("cost")) s += ", " + e["cost"].get<std::string>();
  return s;
}

int RunReplay(const ReplayOptions& o) {
  auto env = audit::NewPosixEnv();
  audit::JournalReader reader(env.get(), o.audit_dir);
  std::vector<audit::JournalEntry> entry;
  Status s = reader.Seek(o.seq);
  Result<size_t> n = s.ok() ? reader.Next(1, o.seq, &entry) : Result<size_t>(s);
  if (!n.ok()) return Fail(n.status().ToString());
  if (entry.empty() || entry[0].seq != o.seq) return Fail("no record with seq " + std::to_string(o.seq));
  nlohmann::json record = *audit::RecordJson(entry[0].line);
  if (record.value("kind", "") != "decision") return Fail("seq " + std::to_string(o.seq) + " is a " + record.value("kind", "") + " record, not a decision");

  audit::SnapshotStore store(env.get(), o.audit_dir);
  Result<nlohmann::json> snap = store.Get(record.value("inputs", ""));
  if (!snap.ok()) return Fail("inputs of seq " + std::to_string(o.seq) + ": " + snap.status().ToString());
  const nlohmann::json& inputs = *snap;
  std::string recorded_revision = record.value("revision", "");
  std::string repo = o.policy_dir.empty() ? inputs["revision"].value("repo", "") : o.policy_dir;

  policy::Candidate candidate = policy::PrepareRevision({repo});
  if (!candidate.revision) {
    for (const std::string& p : candidate.problems) std::cerr << p << "\n";
    return Fail("policy repository " + repo + " does not activate");
  }
  policy::Revision& revision = *candidate.revision;
  if (o.policy_dir.empty() && revision.config.revision != recorded_revision) {
    return Fail("the repository at " + repo + " is now at revision " + revision.config.revision + ", the decision used " +
                recorded_revision + ": check that revision out there, or pass --policy DIR for a what-if");
  }

  std::vector<model::Workload> pending;
  for (const nlohmann::json& doc : inputs["pending"]) {
    config::LoadResult w = config::LoadText(doc.dump(), "snapshot:" + doc["metadata"].value("name", "?"), &revision.config);
    if (!w.ok()) {
      for (const config::Diagnostic& d : w.diagnostics.items()) std::cerr << d.ToString() << "\n";
      return Fail("a recorded workload does not load under revision " + revision.config.revision);
    }
    for (model::Workload& x : w.config.workloads) pending.push_back(std::move(x));
  }
  placement::Snapshot snapshot;
  snapshot.config = &revision.config;
  snapshot.hooks = revision.hooks.get();
  snapshot.now = Duration::FromMillis(inputs.value("nowMillis", int64_t{0}));
  snapshot.onprem_queue_depth = inputs.value("onpremQueueDepth", 0);
  for (const auto& [tenant, u] : inputs["usage"].items()) {
    placement::TenantUsage usage;
    usage.gpu_milli_in_use = u.value("gpuMilliInUse", int64_t{0});
    if (auto m = Money::Parse(u.value("spent", "0")); m.ok()) usage.spent = *m;
    if (auto m = Money::Parse(u.value("cloudSpent", "0")); m.ok()) usage.cloud_spent = *m;
    snapshot.usage[tenant] = usage;
  }
  for (const model::Workload& w : pending) snapshot.pending.push_back(&w);
  placement::Plan plan = placement::MakePlan(snapshot);
  std::vector<audit::AuditRecord> replayed = audit::PlanRecords(plan, snapshot, record.value("inputs", ""));
  const nlohmann::json* again = nullptr;
  for (const audit::AuditRecord& r : replayed) {
    if (r.payload.value("workload", "") == record.value("workload", "")) again = &r.payload;
  }
  if (again == nullptr) return Fail("the replayed plan has no decision for " + record.value("workload", ""));

  nlohmann::json before = Essentials(record), after = Essentials(*again);
  nlohmann::json diff = nlohmann::json::object();
  for (const auto& [k, v] : before.items()) {
    if (!after.contains(k) || after[k] != v) diff[k] = {{"recorded", v}, {"replayed", after.contains(k) ? after[k] : nullptr}};
  }
  for (const auto& [k, v] : after.items()) {
    if (!before.contains(k)) diff[k] = {{"recorded", nullptr}, {"replayed", v}};
  }
  bool same = diff.empty();
  if (o.json) {
    std::cout << nlohmann::json{{"seq", o.seq},
                                {"workload", record.value("workload", "")},
                                {"recordedRevision", recorded_revision},
                                {"replayedRevision", revision.config.revision},
                                {"same", same},
                                {"differences", diff}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "seq " << o.seq << ": " << record.value("workload", "") << " (tenant " << record.value("tenant", "")
              << ")\n  recorded: " << Describe(before) << "  [revision " << recorded_revision << "]\n  replayed: "
              << Describe(after) << "  [revision " << revision.config.revision << "]\n";
    if (same) {
      std::cout << "SAME outcome\n";
    } else {
      std::cout << "DIFFERENT:\n";
      for (const auto& [k, v] : diff.items()) {
        std::cout << "  " << k << ": " << v["recorded"].dump() << " -> " << v["replayed"].dump() << "\n";
      }
    }
  }
  return same ? 0 : kDifferent;
}

}  // namespace

void AddAuditReplayCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* replay = audit.add_subcommand(
      "replay", "Re-run the placer on a decision's recorded inputs (exit 0 same outcome, 3 different, 1 error)");
  replay->add_option("seq", o->seq, "Sequence number of a decision record")->required();
  replay->add_option("-d,--audit-dir", o->audit_dir, "Audit folder")->required();
  replay->add_option("--policy", o->policy_dir, "Another policy repository (what-if) instead of the recorded one");
  replay->add_flag("--json", o->json, "Print the comparison as JSON");
  replay->callback([o, exit_code] { *exit_code = RunReplay(*o); });
}

}  // namespace gpufed::cli

#include "policies/engine/hook_set.h"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

namespace gpufed::policy {
namespace {

// The seed for math.random: fixed per (workload, cluster), so a decision never depends
// on what was decided before it.
uint64_t SeedFor(const nlohmann::json& w, const nlohmann::json* c) {
  std::string key = w.value("name", "");
  if (c != nullptr) key += "/" + c->value("name", "");
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : key) h = (h ^ ch) * 1099511628211ull;
  return h;
}

placement::HookOutcome FromResult(const std::string& policy, bool enforced, const HookResult<Verdict>& r) {
  placement::HookOutcome out;
  out.policy = policy;
  out.enforced = enforced;
  if (r.ok()) {
    out.allowed = r.value().allowed;
    out.reason = r.value().reason.empty() ? (out.allowed ? "" : "denied by Lua hook") : r.value().reason;
    out.denied_pools = r.value().denied_pools;
  } else {
    out.allowed = false;
    out.error = true;
    out.reason = r.error().ToString();
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<HookSet>> HookSet::Compile(const model::Config& config, const LuaLimits& limits) {
  auto set = std::make_unique<HookSet>();
  std::vector<const model::Policy*> policies;
  policies.reserve(config.policies.size());
  for (const model::Policy& p : config.policies) policies.push_back(&p);
  std::sort(policies.begin(), policies.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  for (const model::Policy* p : policies) {
    for (const std::string& path : p->lua_files) {
      auto source = config.lua_sources.find(path);
      if (source == config.lua_sources.end()) {
        return FailedPrecondition("policy '" + p->metadata.name + "': Lua file " + path + " was not loaded");
      }
      HookResult<std::unique_ptr<LuaPolicyFile>> file =
          LuaPolicyFile::Load(p->metadata.name, path, source->second, limits);
      if (!file.ok()) return file.error().ToStatus();
      double weight = p->weights ? p->weights->lua : 1.0;
      set->entries_.push_back(
          {p->metadata.name, std::move(file).value(), p->enforcement == model::Enforcement::kDeny, weight, p->params});
    }
  }
  return set;
}

std::vector<placement::HookOutcome> HookSet::Admit(const nlohmann::json& workload, double now_seconds) {
  std::vector<placement::HookOutcome> outcomes;
  for (Entry& e : entries_) {
    if (!e.file->has_admit()) continue;
    HookContext ctx{now_seconds, SeedFor(workload, nullptr), &e.params};
    outcomes.push_back(FromResult(e.policy, e.enforced, e.file->Admit(workload, ctx)));
    Count(e, outcomes.back().error ? outcomes.back().reason : "");
    if (e.enforced && !outcomes.back().allowed) break;
  }
  return outcomes;
}

bool HookSet::HasAdmitHooks() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const Entry& e) { return e.file->has_admit(); });
}

std::vector<placement::HookOutcome> HookSet::Filter(const nlohmann::json& workload, const nlohmann::json& cluster,
                                                    double now_seconds) {
  std::vector<placement::HookOutcome> outcomes;
  for (Entry& e : entries_) {
    if (!e.file->has_filter()) continue;
    HookContext ctx{now_seconds, SeedFor(workload, &cluster), &e.params};
    outcomes.push_back(FromResult(e.policy, e.enforced, e.file->Filter(workload, cluster, ctx)));
    Count(e, outcomes.back().error ? outcomes.back().reason : "");
    if (e.enforced && !outcomes.back().allowed) break;
  }
  return outcomes;
}

double HookSet::Score(const nlohmann::json& workload, const nlohmann::json& cluster, double now_seconds,
                      std::vector<std::string>& errors) {
  double total = 0;
  for (Entry& e : entries_) {
    if (!e.file->has_score()) continue;
    HookContext ctx{now_seconds, SeedFor(workload, &cluster), &e.params};
    HookResult<double> r = e.file->Score(workload, cluster, ctx);
    if (r.ok()) {
      total += e.weight * r.value();
      Count(e, "");
    } else {
      errors.push_back(r.error().ToString());
      Count(e, errors.back());
    }
  }
  return total;
}

void HookSet::CountReusedCalls(int64_t filter_calls, int64_t score_calls) {
  for (Entry& e : entries_) {
    if (e.file->has_filter()) e.calls += filter_calls;
    if (e.file->has_score()) e.calls += score_calls;
  }
}

void HookSet::Count(Entry& e, const std::string& error) {
  ++e.calls;
  if (error.empty()) return;
  ++e.errors;
  e.last_error = error;
}

std::vector<HookSet::PolicyCalls> HookSet::TakeCallStats() {
  std::vector<PolicyCalls> out;
  for (Entry& e : entries_) {  // entries are in policy order; a policy's files are adjacent
    if (out.empty() || out.back().policy != e.policy) out.push_back({e.policy, 0, 0, ""});
    out.back().calls += e.calls;
    out.back().errors += e.errors;
    if (!e.last_error.empty()) out.back().last_error = e.last_error;
    e.calls = e.errors = 0;
    e.last_error.clear();
  }
  return out;
}

bool HookSet::RecordWorkloadReads(bool on) {
  for (Entry& e : entries_) e.file->RecordReads(on);
  return true;
}

std::vector<ViewRead> HookSet::TakeWorkloadReads() {
  std::vector<ViewRead> reads;
  for (Entry& e : entries_) {
    std::vector<ViewRead> file_reads = e.file->TakeReads();
    reads.insert(reads.end(), std::make_move_iterator(file_reads.begin()), std::make_move_iterator(file_reads.end()));
  }
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  return reads;
}

void HookSet::EnableCoverage(bool enabled) {
  for (Entry& e : entries_) e.file->EnableCoverage(enabled);
}

std::vector<HookSet::FileCoverage> HookSet::Coverage() const {
  std::vector<FileCoverage> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) {
    out.push_back({e.policy, e.file->file_path(), e.file->covered_lines(), e.file->executable_lines()});
  }
  return out;
}

}  // namespace gpufed::policy

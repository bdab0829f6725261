#pragma once
// The compiled Lua hooks of one policy revision, behind the placer's PolicyHooks
// interface. One LuaPolicyFile per (Policy, file): a file two policies share is
// compiled twice, so each error names the policy whose rule it broke.
//
// Not thread-safe (each LuaPolicyFile owns a lua_State); one HookSet per worker.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/model/config.h"
#include "controller/placement/hooks.h"
#include "policies/runtime/lua_policy.h"

namespace gpufed::policy {

class HookSet : public placement::PolicyHooks {
 public:
  // Compiles every Lua file every Policy of `config` names (sources come from
  // config.lua_sources). Fails with the first file that does not load, naming the
  // policy, file and line. Keeps no reference to `config`.
  static Result<std::unique_ptr<HookSet>> Compile(const model::Config& config, const LuaLimits& limits = {});

  std::vector<placement::HookOutcome> Admit(const nlohmann::json& workload, double now_seconds) override;
  bool HasAdmitHooks() const override;
  std::vector<placement::HookOutcome> Filter(const nlohmann::json& workload, const nlohmann::json& cluster,
                                             double now_seconds) override;
  double Score(const nlohmann::json& workload, const nlohmann::json& cluster, double now_seconds,
               std::vector<std::string>& errors) override;

  bool RecordWorkloadReads(bool on) override;
  void CountReusedCalls(int64_t filter_calls, int64_t score_calls) override;
  std::vector<ViewRead> TakeWorkloadReads() override;

  bool empty() const { return entries_.empty(); }

  // Hook calls and failures (errors, exhausted budgets) per policy since the last call,
  // in policy order; forgets them. The loop takes them after each pass to hold every
  // policy to its errorBudget.
  struct PolicyCalls {
    std::string policy;
    int64_t calls = 0;
    int64_t errors = 0;
    std::string last_error;  // names policy, file and line
  };
  std::vector<PolicyCalls> TakeCallStats();
  void EnableCoverage(bool enabled);
  // Per file: covered and executable lines (for `gpufed test --coverage`).
  struct FileCoverage {
    std::string policy, file;
    std::set<int> covered, executable;
  };
  std::vector<FileCoverage> Coverage() const;

 private:
  struct Entry {
    std::string policy;
    std::unique_ptr<LuaPolicyFile> file;
    bool enforced;
    double weight;
    nlohmann::json params;  // the Policy's params (empty object when none)
    int64_t calls = 0;      // since the last TakeCallStats
    int64_t errors = 0;
    std::string last_error;
  };
  // Counts one call of `e`'s hook; `error` is empty when it succeeded.
  static void Count(Entry& e, const std::string& error);
  std::vector<Entry> entries_;
};

}  // namespace gpufed::policy

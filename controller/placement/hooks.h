#pragma once
// The placer's view of policy code (Lua hooks). Implemented in policies/runtime; the
// placer only sees this interface, so it stays pure and testable with fakes.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/view_read.h"

namespace gpufed::placement {

struct HookOutcome {
  bool allowed = true;
  std::string policy;       // the policy whose hook decided
  std::string reason;
  bool error = false;       // the hook failed; `reason` carries file:line and message
  bool enforced = true;     // false for warn/dryrun policies: reported, never binding
  // A filter that allows the cluster may deny some of its pools: pool name -> reason.
  std::vector<std::pair<std::string, std::string>> denied_pools;
};

// What `read` observes in `view`: equal strings for equal observations.
std::string Observe(const nlohmann::json& view, const ViewRead& read);
// The view's top-level member `read` looks under (its pointer's first token), or nothing
// for a read of the time, of the view itself, or of a pointer that reads nothing.
std::optional<std::string> ReadMember(const ViewRead& read);

class PolicyHooks {
 public:
  virtual ~PolicyHooks() = default;
  // Every admit hook, in policy order; stops at the first enforced denial.
  virtual std::vector<HookOutcome> Admit(const nlohmann::json& workload, double now_seconds) = 0;
  // False when there is no admit hook (Admit answers nothing): the placer then builds a
  // workload's whole view only where a policy must see it, not for every decision.
  virtual bool HasAdmitHooks() const { return true; }
  // Every filter hook for one cluster; stops at the first enforced denial.
  virtual std::vector<HookOutcome> Filter(const nlohmann::json& workload, const nlohmann::json& cluster,
                                          double now_seconds) = 0;
  // Sum of score hooks (each already multiplied by its policy's weight); errors are
  // reported in `errors` and contribute nothing.
  virtual double Score(const nlohmann::json& workload, const nlohmann::json& cluster, double now_seconds,
                       std::vector<std::string>& errors) = 0;

  // Memoisation. While recording, Filter and Score note every read of the workload view;
  // TakeWorkloadReads returns them (sorted, unique) and forgets them. Hooks are pure
  // functions of (workload, cluster, now), so another workload that observes the same at
  // every recorded read gets the same outcomes, and the placer reuses them. Returns false
  // when the hooks cannot record; the placer then shares nothing between workloads.
  virtual bool RecordWorkloadReads(bool /*on*/) { return false; }
  virtual std::vector<ViewRead> TakeWorkloadReads() { return {}; }
  // A plan reused verdicts an earlier plan's calls found (a PlanMemo): as many filter
  // calls (per cluster) and score calls (per cluster that passed) as it would have made,
  // all of which succeeded. Call statistics count them, so a policy's error ratio per
  // pass does not depend on what a memo kept.
  virtual void CountReusedCalls(int64_t /*filter_calls*/, int64_t /*score_calls*/) {}
};

}  // namespace gpufed::placement

#pragma once
// State a caller keeps between plans (Snapshot::memo) so that a plan recomputes only what
// changed since the last one: the clusters' views, each cluster's state with its running
// work reserved (kept while the cluster's observed inventory and running work are the
// same and the last plan left it unchanged), the policy classes' verdicts (kept while
// the config, its revision and the hooks are the same; a verdict whose hooks asked for
// the time holds for that time only), the shape classes and the fit cache (kept while
// the cluster's state and, for a fit, the pod mix are the same).
//
// A memo changes nothing about the plan: MakePlan stays a pure function of the snapshot
// (plan_memo_property_test.cc). It assumes the Config and hooks it was used with are not
// modified in place; a plan with another Config object, revision or hooks starts it over.
// Not thread-safe: one memo per planning loop.
#include <cstddef>
#include <memory>

namespace gpufed::placement {

struct PlacerCaches;

class PlanMemo {
 public:
  // What the last plan that used the memo reused and recomputed (tests, benchmarks).
  struct Stats {
    size_t clusters_rebuilt = 0;   // states built anew (observed or running work changed, or the plan changed them)
    size_t clusters_kept = 0;      // states kept from the plan before
    size_t policy_classes_evaluated = 0;
    size_t fits_found = 0;         // fits worked out (cache misses)
  };

  PlanMemo();
  ~PlanMemo();
  PlanMemo(PlanMemo&&) noexcept;
  PlanMemo& operator=(PlanMemo&&) noexcept;

  const Stats& last_plan() const;
  // Forgets everything (the next plan builds every cache anew).
  void Clear();

 private:
  friend class Placer;
  std::unique_ptr<PlacerCaches> caches_;
};

}  // namespace gpufed::placement

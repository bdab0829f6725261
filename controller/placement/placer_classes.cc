// Classes of workloads that the placer treats alike, so a plan over a large federation
// evaluates each cluster's policies once per class rather than once per workload.
//
// A policy class is what the policies can tell apart: the YAML rules that apply, the
// data residency, and the values the Lua hooks read. Hooks record what they read of the
// workload view (PolicyHooks::RecordWorkloadReads); a later workload that observes the
// same at every one of those reads gets the same outcomes, because hooks are pure
// functions of their inputs. A shape class adds the resource request, which decides
// the hardware check, the pools and the price; it also caches where the shape fits on
// each cluster until that cluster's state changes.
#include <algorithm>

#include "controller/common/text.h"
#include "controller/model/views.h"
#include "controller/placement/matcher.h"
#include "controller/placement/placer.h"
#include "controller/placement/placer_rules.h"

namespace gpufed::placement {
namespace {

// Everything about a request that the hardware check, pools and prices depend on.
std::string ShapeKey(const model::Workload& w) {
  const model::ResourceRequest& r = w.resources;
  std::string key = std::to_string(r.gpus) + "|" + std::to_string(r.gpu_memory.milli()) + "|" +
                    std::to_string(r.gpu_share.milli()) + "|" + r.mig_profile + "|" +
                    std::to_string(static_cast<int>(r.topology)) + "|" + std::to_string(r.nodes) + "|" +
                    std::to_string(r.gpus_per_node) + "|" + std::to_string(r.cpu.milli()) + "|" +
                    std::to_string(r.memory.milli()) + "|" + (w.spot ? "s" : "-");
  for (const std::string& m : r.gpu_models) key += "|" + m;
  return key;
}

}  // namespace

size_t Placer::MaxCachedClasses() const {
  // Each class holds a few hundred bytes per cluster; keep all of them to ~100 MB.
  constexpr size_t kClusterEntries = 400000;
  return std::max<size_t>(16, kClusterEntries / std::max<size_t>(1, clusters_.size()));
}

void Placer::UpdateClassMembers() {
  class_members_.clear();
  class_view_whole_ = false;
  for (const ActiveRule& r : rules_) {
    for (const model::Condition& c : r.rule->when) {
      if (c.segments.empty()) {
        class_view_whole_ = true;
      } else {
        class_members_.insert(c.segments.front());
      }
    }
  }
  for (const ReadSet& set : read_sets_) {
    for (const ViewRead& read : set.reads) {
      if (read.kind != ViewRead::Kind::kNow && read.pointer.empty()) class_view_whole_ = true;
      if (std::optional<std::string> member = ReadMember(read)) class_members_.insert(std::move(*member));
    }
  }
}

size_t Placer::PolicyClassFor(const model::Workload& w) {
  // Looked up on a view of just the members the rules and the recorded reads look at;
  // a class evaluated anew sees the whole view.
  static const nlohmann::json kNoView;
  const nlohmann::json& wv = !needs_views_ ? kNoView : class_view_whole_ ? ViewOf(w) : ViewOf(w, &class_members_);
  std::vector<bool> applies(rules_.size());
  std::string prefix;
  prefix.reserve(rules_.size() + 16);
  for (size_t r = 0; r < rules_.size(); ++r) {
    applies[r] =
        AllConditionsHold(rules_[r].rule->when, wv, false) && AllConditionsHold(rules_[r].rule->when, wv, true);
    prefix += applies[r] ? '1' : '0';
  }
  for (const std::string& zone : w.data.residency) prefix += "|" + zone;
  prefix += '\n';
  auto key_for = [&](const ReadSet& set, const nlohmann::json& view) {
    std::string key = prefix;
    for (const ViewRead& read : set.reads) {
      key += Observe(view, read);
      // A hook that asked for the time decided for this time (a memo outlives the plan).
      if (read.kind == ViewRead::Kind::kNow) key += std::to_string(snapshot_.now.millis());
      key += '\n';
    }
    return key;
  };
  for (const ReadSet& set : read_sets_) {
    auto it = set.classes.find(key_for(set, wv));
    if (it == set.classes.end()) continue;
    PolicyClass& reused = *policy_classes_[it->second];
    if (reused.plan != caches_.plans && snapshot_.hooks != nullptr) {
      // Found by an earlier plan (a memo): count the calls this plan would have made.
      snapshot_.hooks->CountReusedCalls(static_cast<int64_t>(clusters_.size()), reused.passed);
    }
    reused.plan = caches_.plans;
    return it->second;
  }
  if (policy_classes_.size() >= MaxCachedClasses()) {
    // Hooks that read something unique to each workload (its name, say) make every
    // workload a class of its own: start over rather than grow without bound.
    read_sets_.clear();
    shape_classes_.clear();
    caches_.fit_tables.clear();
    policy_classes_.clear();
  }
  bool cacheable = true;
  ++caches_.stats.policy_classes_evaluated;
  const nlohmann::json& whole = needs_views_ ? ViewOf(w) : kNoView;  // (may reuse wv's storage)
  std::unique_ptr<PolicyClass> evaluated = EvaluatePolicies(w, whole, applies, cacheable);
  if (!cacheable) {
    uncached_policy_ = std::move(evaluated);
    return kUncachedClass;
  }
  std::vector<ViewRead> reads;
  if (snapshot_.hooks != nullptr) reads = snapshot_.hooks->TakeWorkloadReads();
  auto set = std::find_if(read_sets_.begin(), read_sets_.end(), [&](const ReadSet& s) { return s.reads == reads; });
  if (set == read_sets_.end()) {
    read_sets_.push_back({std::move(reads), {}});
    set = read_sets_.end() - 1;
    UpdateClassMembers();
  }
  set->classes.emplace(key_for(*set, whole), policy_classes_.size());
  evaluated->plan = caches_.plans;
  for (const PolicyVerdict& v : evaluated->clusters) evaluated->passed += v.passed ? 1 : 0;
  policy_classes_.push_back(std::move(evaluated));
  return policy_classes_.size() - 1;
}

std::unique_ptr<Placer::PolicyClass> Placer::EvaluatePolicies(const model::Workload& w, const nlohmann::json& wv,
                                                              const std::vector<bool>& applies, bool& cacheable) {
  PolicyHooks* hooks = snapshot_.hooks;
  // Hooks that cannot record their reads could depend on anything: share nothing.
  cacheable = hooks == nullptr || hooks->RecordWorkloadReads(true);
  if (hooks != nullptr) hooks->TakeWorkloadReads();  // drop anything an earlier call left
  auto result = std::make_unique<PolicyClass>();
  result->clusters.resize(clusters_.size());
  for (size_t c = 0; c < clusters_.size(); ++c) {
    PolicyVerdict& p = result->clusters[c];
    const size_t pools = clusters_[c].cluster->node_pools.size();
    p.pool_allowed.assign(pools, true);
    p.pool_denials.resize(pools);
    ClusterVerdict v;
    p.passed = PassesPolicies(w, wv, applies, c, v, p.pool_allowed, p.pool_denials);
    // A failed hook (a runtime error, or a limit that may depend on the machine, like
    // the wall-clock deadline) is not worth sharing.
    cacheable = cacheable && v.rule != kRulePolicyError;
    for (const std::string& warning : v.warnings) {
      cacheable = cacheable && warning.find(" error (ignored): ") == std::string::npos;
    }
    p.rule = std::move(v.rule);
    p.reason = std::move(v.reason);
    p.warnings = std::move(v.warnings);
    if (p.passed && hooks != nullptr) {
      p.lua_score = hooks->Score(wv, clusters_[c].view, snapshot_.now.seconds(), p.score_errors);
      cacheable = cacheable && p.score_errors.empty();
    }
  }
  if (hooks != nullptr) hooks->RecordWorkloadReads(false);
  result->lua_scores.reserve(result->clusters.size());
  for (const PolicyVerdict& p : result->clusters) result->lua_scores.push_back(p.lua_score);
  return result;
}

const nlohmann::json& Placer::ViewOf(const model::Workload& w, const model::ViewMembers* only) {
  auto build = [&]() -> const nlohmann::json& {
    return scratch_view_ = only != nullptr ? model::WorkloadView(w, *only) : model::WorkloadView(w);
  };
  // Without a memo the caches die with this plan, where each workload is decided once.
  if (snapshot_.memo == nullptr) return build();
  auto& views = caches_.workload_views;
  auto read = [this](PlacerCaches::CachedView& cached) {
    if (cached.plan != caches_.plans) ++views_read_;
    cached.plan = caches_.plans;
  };
  const uint64_t key = model::WorkloadViewKey(w);
  auto it = views.find(key);
  if (it == views.end()) {
    // Most workloads are placed in the first plan that decides them: only the key is
    // kept, and the view of one still waiting in the next plan.
    if (views.size() < PlacerCaches::kMaxCachedViews) read(views[key]);
    return build();
  }
  read(it->second);
  if (it->second.view.is_null()) it->second.view = model::WorkloadView(w);
  return it->second.view;
}

void Placer::SweepViews() {
  auto& views = caches_.workload_views;
  if (views.size() == views_read_) return;
  std::erase_if(views, [this](const auto& entry) { return entry.second.plan != caches_.plans; });
}

Placer::ShapeClass& Placer::ShapeClassFor(const model::Workload& w) {
  const size_t index = PolicyClassFor(w);
  std::unique_ptr<ShapeClass>* slot = &uncached_shape_;
  if (index != kUncachedClass) {
    std::string key = std::to_string(index) + "#" + ShapeKey(w);
    auto it = shape_classes_.find(key);
    if (it != shape_classes_.end()) return *it->second;
    if (shape_classes_.size() >= MaxCachedClasses()) {
      shape_classes_.clear();
      caches_.fit_tables.clear();
    }
    slot = &shape_classes_[std::move(key)];
  }
  const PolicyClass& policy = index == kUncachedClass ? *uncached_policy_ : *policy_classes_[index];
  auto shape = std::make_unique<ShapeClass>();
  shape->policy = &policy;
  shape->clusters.reserve(clusters_.size());
  for (size_t c = 0; c < clusters_.size(); ++c) {
    shape->clusters.push_back(EvaluateShape(w, policy.clusters[c], c));
    shape->pool_masks.push_back(shape->clusters.back().pool_mask);
    if (!shape->clusters.back().eligible) continue;
    shape->eligible.push_back(static_cast<uint32_t>(c));
    (clusters_[c].onprem ? shape->onprem : shape->cloud).push_back(static_cast<uint32_t>(c));
  }
  if (index == kUncachedClass) {
    shape->own_fits = std::make_unique<FitTable>();
    shape->fits = shape->own_fits.get();
  } else {
    std::unique_ptr<FitTable>& table = caches_.fit_tables[ShapeKey(w)];
    if (table == nullptr) table = std::make_unique<FitTable>();
    shape->fits = table.get();
  }
  shape->fits->fits.resize(clusters_.size());
  *slot = std::move(shape);
  return **slot;
}

Placer::ShapeCluster Placer::EvaluateShape(const model::Workload& w, const PolicyVerdict& policy, size_t c) const {
  ShapeCluster s;
  if (!policy.passed) return s;
  const model::Cluster& cluster = *clusters_[c].cluster;
  s.pools = policy.pool_allowed;
  std::string mismatch = "no node pool";
  std::string spot_denial;  // a spot pool the shape fits, which the workload may not use
  bool shape_ok = false;
  for (size_t p = 0; p < s.pools.size(); ++p) {
    if (!s.pools[p]) continue;
    const model::NodePool& pool = cluster.node_pools[p];
    std::string m = PoolShapeMismatch(pool, w.resources);
    if (m.empty() && pool.spot && !w.spot) {
      if (spot_denial.empty()) spot_denial = SpotNotAllowed(pool);
      m = spot_denial;
    }
    if (m.empty()) {
      shape_ok = true;
    } else if (mismatch == "no node pool") {
      mismatch = m;
    }
    s.pools[p] = m.empty();
  }
  if (!shape_ok) {
    // Hardware that would hold it but is spot capacity: the workload's own `spot: false`
    // is the reason, not the shape.
    s.rule = spot_denial.empty() ? kRuleHardware : kRuleSpot;
    s.reason = spot_denial.empty() ? mismatch : spot_denial;
    // A pool a rule excluded would have fitted: that rule is the real reason.
    for (size_t p = 0; p < s.pools.size(); ++p) {
      if (!policy.pool_denials[p].first.empty() && PoolShapeFits(cluster.node_pools[p], w.resources)) {
        s.rule = policy.pool_denials[p].first;
        s.reason = policy.pool_denials[p].second;
        break;
      }
    }
    return s;
  }
  s.eligible = true;
  s.pool_mask = s.pools.size() > 63 ? kUnsharedPools : 0;
  for (size_t p = 0; p < s.pools.size() && p < 63; ++p) s.pool_mask |= s.pools[p] ? uint64_t{1} << p : 0;
  s.prices.assign(s.pools.size(), nullptr);
  s.gpu_milli.assign(s.pools.size(), 0);
  s.demands.assign(s.pools.size(), std::nullopt);  // `pools` already says where the shape fits
  // Cost caps and budgets rule a cluster out when even its cheapest pool is over them,
  // and leave every pool when its dearest is within them (else ApplyCostCaps narrows the
  // pools for the decision). Every pool of a cluster adds the same egress, so GPU-hours
  // order the pools' costs, whatever the duration (the first such pool on a tie).
  __int128 best = 0;
  __int128 dearest = 0;
  for (size_t p = 0; p < s.pools.size(); ++p) {
    if (!s.pools[p]) continue;
    const model::NodePool& pool = cluster.node_pools[p];
    s.prices[p] = GpuHourPrice(cluster, pool);
    s.demands[p] = DemandOn(pool, w.resources);
    s.gpu_milli[p] = GpuMilli(w.resources, *s.demands[p]);
    const __int128 rate = s.prices[p] == nullptr ? 0 : static_cast<__int128>(s.prices[p]->micros()) * s.gpu_milli[p];
    if (s.cheapest_pool < 0 || rate < best) {
      s.cheapest_pool = static_cast<int>(p);
      best = rate;
    }
    if (s.dearest_pool < 0 || rate > dearest) {
      s.dearest_pool = static_cast<int>(p);
      dearest = rate;
    }
  }
  return s;
}

const Placer::CachedFit& Placer::FindFit(const model::Workload& w, ShapeClass& shape, size_t c) {
  CachedFit& cached = shape.fits->fits[c];
  const ClusterState& state = clusters_[c].state;
  const ShapeCluster& sc = AllowedOn(shape, c);
  const uint64_t pools = sc.pool_mask;
  ++caches_.stats.fits_found;
  cached = CachedFit();
  cached.generation = state.generation;
  cached.mix_epoch = caches_.mix_epoch;
  cached.pool_mask = pools;
  // Where, not what it costs: the price comes with the shape (no candidate is built).
  const model::ResourceRequest& r = w.resources;
  if (r.nodes <= 1) {
    // Single-node work on a present node: the node the packer chooses, its quality worked
    // out without building the fit (as PlacementOn would find it, the same skip first).
    if (state.elastic_nodes_left == 0 && !MayFitWholeGpus(state, r)) return cached;
    if (std::optional<NodeChoice> choice = ChooseNode(state, r, -1, sc.demands)) {
      const NodeState& node = state.nodes[static_cast<size_t>(choice->node)];
      cached.fits = true;
      cached.pool = node.pool;
      cached.quality = FitQualityOn(node, state.cluster->node_pools[node.pool], *choice->demand);
      cached.price_micros = PriceMicros(sc.prices[static_cast<size_t>(cached.pool)]);
      cached.gpu_milli = sc.gpu_milli[static_cast<size_t>(cached.pool)];
      return cached;
    }
    // No present node: elasticity may add one, and `topology: any` may spread.
    if (state.elastic_nodes_left == 0 && !Spreads(r)) return cached;
  }
  if (std::optional<Placement> found = PlacementOn(w, c, sc.pools, &sc.demands)) {
    cached.fits = true;
    cached.provision = found->provisions;
    cached.pool = found->pool;
    cached.quality = found->nodes.front().second.Quality();
    cached.price_micros = PriceMicros(sc.prices[cached.pool]);
    cached.gpu_milli = sc.gpu_milli[cached.pool];
  }
  return cached;
}

}  // namespace gpufed::placement

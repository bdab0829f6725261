// The clusters' states at the start of a plan: each cluster's nodes (declared, or as its
// connector reported them) with the running work reserved and capped to what the
// cluster reported free. Without a memo every state is built here for every plan. With
// one (plan_memo.h), a state is kept from the last plan when it was built from the same
// inputs (the observed inventory and the running work on the cluster, in order) and the
// last plan did not change it; only the rest is rebuilt, so fits cached for a kept state
// stay valid.
#include <algorithm>
#include <limits>

#include "controller/common/hash64.h"
#include "controller/model/views.h"
#include "controller/placement/placer.h"

namespace gpufed::placement {
namespace {

// What a cluster's state is built from; a collision would keep a stale state, at odds of
// about 2^-64 per cluster and plan.
using InputHash = Hash64;

void AddObserved(InputHash& h, const ObservedCluster& o) {
  h.Add(o.healthy ? 2 : 1);
  h.Add(o.nodes.size());
  for (const ObservedNode& n : o.nodes) {
    h.Add(n.name);
    h.Add(n.pool);
    h.Add(n.ready ? 1 : 0);
    h.Add(static_cast<uint64_t>(n.free_cpu_milli));
    h.Add(static_cast<uint64_t>(n.free_memory));
    h.Add(n.gpus.size());
    for (const ObservedGpu& g : n.gpus) {
      h.Add(static_cast<uint64_t>(g.free_milli));
      h.Add(static_cast<uint64_t>(g.free_memory));
      h.Add(static_cast<uint64_t>(g.mig_slices_used));
    }
  }
}

// Everything reserving a running workload reads: its binding and its request.
void AddRunning(InputHash& h, const RunningWorkload& r) {
  const Binding& b = r.binding;
  h.Add(b.pool);
  h.Add(b.nodes.size());
  for (const std::string& node : b.nodes) h.Add(node);
  h.Add(b.gpus.size());
  for (const std::vector<int>& gpus : b.gpus) {
    h.Add(gpus.size());
    for (int g : gpus) h.Add(static_cast<uint64_t>(g));
  }
  h.Add(static_cast<uint64_t>(b.gpu_milli_each));
  h.Add(b.mig_profile);
  h.Add(static_cast<uint64_t>(b.mig_start));
  const model::ResourceRequest& q = r.workload->resources;
  for (int64_t v : {int64_t{q.gpus}, q.gpu_memory.milli(), q.gpu_share.milli(), int64_t{static_cast<int>(q.topology)},
                    int64_t{q.nodes}, int64_t{q.gpus_per_node}, q.cpu.milli(), q.memory.milli()}) {
    h.Add(static_cast<uint64_t>(v));
  }
  h.Add(q.mig_profile);
  h.Add(q.gpu_models.size());
  for (const std::string& m : q.gpu_models) h.Add(m);
}

std::vector<const model::Cluster*> SortedByName(const model::Config& config) {
  std::vector<const model::Cluster*> sorted;
  sorted.reserve(config.clusters.size());
  for (const model::Cluster& c : config.clusters) sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  return sorted;
}

// Units of `currency` per unit of the cluster's (ClusterEntry::cost_scale: candidates are
// ranked by cost in one currency, the first cluster's by name); 1 without a rate.
double CostScale(const model::CurrencyConverter& rates, const model::Cluster& cluster, const std::string& currency) {
  const std::map<std::string, double> reach = rates.RatesFrom(cluster.pricing.currency);
  auto rate = reach.find(currency);
  return rate == reach.end() ? 1.0 : rate->second;
}

}  // namespace

void Placer::NoteOutages() {
  for (ClusterEntry& entry : clusters_) entry.down_reason.clear();
  for (const auto& [name, o] : snapshot_.observed) {
    auto it = caches_.cluster_index.find(name);
    if (it == caches_.cluster_index.end() || o.healthy) continue;
    clusters_[it->second].down_reason = o.down_reason.empty() ? "cluster unhealthy" : o.down_reason;
  }
}

void Placer::SetUpClusters(const std::shared_ptr<const PodMix>& mix, uint64_t mix_fingerprint) {
  PlacerCaches& k = caches_;
  if (k.config != &config_ || k.hooks != snapshot_.hooks || k.revision != config_.revision ||
      k.clusters.size() != config_.clusters.size()) {
    // Another config, revision or hooks: nothing evaluated for the old ones holds.
    k.clusters.clear();
    k.cluster_index.clear();
    k.read_sets.clear();
    k.policy_classes.clear();
    k.shape_classes.clear();
    k.fit_tables.clear();
    k.resolved.clear();  // node pools and cluster indices may differ
    k.config = &config_;
    k.hooks = snapshot_.hooks;
    k.revision = config_.revision;
    const std::vector<const model::Cluster*> sorted = SortedByName(config_);
    for (const model::Cluster* c : sorted) {
      ClusterEntry entry{c, model::ClusterView(*c, &converter_), {}, {}, c->is_onprem()};
      entry.cost_scale = CostScale(converter_, *c, sorted.front()->pricing.currency);
      for (const model::NodePool& pool : c->node_pools) entry.pool_views.push_back(model::NodePoolView(pool));
      k.cluster_index.emplace(c->metadata.name, k.clusters.size());
      k.clusters.push_back(std::move(entry));
    }
  }
  const bool new_mix = k.mix_fingerprint != mix_fingerprint || k.mix_epoch == 0;
  if (new_mix) {
    k.mix_fingerprint = mix_fingerprint;
    ++k.mix_epoch;
  }
  caches_mix_epoch_ = k.mix_epoch;
  k.stats = PlanMemo::Stats();
  ++k.plans;
  for (const ClusterEntry& entry : clusters_) {
    for (const model::NodePool& pool : entry.cluster->node_pools)
      fleet_gpus_ += double{1} * pool.count * pool.gpu.count;
  }

  // Each cluster's inputs: its observed inventory (or none), then its running work in order.
  std::vector<InputHash> inputs(clusters_.size());
  std::vector<const ObservedCluster*> observed(clusters_.size(), nullptr);
  for (const auto& [name, o] : snapshot_.observed) {
    auto it = k.cluster_index.find(name);
    if (it == k.cluster_index.end()) continue;
    observed[it->second] = &o;
    AddObserved(inputs[it->second], o);
  }
  running_.reserve(snapshot_.running.size());
  lowest_preemptible_priority_.assign(clusters_.size(), std::numeric_limits<int>::max());
  // Running work comes grouped by cluster and tenant more often than not: the last
  // lookup of each is checked before the maps.
  std::string_view last_cluster;
  size_t last_index = 0;
  const std::string* last_tenant = nullptr;
  TenantState* last_tenant_state = nullptr;
  // Each running workload is read for its tenant, priority and request: thousands of
  // objects apart in memory, so the ones a few places ahead are fetched meanwhile.
  constexpr size_t kPrefetchAhead = 8;
  const std::vector<RunningWorkload>& all_running = snapshot_.running;
  for (size_t i = 0; i < all_running.size(); ++i) {
    const RunningWorkload& r = all_running[i];
    if (i + kPrefetchAhead < all_running.size()) {
      if (const model::Workload* ahead = all_running[i + kPrefetchAhead].workload) {
        __builtin_prefetch(&ahead->tenant);
        __builtin_prefetch(&ahead->resources);
        __builtin_prefetch(&ahead->preemptible);
      }
    }
    if (r.workload == nullptr) continue;
    if (last_cluster.empty() || r.binding.cluster != last_cluster) {
      auto it = k.cluster_index.find(r.binding.cluster);
      if (it == k.cluster_index.end()) continue;  // cluster no longer declared
      last_cluster = it->first;
      last_index = it->second;
    }
    const size_t c = last_index;
    if (r.workload->preemptible) {
      lowest_preemptible_priority_[c] = std::min(lowest_preemptible_priority_[c], r.workload->priority);
    }
    InputHash binding;
    AddRunning(binding, r);
    inputs[c].Add(binding.value());
    RunningEntry& entry = running_.emplace_back();
    entry.running = &r;
    entry.cluster = c;
    entry.key = binding.value();
    entry.gpu_milli = RequestedGpuMilli(r.workload->resources);
    if (last_tenant == nullptr || *last_tenant != r.workload->tenant) {
      last_tenant = &r.workload->tenant;
      last_tenant_state = &Tenant(r.workload->tenant);
    }
    last_tenant_state->usage.gpu_milli_in_use += entry.gpu_milli;
  }

  // Each cluster's running entries, in snapshot order (the order they are reserved in).
  running_begin_.assign(clusters_.size() + 1, 0);
  for (const RunningEntry& r : running_) ++running_begin_[r.cluster + 1];
  for (size_t c = 0; c < clusters_.size(); ++c) running_begin_[c + 1] += running_begin_[c];
  running_order_.resize(running_.size());
  std::vector<uint32_t> next(running_begin_.begin(), running_begin_.end() - 1);
  for (size_t i = 0; i < running_.size(); ++i) running_order_[next[running_[i].cluster]++] = static_cast<uint32_t>(i);

  std::vector<bool> rebuilt(clusters_.size(), false);
  std::vector<ClusterState> previous(clusters_.size());  // the states rebuilt, as the last plan left them
  for (size_t c = 0; c < clusters_.size(); ++c) {
    ClusterEntry& entry = clusters_[c];
    const uint64_t hash = inputs[c].value() ^ (observed[c] == nullptr ? 0 : 0x9e3779b97f4a7c15ull);
    const bool keep =
        entry.state.cluster != nullptr && entry.inputs == hash && entry.built_generation == entry.state.generation;
    std::shared_ptr<NodePacker> packer = new_mix ? nullptr : entry.state.packer;
    if (!keep) {
      previous[c] = std::move(entry.state);
      entry.state = BuildClusterState(*entry.cluster, observed[c]);
      entry.state.generation = (++k.epoch) << 32;
      entry.inputs = hash;
      entry.node_index.clear();
      for (size_t n = 0; n < entry.state.nodes.size(); ++n)
        entry.node_index.emplace(entry.state.nodes[n].name, static_cast<int>(n));
      entry.layout_nodes = ~size_t{0};  // other nodes may have come under the same count
      rebuilt[c] = true;
    }
    if (packer == nullptr) {
      Result<std::shared_ptr<NodePacker>> made = NodePacker::Create(*entry.cluster, kDefaultPackingPolicy, mix);
      if (made.ok()) packer = std::move(*made);
    }
    if (packer != nullptr && (packer != entry.state.packer || !keep)) {
      entry.state.packer = std::move(packer);
      entry.state.packer->SetHome(&entry.state);  // clusters_ does not grow during a plan: the address holds
    }
  }
  ReserveRunning(rebuilt);
  generation_of_.resize(clusters_.size());
  for (size_t c = 0; c < clusters_.size(); ++c) {
    ClusterEntry& entry = clusters_[c];
    if (rebuilt[c]) {
      if (observed[c] != nullptr) CapToObserved(entry.state, *observed[c]);
      // New inputs often build the state the last plan left: the work it placed is now
      // running (and, observed, reported), and nothing ended there. Then that state, and
      // every fit cached at its generation, stands.
      if (SameCapacity(previous[c], entry.state)) {
        std::shared_ptr<NodePacker> packer = std::move(entry.state.packer);
        entry.state = std::move(previous[c]);
        entry.state.packer = std::move(packer);
        if (entry.state.packer != nullptr) entry.state.packer->SetHome(&entry.state);
        rebuilt[c] = false;
      }
      entry.built_generation = entry.state.generation;
    }
    ++(rebuilt[c] ? k.stats.clusters_rebuilt : k.stats.clusters_kept);
    generation_of_[c] = entry.state.generation;
  }
}

void Placer::ReserveRunning(const std::vector<bool>& rebuilt) {
  for (size_t c = 0; c < clusters_.size(); ++c) {
    if (!rebuilt[c]) continue;
    ClusterState& state = clusters_[c].state;
    for (uint32_t i : RunningOn(c)) {
      RunningEntry& entry = running_[i];
      Resolve(entry, /*may_add_nodes=*/true);
      for (const auto& [n, fit] : entry.fits()) Reserve(state, n, fit, entry.running->workload->resources);
    }
  }
}

void Placer::Resolve(RunningEntry& entry, bool may_add_nodes) {
  if (entry.resolved) return;
  entry.resolved = true;
  const RunningWorkload& r = *entry.running;
  ClusterEntry& cluster = clusters_[entry.cluster];
  ClusterState& state = cluster.state;
  if (cluster.layout_nodes != state.nodes.size()) {
    InputHash layout;
    for (const NodeState& node : state.nodes) {
      layout.Add(node.name);
      layout.Add(static_cast<uint64_t>(node.pool));
      layout.Add(node.gpus.size());
    }
    cluster.layout = layout.value();
    cluster.layout_nodes = state.nodes.size();
  }
  InputHash key;
  key.Add(entry.key);
  key.Add(entry.cluster);
  key.Add(cluster.layout);
  auto [cached, added] = caches_.resolved.try_emplace(key.value());
  cached->second.plan = caches_.plans;
  if (!added) {
    entry.nodes = &cached->second.nodes;
    return;
  }
  NodeFits& fits = cached->second.nodes;
  bool as_it_was = true;  // every node found, none added: the answer holds for this layout
  for (size_t m = 0; m < r.binding.nodes.size() && m < r.binding.gpus.size(); ++m) {
    auto found = cluster.node_index.find(r.binding.nodes[m]);
    int n = found == cluster.node_index.end() ? -1 : found->second;
    if (n < 0) {
      as_it_was = false;
      // An observed cluster reports every node it has: this one is gone. A state kept
      // from the last plan already has every node its running work could be bound to.
      if (!may_add_nodes || snapshot_.observed.count(r.binding.cluster)) continue;
      // Bound to an elastic node an earlier plan added: it exists now.
      std::optional<int> added_node = AddObservedNode(state, r.binding.nodes[m]);
      if (!added_node) continue;
      n = *added_node;
      cluster.node_index.emplace(r.binding.nodes[m], n);
    }
    const model::NodePool& pool = state.cluster->node_pools[state.nodes[n].pool];
    NodeFit fit = FitOfBinding(pool, r.workload->resources, r.binding.gpus[m], r.binding.gpu_milli_each,
                               r.binding.mig_profile, r.binding.mig_start);
    fit.gpus.erase(std::remove_if(fit.gpus.begin(), fit.gpus.end(),
                                  [&](int g) { return g < 0 || g >= static_cast<int>(state.nodes[n].gpus.size()); }),
                   fit.gpus.end());
    fits.emplace_back(n, std::move(fit));
  }
  if (as_it_was) {
    entry.nodes = &fits;
    return;
  }
  entry.nodes = &own_fits_.emplace_back(std::move(fits));
  caches_.resolved.erase(cached);
}

void Placer::SweepResolved() {
  // Running work on a cluster that stays unchanged is resolved again only when its state
  // is rebuilt, which can be many plans later: entries stay a while unused.
  constexpr uint64_t kUnusedPlans = 16;
  auto& resolved = caches_.resolved;
  const size_t cap = 2 * running_.size() + 1024;
  if (resolved.size() <= cap) return;
  std::erase_if(resolved, [&](const auto& entry) { return entry.second.plan + kUnusedPlans < caches_.plans; });
  if (resolved.size() <= cap) return;
  std::erase_if(resolved, [&](const auto& entry) { return entry.second.plan != caches_.plans; });
}

PlanMemo::PlanMemo() : caches_(std::make_unique<PlacerCaches>()) {}
PlanMemo::~PlanMemo() = default;
PlanMemo::PlanMemo(PlanMemo&&) noexcept = default;
PlanMemo& PlanMemo::operator=(PlanMemo&&) noexcept = default;
const PlanMemo::Stats& PlanMemo::last_plan() const { return caches_->stats; }
void PlanMemo::Clear() { caches_ = std::make_unique<PlacerCaches>(); }

}  // namespace gpufed::placement

#include "policies/engine/case_state.h"

#include <algorithm>
#include <map>

#include "controller/common/text.h"
#include "controller/placement/search.h"
#include "controller/placement/snapshot_builder.h"

namespace gpufed::policy {
namespace {

// The case's clusters and tenants (all when none are named) and the repo's policies.
model::Config CaseConfig(const model::Config& repo, const model::PolicyTestCase& c, const std::string& tenant) {
  model::Config config;
  config.revision = repo.revision;
  config.root = repo.root;
  config.policies = repo.policies;
  config.lua_sources = repo.lua_sources;
  config.exchange_rates = repo.exchange_rates;  // the case prices and budgets as the repository does
  for (const model::Cluster& cluster : repo.clusters) {
    if (c.clusters.empty() || std::count(c.clusters.begin(), c.clusters.end(), cluster.metadata.name)) {
      config.clusters.push_back(cluster);
    }
  }
  for (const model::Tenant& t : repo.tenants) {
    if (c.tenants.empty() || std::count(c.tenants.begin(), c.tenants.end(), t.metadata.name) ||
        t.metadata.name == tenant) {
      config.tenants.push_back(t);
    }
  }
  return config;
}

std::string At(const model::SourceLocation& at) { return at.file + ":" + std::to_string(at.line); }

// Why `w` has no room on the cluster of `state` (or on node `only` of it), with the work
// bound before it.
std::string WhyNoRoom(const placement::ClusterState& state, const model::Workload& w, int only) {
  const model::Cluster& cluster = *state.cluster;
  std::string mismatch;
  int free = 0, total = 0;
  for (size_t n = 0; n < state.nodes.size(); ++n) {
    if (only >= 0 && static_cast<int>(n) != only) continue;
    const model::NodePool& pool = cluster.node_pools[state.nodes[n].pool];
    std::string m = placement::PoolShapeMismatch(pool, w.resources);
    if (!m.empty()) {
      if (mismatch.empty()) mismatch = m;
      continue;
    }
    free += state.nodes[n].FreeWholeGpus();
    total += pool.gpu.count;
  }
  if (total == 0) return mismatch.empty() ? "the cluster has no node pools" : mismatch;
  return "needs " + std::to_string(w.resources.total_gpus()) + " GPU(s), " + std::to_string(free) + " of " +
         std::to_string(total) + " are free" + (only >= 0 ? " on the node" : "") +
         " (after the running entries before it)";
}

// Binds the given running work in order, as the placer would bind it (its capacity
// search; policies do not apply: the work runs already).
Status BindRunning(const std::vector<model::GivenRunning>& given, const std::string& default_tenant,
                   placement::SnapshotFacts& facts, CaseState& s) {
  const std::map<std::string, placement::ObservedCluster>& observed = facts.observed;
  std::map<std::string, placement::ClusterState> states;
  s.running.reserve(given.size());  // snapshot.running points into it
  for (const model::GivenRunning& entry : given) {
    const std::string who = "running entry '" + entry.name + "' (" + At(entry.location) + ")";
    const model::Cluster* cluster = s.config.FindCluster(entry.cluster);
    if (cluster == nullptr) {
      std::vector<std::string> names;
      names.reserve(s.config.clusters.size());
      for (const model::Cluster& c : s.config.clusters) names.push_back(c.metadata.name);
      return InvalidArgument(who + ": cluster '" + entry.cluster + "' is not one of this case's clusters (" +
                             Join(names, ", ") + ")");
    }
    if (observed.count(entry.cluster)) {
      return InvalidArgument(who + ": cluster " + entry.cluster + " is unhealthy in this case (given.unhealthy)");
    }
    placement::ClusterState& state =
        states.try_emplace(entry.cluster, placement::BuildClusterState(*cluster)).first->second;
    if (!entry.node.empty() && entry.workload.resources.nodes > 1) {
      return InvalidArgument(who + ": a gang of " + std::to_string(entry.workload.resources.nodes) +
                             " nodes cannot be bound to one node; leave `node` out");
    }
    int only = entry.node.empty() ? -1 : state.FindNodeIndex(entry.node);
    if (!entry.node.empty() && only < 0) {
      // A node elasticity added ("h100-2" past the pool's count), as the placer accepts it.
      only = placement::AddObservedNode(state, entry.node).value_or(-1);
    }
    if (!entry.node.empty() && only < 0) {
      std::vector<std::string> names;
      names.reserve(state.nodes.size());
      for (const placement::NodeState& n : state.nodes) names.push_back(n.name);
      return InvalidArgument(who + ": cluster " + entry.cluster + " has no node '" + entry.node +
                             "' (nodes: " + Join(names, ", ") + ")");
    }
    model::Workload& w = s.running.emplace_back(entry.workload);
    w.metadata.name = entry.name;
    if (w.tenant.empty()) w.tenant = default_tenant;
    const std::vector<bool> all_pools(cluster->node_pools.size(), true);
    std::optional<placement::Placement> found = placement::FindPlacement(state, w.resources, all_pools, only);
    if (!found) {
      return InvalidArgument(who + ": cannot be bound on " + entry.cluster +
                             (entry.node.empty() ? "" : " node " + entry.node) + ": " + WhyNoRoom(state, w, only));
    }
    const std::vector<int> used = placement::ApplyPlacement(state, *found, w.resources);
    placement::RunningWorkload& r = facts.running.emplace_back();
    r.workload = &w;
    r.binding.cluster = entry.cluster;
    r.binding.pool = cluster->node_pools[found->pool].name;
    for (size_t m = 0; m < used.size(); ++m) {
      const placement::NodeFit& fit = found->nodes[m].second;
      r.binding.nodes.push_back(state.nodes[used[m]].name);
      r.binding.gpus.push_back(fit.gpus);
      r.binding.gpu_milli_each = fit.milli_each;
      r.binding.mig_profile = fit.mig_profile;
      r.binding.mig_start = fit.mig_start;
    }
  }
  return Status::Ok();
}

// A case's given spend is the tenant's spend this period as a controller would count it
// (metered and running estimates included): it takes the place of the Tenant's declared
// `spent` (a field it leaves out keeps the declared one). A tenant the case does not
// declare has no budget; its spend is passed on as charged now.
void GiveUsage(const std::map<std::string, model::GivenSpend>& usage, Duration now, model::Config& config,
               placement::SnapshotFacts& facts) {
  for (const auto& [tenant, spend] : usage) {
    model::Tenant* declared = nullptr;
    for (model::Tenant& t : config.tenants) {
      if (t.metadata.name == tenant) declared = &t;
    }
    if (declared == nullptr) {
      facts.metered.push_back({tenant, spend.spent.value_or(Money()), spend.cloud_spent.value_or(Money()), now});
      continue;
    }
    declared->budget.spent = spend.spent.value_or(declared->budget.spent);
    declared->budget.cloud_spent = spend.cloud_spent.value_or(declared->budget.cloud_spent);
  }
}

}  // namespace

Result<std::unique_ptr<CaseState>> BuildCaseState(const model::Config& repo, const model::PolicyTest& test,
                                                  const model::PolicyTestCase& c, placement::PolicyHooks* hooks) {
  auto s = std::make_unique<CaseState>();
  const model::Given given = c.given.Over(test.given);
  const std::string default_tenant = !c.workload.tenant.empty() ? c.workload.tenant
                                     : !c.tenants.empty()       ? c.tenants.front()
                                     : !repo.tenants.empty()    ? repo.tenants.front().metadata.name
                                                                : "";
  s->config = CaseConfig(repo, c, default_tenant);
  s->workload = c.workload;
  s->workload.metadata.name = test.metadata.name + "-case";
  s->workload.tenant = default_tenant;

  Duration now = c.now;
  if (given.waited) {
    if (c.workload.submitted_at.millis() > 0) {
      return InvalidArgument("given.waited and workload.submittedAt both say when it was queued: write one of them");
    }
    if (!c.now_set) now = *given.waited;
    if (now < *given.waited) {
      return InvalidArgument("given.waited (" + given.waited->ToString() + ") is longer than now (" + now.ToString() +
                             ")");
    }
    s->workload.submitted_at = Duration::FromMillis(now.millis() - given.waited->millis());
  }
  placement::SnapshotFacts facts;
  facts.config = &s->config;
  facts.now = now;
  facts.hooks = hooks;
  facts.onprem_queue_depth = given.queue_ahead.value_or(0);
  if (given.usage) GiveUsage(*given.usage, now, s->config, facts);
  if (given.unhealthy) {
    // An unhealthy cluster is one whose connector reports it so: no nodes to place on.
    for (const std::string& name : *given.unhealthy) {
      if (s->config.FindCluster(name) == nullptr) {
        return InvalidArgument("given.unhealthy: cluster '" + name + "' is not one of this case's clusters");
      }
      facts.observed[name].healthy = false;
      facts.observed[name].down_reason = "cluster unhealthy (given.unhealthy)";
    }
  }
  if (given.running) {
    if (Status bound = BindRunning(*given.running, default_tenant, facts, *s); !bound.ok()) return bound;
  }
  facts.pending = {&s->workload};
  s->snapshot = placement::BuildSnapshot(std::move(facts));
  return s;
}

}  // namespace gpufed::policy

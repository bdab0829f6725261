#include "controller/reconcile/connector_set.h"

#include <algorithm>

#include "controller/common/text.h"

namespace gpufed::reconcile {

const char* ConnectorSet::ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kReplaced: return "replaced";
    case ChangeKind::kRemoved: return "removed";
    case ChangeKind::kRetired: return "retired";
    case ChangeKind::kReturned: return "returned";
  }
  return "unknown";
}

Result<ConnectorSet::Prepared> ConnectorSet::Prepare(const std::vector<model::Cluster>& wanted,
                                                     const Maker& make) const {
  Prepared out;
  out.wanted = wanted;
  std::vector<std::string> problems;
  for (const model::Cluster& cluster : wanted) {
    auto it = entries_.find(cluster.metadata.name);
    if (it != entries_.end() && model::SameDeclaration(it->second.declared, cluster)) continue;
    Result<std::unique_ptr<connectors::Connector>> made = make(cluster);
    if (!made.ok()) {
      problems.push_back(made.status().message());
      continue;
    }
    out.made[cluster.metadata.name] = {cluster, std::move(made).value()};
  }
  if (!problems.empty()) return FailedPrecondition(Join(problems, "; "));
  return out;
}

std::vector<ConnectorSet::Change> ConnectorSet::Commit(Prepared prepared) {
  std::vector<Change> changes;
  std::set<std::string> wanted;
  for (const model::Cluster& c : prepared.wanted) wanted.insert(c.metadata.name);
  for (auto& [name, entry] : entries_) {
    const bool made = prepared.made.count(name) > 0;
    if (!wanted.count(name)) {
      if (!entry.retiring) changes.push_back({ChangeKind::kRemoved, name, entry.declared.connector.type});
      entry.retiring = true;
    } else if (entry.retiring && !made) {
      entry.retiring = false;
      changes.push_back({ChangeKind::kReturned, name, entry.declared.connector.type});
    }
  }
  for (auto& [name, made] : prepared.made) {
    auto [it, added] = entries_.try_emplace(name);
    // The old connector (if any) is destroyed here, after its replacement exists: the
    // pass that runs next calls only the new one.
    it->second = Entry{std::move(made.first), std::move(made.second), false};
    changes.push_back({added ? ChangeKind::kAdded : ChangeKind::kReplaced, name, it->second.declared.connector.type});
  }
  std::stable_sort(changes.begin(), changes.end(),
                   [](const Change& a, const Change& b) { return a.cluster < b.cluster; });
  return changes;
}

std::vector<ConnectorSet::Change> ConnectorSet::RetireIdle(const std::set<std::string>& busy) {
  std::vector<Change> changes;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.retiring && !busy.count(it->first)) {
      changes.push_back({ChangeKind::kRetired, it->first, it->second.declared.connector.type});
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return changes;
}

connectors::Connector* ConnectorSet::Find(const std::string& cluster) const {
  auto it = entries_.find(cluster);
  return it == entries_.end() ? nullptr : it->second.connector.get();
}

const model::Cluster* ConnectorSet::DeclarationOf(const std::string& cluster) const {
  auto it = entries_.find(cluster);
  return it == entries_.end() ? nullptr : &it->second.declared;
}

bool ConnectorSet::retiring(const std::string& cluster) const {
  auto it = entries_.find(cluster);
  return it != entries_.end() && it->second.retiring;
}

std::vector<std::string> ConnectorSet::Names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(name);
  return out;
}

ConnectorSet::Maker RegistryMaker(const connectors::ConnectorRegistry& registry, const gpufed::Clock* clock,
                                  const std::string& state_dir, ConnectorAccess access, const Logger* log,
                                  int64_t leader_epoch) {
  return [&registry, clock, state_dir, access, log, leader_epoch](const model::Cluster& cluster) {
    connectors::FactoryContext ctx;
    ctx.clock = clock;
    ctx.log = log;
    ctx.state_dir = state_dir + "/connectors/" + cluster.metadata.name;
    ctx.read_only = access == ConnectorAccess::kReadOnly;
    ctx.leader_epoch = leader_epoch;
    return registry.Create(cluster, ctx);
  };
}

}  // namespace gpufed::reconcile

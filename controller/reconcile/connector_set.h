#pragma once
// The federation's connectors, one per cluster, kept in step with the active revision.
//
// A revision that adds, changes or removes a Cluster changes the set in two steps, so a
// revision is taken whole or not at all: Prepare makes the connectors the revision needs
// (a cluster whose connector cannot be made rejects the revision, and the set stays as it
// was), and Commit swaps them in once the revision is active.
// - A new cluster gets its connector; the loop observes it before it places anything there.
// - A cluster whose declaration changed gets a new connector in place of the old one: the
//   next call goes to the new one, and running work is found again by its action key.
// - A removed cluster is retiring: it gets no new work (the snapshot holds only the
//   revision's clusters), and its connector stays until no attempt runs there
//   (RetireIdle), so running work is still observed to its end or cancelled.
// Not thread-safe: the owner serialises calls with the passes that use the connectors.
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/core/registry.h"
#include "controller/common/status.h"
#include "controller/model/cluster.h"

namespace gpufed::reconcile {

class ConnectorSet {
 public:
  // Makes the connector for one declared cluster (the registry, with the cluster's
  // private folder); its error names what is wrong.
  using Maker = std::function<Result<std::unique_ptr<connectors::Connector>>(const model::Cluster&)>;

  enum class ChangeKind {
    kAdded,     // a new cluster: a connector was made
    kReplaced,  // the declaration changed: a new connector took the old one's place
    kRemoved,   // gone from the revision; its connector stays while attempts run there
    kRetired,   // a removed cluster's last attempt ended: its connector is gone
    kReturned,  // a retiring cluster is declared again, unchanged: it takes work again
  };
  static const char* ChangeKindName(ChangeKind kind);

  struct Change {
    ChangeKind kind = ChangeKind::kAdded;
    std::string cluster;
    std::string connector_type;  // of the connector now serving (the old one for kRemoved/kRetired)
  };

  // Connectors a revision needs that the set does not hold yet.
  struct Prepared {
    std::map<std::string, std::pair<model::Cluster, std::unique_ptr<connectors::Connector>>> made;
    std::vector<model::Cluster> wanted;
  };

  // Makes a connector for each cluster in `wanted` that is new or declared differently.
  // Problems: one line per cluster whose connector cannot be made ("cluster X: ...").
  Result<Prepared> Prepare(const std::vector<model::Cluster>& wanted, const Maker& make) const;
  // Swaps in what Prepare made and marks the clusters `wanted` no longer holds as
  // retiring. Returns the changes in cluster-name order.
  std::vector<Change> Commit(Prepared prepared);
  // Drops the connectors of retiring clusters that no attempt in `busy` (cluster names)
  // runs on any more.
  std::vector<Change> RetireIdle(const std::set<std::string>& busy);

  connectors::Connector* Find(const std::string& cluster) const;
  // The declaration the cluster's connector was made from (null: no connector).
  const model::Cluster* DeclarationOf(const std::string& cluster) const;
  bool retiring(const std::string& cluster) const;
  // Every cluster with a connector (retiring ones too), by name.
  std::vector<std::string> Names() const;
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    model::Cluster declared;
    std::unique_ptr<connectors::Connector> connector;
    bool retiring = false;
  };
  std::map<std::string, Entry> entries_;
};

// The Maker of `run` and `plan --state`: the registry's connector for the cluster's type,
// with its private folder <state_dir>/connectors/<cluster> and the run-wide settings.
// kReadOnly (`plan --state`): connectors that observe and change nothing
// (connectors::FactoryContext::read_only). `registry`, `clock` and `log` (null: the
// connectors log to standard error) must outlive the Maker. `leader_epoch`: the term a
// replica leads (connectors::FactoryContext::leader_epoch), 0 for one process alone.
enum class ConnectorAccess { kReadWrite, kReadOnly };
ConnectorSet::Maker RegistryMaker(const connectors::ConnectorRegistry& registry, const gpufed::Clock* clock,
                                  const std::string& state_dir, ConnectorAccess access = ConnectorAccess::kReadWrite,
                                  const Logger* log = nullptr, int64_t leader_epoch = 0);

}  // namespace gpufed::reconcile

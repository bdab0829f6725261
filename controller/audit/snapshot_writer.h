#pragma once
// Stores a pass's placer inputs (format 4, inputs.h) in a SnapshotStore, writing each
// workload document and running entry once rather than once per pass.
//
// A controller plans every few seconds over the same running work; inline, each pass
// re-serialised and re-wrote every running workload (a week of the Philly trace wrote
// 450 MB of snapshots, mostly the same entries). The writer remembers, per workload it
// saw in the last pass, the workload and entry it stored and their names, and per cluster
// its last observed report; a workload or report that compares equal (all fields, not a
// fingerprint) reuses them.
#include <cstdint>
#include <string>
#include <unordered_map>

#include "controller/audit/snapshot_store.h"
#include "controller/model/workload.h"
#include "controller/placement/plan.h"

namespace gpufed::audit {

class SnapshotWriter {
 public:
  // `store` must outlive the writer.
  explicit SnapshotWriter(SnapshotStore* store) : store_(store) {}

  // Stores the snapshot and every object it names durably (one sync), and returns the
  // snapshot's name for the decisions' `inputs`.
  Result<std::string> Write(const placement::Snapshot& snapshot, const std::string& repo_root);

  struct Stats {
    uint64_t workloads_serialised = 0;  // documents built (the rest were remembered)
    uint64_t entries_serialised = 0;    // running entries built
    uint64_t clusters_serialised = 0;   // observed cluster reports built
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Remembered {
    model::Workload workload;      // as last stored
    std::string document;          // its name
    bool has_entry = false;        // a running entry stored for it
    placement::Binding binding;    // that entry's fields
    Duration started_at;
    Duration last_checkpoint;
    int attempt = 0;
    std::string entry;             // its name
    uint64_t used = 0;             // the last Write that read it
  };
  struct RememberedCluster {
    placement::ObservedCluster observed;  // as last stored
    std::string name;                     // its object's name
    uint64_t used = 0;
  };
  Result<Remembered*> Document(const model::Workload& workload);
  Result<std::string> Entry(const placement::RunningWorkload& running);
  Result<std::string> Observed(const std::string& cluster, const placement::ObservedCluster& observed);

  SnapshotStore* store_;
  // Keyed by address (the loop's specs live at stable addresses), checked by value.
  std::unordered_map<const model::Workload*, Remembered> remembered_;
  // A federation of 1,000 clusters reports mostly unchanged inventories between passes.
  std::unordered_map<std::string, RememberedCluster> clusters_;  // by cluster name
  uint64_t writes_ = 0;
  Stats stats_;
};

}  // namespace gpufed::audit

#pragma once
// Slurm's view (nodes with GRES, jobs with states) turned into the connector's
// Observation, against the node pools the Cluster declares.
//
// Nodes: each Slurm node is split into one observed node per GPU group, because a node
// pool has one GPU shape and Slurm nodes often mix them (whole A100s next to MIG-like
// slices). A group is one whole-GPU GRES type ("gpu:a100:2") or all MIG-like types of
// one base ("gpu:a100_1g.5gb:4", "gpu:a100_3g.20gb:1"). The first whole-GPU group keeps
// the node's name; the others are named "<node>:<type>" and "<node>:<base>+mig". A node
// without GPUs is one group under its own name. Pools are matched by name (pool name =
// GRES type), else by GPU model ("a100" matches "A100-40GB"); MIG groups need a pool
// with sharing: mig that allows the profiles.
//
// Jobs: gpufed's jobs (found by their comment tag) with Slurm states mapped to RunState.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/slurm/api.h"
#include "connectors/slurm/job_request.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::slurm {

struct NodeGroup {
  std::string observed_name;   // the ObservedNode's name
  std::string slurm_node;
  std::string gres_type;       // whole-GPU type ("a100"); empty for MIG and GPU-less groups
  std::string mig_base;        // MIG groups: the base ("a100"); requests use "<base>_<profile>"
  std::string pool;            // matched node pool; empty when none matches
  std::string model;           // the pool's GPU model
  std::vector<std::string> mig_types;  // MIG groups: the node's types of this base
};

// Ready for new work: idle, mixed or allocated, and not drained, failing, in
// maintenance, powered down or unresponsive.
bool NodeReady(const SlurmNode& node);

// Groups and observed nodes of `nodes` that belong to `partition` (all when empty).
// `groups` is filled by observed name for Apply's node pinning. `pending` are jobs gpufed
// pinned to nodes that Slurm has not started yet: Slurm shows their GRES as free until
// they start, so they are counted as used here, or the placer would place more work on
// the same GPUs every pass (and nothing would ever burst).
std::vector<ObservedNode> ObserveNodes(const std::vector<SlurmNode>& nodes, const model::Cluster& cluster,
                                       const std::string& partition, std::map<std::string, NodeGroup>* groups,
                                       const std::vector<SlurmJob>& pending = {});

// RunState for a Slurm job state. `preempted`: gpufed asked for this job to be
// preempted, so its cancellation is a preemption. `lost` is set for node failures.
RunState MapJobState(const std::string& slurm_state, bool preempted, bool* lost);

struct TimeFrame {
  int64_t unix_now = 0;        // wall clock, Unix seconds
  Duration clock_now;          // the CallContext clock at the same moment
  Duration FromUnix(int64_t unix_seconds) const {
    return Duration::FromMillis(clock_now.millis() - (unix_now - unix_seconds) * 1000);
  }
};

// The ObservedWorkload of one gpufed job. Cost and GPU-seconds come from the GRES the
// job holds and the Cluster's price for the matching pool's model (MIG slices count as
// compute_slices/7 of a GPU).
ObservedWorkload ObserveJob(const SlurmJob& job, const JobTag& tag, const model::Cluster& cluster, bool preempted,
                            const TimeFrame& frame);

}  // namespace gpufed::connectors::slurm

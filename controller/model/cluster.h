#pragma once
// A Cluster as declared in the policy repository: where it is, how to reach it,
// what hardware it has and what it costs. No I/O; built by config/.
#include <map>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/quantity.h"
#include "controller/model/connector_spec.h"
#include "controller/model/meta.h"

namespace gpufed::model {

enum class GpuSharing { kNone, kMig, kMemory };

const char* GpuSharingName(GpuSharing sharing);

struct GpuSpec {
  std::string model;
  int count = 0;               // GPUs per node
  Quantity memory;             // per GPU, bytes
  bool nvlink = false;         // all GPUs of a node share one NVLink domain
  GpuSharing sharing = GpuSharing::kNone;
  std::vector<std::string> mig_profiles;  // allowed profiles when sharing == kMig
  bool operator==(const GpuSpec&) const = default;
};

struct NodePool {
  std::string name;
  int count = 0;               // nodes present now
  Quantity cpu;                // per node, cores (milli precision)
  Quantity memory;             // per node, bytes
  bool spot = false;
  GpuSpec gpu;
  bool operator==(const NodePool&) const = default;
};

struct ClusterAttributes {
  bool encryption_at_rest = false;
  std::vector<std::string> certifications;
  std::map<std::string, std::string> labels;
  bool operator==(const ClusterAttributes&) const = default;
};

struct Elasticity {
  int max_nodes = 0;           // total nodes the cluster may grow to; 0 = fixed size
  Duration provision_delay;
  Duration idle_timeout;
  bool operator==(const Elasticity&) const = default;
};

// How long gpufed waits on a cluster that stops answering its connector (spec.health).
// Until unhealthyAfter nothing changes; then nothing new is placed there. Its attempts
// stay its own (a partition is not an end: slurmd keeps running jobs while slurmctld is
// down) until it confirms they ended, or until lostAfter: then each is requeued, and
// cancelled there when the cluster answers again.
struct ClusterHealth {
  Duration unhealthy_after = Duration::FromSeconds(120);
  Duration lost_after = Duration::FromSeconds(600);
  bool operator==(const ClusterHealth&) const = default;
};

struct Pricing {
  std::string currency;
  std::map<std::string, Money> gpu_hour;       // by GPU model
  std::map<std::string, Money> spot_gpu_hour;  // by GPU model
  Money egress_per_gib;
  SourceLocation currency_location;  // spec.pricing.currency (validate names it beside a budget's)
  bool operator==(const Pricing&) const = default;
};

struct Cluster {
  ObjectMeta metadata;
  std::string provider;        // "onprem" or a cloud name
  std::string region;
  std::string zone;            // compliance zone
  ConnectorSpec connector;    // spec.connector: the provider and its fields (connector_spec.h)
  ClusterAttributes attributes;
  std::vector<NodePool> node_pools;
  Elasticity elasticity;
  Pricing pricing;
  ClusterHealth health;
  double bandwidth_gbps = 10;
  std::vector<std::string> datasets;

  bool is_onprem() const { return provider == "onprem"; }
  bool holds_dataset(const std::string& dataset) const;
  int present_nodes() const;
  // Every field, the source location included (SameDeclaration ignores where it was written).
  bool operator==(const Cluster&) const = default;
};

// A path a Cluster's connector block names (tokenFile, caFile, kubeconfig): absolute as
// written, or relative to the folder of the file that declares the cluster.
std::string DeclaredPath(const Cluster& cluster, const std::string& path);

// The same Cluster as declared, wherever in the repository it was written: what decides
// whether a new revision changes the cluster's connector.
bool SameDeclaration(const Cluster& a, const Cluster& b);

}  // namespace gpufed::model

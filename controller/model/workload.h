#pragma once
// A Workload: what a tenant asks to run, with its data, cost cap and run spec.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/quantity.h"
#include "controller/model/meta.h"

namespace gpufed::model {

enum class WorkloadType { kTraining, kFineTuning, kInference, kRendering, kSimulation, kBatch };
enum class Sensitivity { kPublic, kInternal, kConfidential, kRestricted };
enum class Topology { kAny, kSameNode };

const char* WorkloadTypeName(WorkloadType type);
const char* SensitivityName(Sensitivity sensitivity);
const char* TopologyName(Topology topology);

struct ResourceRequest {
  int gpus = 0;                    // whole GPUs, or 1 with a fraction below
  Quantity gpu_memory;             // per GPU, bytes; 0 = any
  Quantity gpu_share;              // fraction of one GPU in milli (460m); 0 = whole GPUs
  std::vector<std::string> gpu_models;  // allowed models; empty = any
  std::string mig_profile;         // an explicit MIG profile, e.g. "1g.10gb"
  Topology topology = Topology::kAny;
  int nodes = 1;                   // multi-node gangs: nodes x gpus_per_node
  int gpus_per_node = 0;
  Quantity cpu;                    // cores
  Quantity memory;                 // bytes

  // A request for part of one GPU (by share, by memory below a whole GPU, or MIG).
  bool is_fractional() const { return gpu_share.milli() > 0 || !mig_profile.empty(); }
  int total_gpus() const { return nodes > 1 ? nodes * gpus_per_node : gpus; }
  bool operator==(const ResourceRequest&) const = default;
};

struct DataSpec {
  std::string dataset;
  Quantity size;
  Sensitivity sensitivity = Sensitivity::kInternal;
  bool pii = false;
  std::vector<std::string> residency;
  bool operator==(const DataSpec&) const = default;
};

struct CheckpointSpec {
  bool enabled = false;
  Duration interval;
  std::string uri;
  bool operator==(const CheckpointSpec&) const = default;
};

struct RunSpec {
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string working_dir;
  bool operator==(const RunSpec&) const = default;
};

struct Workload {
  ObjectMeta metadata;
  std::string tenant;
  std::string priority_class;      // as written, when a class name was used
  int priority = 0;                // resolved integer
  bool has_priority = false;       // an integer was written, or a class resolved
  WorkloadType type = WorkloadType::kBatch;
  ResourceRequest resources;
  Duration duration_hint = Duration::FromSeconds(3600);
  bool has_duration_hint = false;
  DataSpec data;
  CheckpointSpec checkpoint;
  bool preemptible = false;
  bool spot = false;
  std::optional<Money> max_cost;
  SourceLocation max_cost_location;
  Duration submitted_at;           // offset from the plan's start
  RunSpec run;
  bool operator==(const Workload&) const = default;
};

}  // namespace gpufed::model

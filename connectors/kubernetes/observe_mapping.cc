#include "connectors/kubernetes/observe_mapping.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "connectors/kubernetes/kube_api.h"
#include "controller/common/quantity.h"
#include "controller/common/action_key.h"
#include "controller/model/limits.h"
#include "controller/model/mig_profile.h"

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;

constexpr int kSlicesPerGpu = model::kMigComputeSlicesPerGpu;
// A node that claims more GPUs than model::kMaxGpusPerNode (the bound the loader puts on a
// pool's gpu.count) is a broken answer, and counting its GPUs one by one would not end.
constexpr int64_t kMaxUnits = std::numeric_limits<int64_t>::max() / 1000;  // whole units a milli value holds

// Keys under which cloud providers and provisioners name a node's pool.
constexpr const char* kPoolLabels[] = {"gpufed.io/node-pool", "cloud.google.com/gke-nodepool",
                                       "eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool",
                                       "karpenter.sh/nodepool"};

// A request, limit or allocatable amount in milli-units; 0 for what is not one: not a
// quantity, out of Quantity's range, or negative (which no resource amount is).
int64_t Milli(const json& value) {
  if (value.is_number_integer()) {
    const int64_t units = value.get<int64_t>();
    return units < 0 || units > kMaxUnits ? 0 : units * 1000;
  }
  if (!value.is_string()) return 0;
  Result<Quantity> q = Quantity::Parse(value.get<std::string>());
  return q.ok() ? std::max<int64_t>(0, q->milli()) : 0;
}

// Sums of amounts saturate instead of overflowing: many pods near the largest quantity
// (fuzz_kube_response) only mean "the node is full".
void AddSaturating(int64_t* sum, int64_t amount) {
  if (__builtin_add_overflow(*sum, amount, sum)) *sum = std::numeric_limits<int64_t>::max();
}

int64_t Count(const json& map, const std::string& key) {
  if (!map.is_object() || !map.contains(key)) return 0;
  return Milli(map[key]) / 1000;
}

std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// One of gpufed's numeric annotations: anyone who may edit the Job can change it, so a
// value outside [0, 2^40] (seconds or GPU-milli; far beyond any real one) reads as 0
// rather than overflowing the durations computed from it (fuzz_kube_response).
int64_t AnnotationCount(const json& annotations, const char* key) {
  const int64_t v = std::atoll(Str(annotations, key).c_str());
  return v >= 0 && v <= (int64_t{1} << 40) ? v : 0;
}

const json& Obj(const json& j, const char* key) {
  static const json kEmpty = json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

const json& Arr(const json& j, const char* key) {
  static const json kEmpty = json::array();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

std::vector<std::string> Tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : Upper(s)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      cur.push_back(c);
    } else if (!cur.empty()) {
      out.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// A declared model ("A100-80GB") matches a GFD product ("NVIDIA-A100-SXM4-80GB") when
// every token of the model is a token of the product.
bool ModelMatches(const std::string& model, const std::string& product) {
  std::vector<std::string> want = Tokens(model);
  std::vector<std::string> have = Tokens(product);
  if (want.empty()) return false;
  for (const std::string& t : want) {
    if (std::find(have.begin(), have.end(), t) == have.end()) return false;
  }
  return true;
}

// The profile in a single-strategy MIG product label: "...-MIG-1g.10gb" -> "1g.10gb".
std::string SingleMigProfile(const std::string& product) {
  size_t pos = product.rfind("-MIG-");
  return pos == std::string::npos ? "" : product.substr(pos + 5);
}

}  // namespace

std::map<std::string, NodeUsage> UsageByNode(const std::vector<json>& pods) {
  std::map<std::string, NodeUsage> out;
  for (const json& pod : pods) {
    std::string node = Str(Obj(pod, "spec"), "nodeName");
    std::string phase = Str(Obj(pod, "status"), "phase");
    if (node.empty() || phase == "Succeeded" || phase == "Failed") continue;
    NodeUsage& u = out[node];
    for (const json& c : Arr(Obj(pod, "spec"), "containers")) {
      const json& res = Obj(c, "resources");
      const json& req = Obj(res, "requests");
      const json& lim = Obj(res, "limits");
      if (req.contains("cpu")) AddSaturating(&u.cpu_milli, Milli(req["cpu"]));
      if (req.contains("memory")) AddSaturating(&u.memory, Milli(req["memory"]) / 1000);
      for (const auto& [name, value] : lim.items()) {
        if (name.find('/') != std::string::npos) AddSaturating(&u.extended[name], Milli(value) / 1000);
      }
    }
  }
  return out;
}

MappedNode MapNode(const json& node, const model::Cluster& cluster, const NodeUsage& used) {
  MappedNode out;
  const json& meta = Obj(node, "metadata");
  const json& status = Obj(node, "status");
  out.node.name = Str(meta, "name");
  for (const auto& [k, v] : Obj(meta, "labels").items()) {
    if (v.is_string()) out.facts.labels[k] = v.get<std::string>();
  }
  for (const json& t : Arr(Obj(node, "spec"), "taints")) {
    out.facts.taints.push_back({Str(t, "key"), Str(t, "value"), Str(t, "effect")});
  }
  bool ready = false;
  for (const json& c : Arr(status, "conditions")) {
    if (Str(c, "type") == "Ready") ready = Str(c, "status") == "True";
  }
  const json& spec = Obj(node, "spec");
  bool cordoned = spec.contains("unschedulable") && spec["unschedulable"].is_boolean() && spec["unschedulable"].get<bool>();
  out.node.ready = ready && !cordoned;

  // Pool: by a node-pool label first, then by GPU model.
  const auto& labels = out.facts.labels;
  const model::NodePool* pool = nullptr;
  for (const char* key : kPoolLabels) {
    auto it = labels.find(key);
    if (it == labels.end()) continue;
    for (const model::NodePool& p : cluster.node_pools) {
      if (p.name == it->second) {
        pool = &p;
        out.pool_selector = {{key, it->second}};
      }
    }
    if (pool) break;
  }
  auto product_it = labels.find(kLabelGpuProduct);
  std::string product = product_it == labels.end() ? "" : product_it->second;
  if (pool == nullptr && !product.empty()) {
    bool is_mig = product.find("-MIG-") != std::string::npos;
    for (const model::NodePool& p : cluster.node_pools) {
      if (!ModelMatches(p.gpu.model, product)) continue;
      // Prefer the pool whose sharing agrees with the node's MIG mode.
      bool agrees = (p.gpu.sharing == model::GpuSharing::kMig) == is_mig;
      if (pool == nullptr || agrees) pool = &p;
      if (agrees) break;
    }
    if (pool) out.pool_selector = {{kLabelGpuProduct, product}};
  }
  if (pool) out.node.pool = pool->name;

  const json& capacity = Obj(status, "capacity");
  const json& allocatable = Obj(status, "allocatable");
  out.node.free_cpu_milli = std::max<int64_t>(0, (allocatable.contains("cpu") ? Milli(allocatable["cpu"]) : 0) - used.cpu_milli);
  out.node.free_memory =
      std::max<int64_t>(0, (allocatable.contains("memory") ? Milli(allocatable["memory"]) / 1000 : 0) - used.memory);

  // Memory of one GPU: the declared pool's (the shape the placer reasons about; GFD
  // reports slightly less than the marketing size), else the GFD label in MiB.
  int64_t gpu_memory = pool ? pool->gpu.memory.milli() / 1000 : 0;
  if (gpu_memory == 0 && labels.count(kLabelGpuMemory)) {
    const int64_t mib = std::atoll(labels.at(kLabelGpuMemory).c_str());
    // Up to 1 TiB, the loader's bound on a pool's GPU memory (larger would overflow the
    // per-slice arithmetic below).
    gpu_memory = mib > 0 && mib <= (int64_t{1} << 20) ? mib * kMiB : 0;
  }
  auto used_of = [&](const std::string& r) {
    auto it = used.extended.find(r);
    return it == used.extended.end() ? int64_t{0} : it->second;
  };

  // MIG: free compute slices, from every nvidia.com/mig-* resource (mixed) or the
  // single-strategy nvidia.com/gpu instances.
  int64_t free_slices = 0;
  bool mig = false;
  for (const auto& [name, value] : allocatable.items()) {
    if (name.rfind(kMigResourcePrefix, 0) != 0) continue;
    mig = true;
    int slices = model::MigComputeSlices(name.substr(std::string(kMigResourcePrefix).size()));
    AddSaturating(&free_slices, std::max<int64_t>(0, Milli(value) / 1000 - used_of(name)) * slices);
  }
  std::string strategy = labels.count(kLabelMigStrategy) ? labels.at(kLabelMigStrategy) : "";
  std::string single_profile = SingleMigProfile(product);
  if (!mig && strategy == "single" && !single_profile.empty()) {
    mig = true;
    free_slices = std::max<int64_t>(0, Count(allocatable, kGpuResource) - used_of(kGpuResource)) *
                  model::MigComputeSlices(single_profile);
  }
  if (mig) {
    int64_t physical = labels.count(kLabelGpuCount) ? std::atoll(labels.at(kLabelGpuCount).c_str()) : 0;
    if (physical == 0 && pool) physical = pool->gpu.count;
    // A count past any real node would have this loop run for ever (fuzz_kube_response).
    physical = std::clamp<int64_t>(physical, 0, model::kMaxGpusPerNode);
    for (int64_t i = 0; i < physical; ++i) {
      int64_t f = std::min<int64_t>(kSlicesPerGpu, free_slices);
      free_slices -= f;
      ObservedGpu g;
      g.mig_slices_used = static_cast<int>(kSlicesPerGpu - f);
      g.free_milli = static_cast<int>(f * 1000 / kSlicesPerGpu);
      g.free_memory = gpu_memory * f / kSlicesPerGpu;
      out.node.gpus.push_back(g);
    }
    return out;
  }
  int64_t total = capacity.contains(kGpuResource) ? Count(capacity, kGpuResource) : Count(allocatable, kGpuResource);
  total = std::clamp<int64_t>(total, 0, model::kMaxGpusPerNode);
  int64_t free = std::max<int64_t>(0, Count(allocatable, kGpuResource) - used_of(kGpuResource));
  for (int64_t i = 0; i < total; ++i) {
    ObservedGpu g;
    bool is_free = i < free;
    g.free_milli = is_free ? 1000 : 0;
    g.free_memory = is_free ? gpu_memory : 0;
    out.node.gpus.push_back(g);
  }
  return out;
}

Duration TimeBase::At(int64_t unix_seconds) const {
  if (server_now == 0) return now;
  return Duration::FromMillis(std::max<int64_t>(0, now.millis() - (server_now - unix_seconds) * 1000));
}

ObservedWorkload MapJob(const json& job, const std::vector<const json*>& pods, const TimeBase& time,
                        const model::Cluster& cluster, const std::map<std::string, std::string>& pool_by_node) {
  ObservedWorkload w;
  const json& meta = Obj(job, "metadata");
  const json& labels = Obj(meta, "labels");
  const json& ann = Obj(meta, "annotations");
  w.key = Str(ann, kAnnotationKey);
  w.workload = Str(ann, kAnnotationWorkload);
  w.attempt = std::atoi(Str(labels, kLabelAttempt).c_str());
  if (w.key.empty()) w.key = ActionKey(Str(labels, kLabelWorkloadUid), w.attempt);
  int64_t resume_s = AnnotationCount(ann, kAnnotationResumeFrom);
  int64_t interval_s = AnnotationCount(ann, kAnnotationCheckpointInterval);
  int64_t gpu_milli = AnnotationCount(ann, kAnnotationGpuMilli);

  // When the attempt started running: the earliest running/terminated container start.
  std::optional<int64_t> start;
  std::string node;
  std::string pending_reason;
  bool running = false;
  std::string disruption;  // DisruptionTarget reason of a pod, if any
  for (const json* pod : pods) {
    const json& st = Obj(*pod, "status");
    std::string phase = Str(st, "phase");
    if (phase == "Running") running = true;
    if (node.empty()) node = Str(Obj(*pod, "spec"), "nodeName");
    for (const json& cs : Arr(st, "containerStatuses")) {
      const json& state = Obj(cs, "state");
      std::string at = Str(Obj(state, "running"), "startedAt");
      if (at.empty()) at = Str(Obj(state, "terminated"), "startedAt");
      if (std::optional<int64_t> t = ParseRfc3339(at); t && (!start || *t < *start)) start = t;
      std::string waiting = Str(Obj(state, "waiting"), "reason");
      if (!waiting.empty() && pending_reason.empty()) pending_reason = waiting + ": " + Str(Obj(state, "waiting"), "message");
    }
    for (const json& c : Arr(st, "conditions")) {
      std::string type = Str(c, "type");
      if (type == "PodScheduled" && Str(c, "status") == "False" && pending_reason.empty()) {
        pending_reason = Str(c, "reason") + ": " + Str(c, "message");
      }
      if (type == "DisruptionTarget" && Str(c, "status") == "True") disruption = Str(c, "reason");
    }
  }

  std::optional<int64_t> finish;
  std::string failed_reason;
  bool complete = false, failed = false;
  for (const json& c : Arr(Obj(job, "status"), "conditions")) {
    if (Str(c, "status") != "True") continue;
    std::string type = Str(c, "type");
    if (type == "Complete" || type == "Failed") {
      complete = type == "Complete";
      failed = type == "Failed";
      finish = ParseRfc3339(Str(c, "lastTransitionTime"));
      if (failed) failed_reason = Str(c, "reason") + (Str(c, "message").empty() ? "" : ": " + Str(c, "message"));
    }
  }
  if (!finish && complete) finish = ParseRfc3339(Str(Obj(job, "status"), "completionTime"));

  int64_t end = finish ? *finish : time.server_now;
  int64_t elapsed = start && end > *start ? end - *start : 0;
  if (start) w.started_at = time.At(*start);
  if (finish) w.finished_at = time.At(*finish);
  w.progress = Duration::FromSeconds(resume_s + elapsed);
  if (interval_s > 0) w.checkpoint = Duration::FromSeconds(resume_s + elapsed / interval_s * interval_s);
  w.gpu_seconds = static_cast<double>(gpu_milli) / 1000.0 * static_cast<double>(elapsed);
  auto pool_it = pool_by_node.find(node);
  if (pool_it != pool_by_node.end()) {
    for (const model::NodePool& p : cluster.node_pools) {
      if (p.name != pool_it->second) continue;
      auto price = cluster.pricing.gpu_hour.find(p.gpu.model);
      if (price != cluster.pricing.gpu_hour.end()) w.cost = price->second.TimesGpuMilliHours(gpu_milli, elapsed * 1000);
    }
  }

  if (!Str(meta, "deletionTimestamp").empty()) {
    w.state = RunState::kCancelled;
    w.reason = "Job deleted";
    if (!finish) w.finished_at = time.now;
  } else if (complete) {
    w.state = RunState::kSucceeded;
    w.reason = "Complete";
  } else if (failed) {
    if (disruption == "PreemptionByScheduler") {
      w.state = RunState::kPreempted;
      w.reason = "preempted by the Kubernetes scheduler";
    } else {
      w.state = RunState::kFailed;
      w.reason = failed_reason;
      if (!disruption.empty()) {
        w.lost = true;
        w.reason = "pod disrupted (" + disruption + "): " + failed_reason;
      }
    }
  } else if (running) {
    w.state = RunState::kRunning;
  } else {
    w.state = RunState::kStarting;
    w.reason = pending_reason;
  }
  return w;
}

}  // namespace gpufed::connectors::kubernetes

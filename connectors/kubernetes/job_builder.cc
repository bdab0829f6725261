#include "connectors/kubernetes/job_builder.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "controller/common/action_key.h"
#include "controller/common/sha256.h"
#include "controller/common/vocabulary.h"
#include "controller/model/mig_profile.h"

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

std::string Sanitise(const std::string& text, bool lower) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out.push_back(lower ? static_cast<char>(std::tolower(u)) : c);
    } else if (!lower && (c == '.' || c == '_')) {
      out.push_back(c);
    } else {
      out.push_back('-');
    }
  }
  return out;
}

std::string TrimEnds(std::string s) {
  auto bad = [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); };
  while (!s.empty() && bad(s.back())) s.pop_back();
  while (!s.empty() && bad(s.front())) s.erase(s.begin());
  return s;
}

// Seconds as a JSON integer (the API's int64 fields).
int64_t CeilSeconds(int64_t millis) { return (millis + 999) / 1000; }

}  // namespace

std::string UidOfKey(const std::string& key) {
  std::optional<ParsedActionKey> parsed = ParseActionKey(key);
  return parsed ? parsed->uid : key;
}

std::string LabelValue(const std::string& text) {
  std::string clean = TrimEnds(Sanitise(text, false));
  if (clean == text && clean.size() <= 63) return clean;
  std::string hash = Sha256Hex(text).substr(0, 10);
  return TrimEnds(clean.substr(0, 63 - 11)) + "-" + hash;
}

std::string JobName(const std::string& key) {
  // A key that is not "<uid>.a<n>" (none the controller makes) is attempt 0 of itself.
  std::optional<ParsedActionKey> parsed = ParseActionKey(key);
  const std::string uid = parsed ? parsed->uid : key;
  const int attempt = parsed ? parsed->attempt : 0;
  std::string clean = TrimEnds(Sanitise(uid, true));
  std::string name = AttemptJobName(clean, attempt);
  // Lossy sanitising could map two uids to one name; a hash keeps them apart.
  if (clean != uid || !IsDnsLabel(name)) {
    std::string hash = Sha256Hex(uid).substr(0, 10);
    const std::string suffix = JobNameSuffix(attempt);
    size_t room = 63 - kJobNamePrefix.size() - suffix.size() - 11;
    std::string base = TrimEnds(clean.substr(0, room));
    // The hash joins the base with one dash (an empty base: the prefix's own).
    name = AttemptJobName(base.empty() ? hash : base + "-" + hash, attempt);
  }
  return name;
}

std::string MigResourceName(const std::string& profile, const std::string& strategy) {
  return strategy == "single" ? kGpuResource : std::string(kMigResourcePrefix) + profile;
}

json PodSecurityContext() { return {{"runAsNonRoot", true}, {"seccompProfile", {{"type", "RuntimeDefault"}}}}; }

json ContainerSecurityContext() {
  // readOnlyRootFilesystem stays unset: typical GPU images (PyTorch, NGC) write caches,
  // pip installs and temporary files into the root file system.
  return {{"allowPrivilegeEscalation", false}, {"capabilities", {{"drop", json::array({"ALL"})}}}};
}

Result<json> BuildJob(const Action& action, const JobContext& ctx) {
  if (action.key.empty()) return InvalidArgument("submit without a key");
  if (action.run.image.empty()) return InvalidArgument("workload " + action.workload + ": kubernetes needs run.image");
  const std::string name = JobName(action.key);
  const std::string uid = UidOfKey(action.key);
  const int members = std::max<int>(1, static_cast<int>(action.nodes.size()));

  json labels = {{kLabelWorkloadUid, LabelValue(uid)},
                 {kLabelAttempt, std::to_string(action.attempt)},
                 {kLabelManagedBy, "gpufed"}};
  if (!action.tenant.empty()) labels[kLabelTenant] = LabelValue(action.tenant);
  json annotations = {{kAnnotationKey, action.key},
                      {kAnnotationWorkload, action.workload},
                      {kAnnotationTenant, action.tenant},
                      {kAnnotationResumeFrom, std::to_string(action.resume_from.millis() / 1000)},
                      {kAnnotationCheckpointInterval, std::to_string(action.checkpoint_interval.millis() / 1000)}};
  const std::string& revision = action.policy_revision.empty() ? ctx.policy_revision : action.policy_revision;
  if (!revision.empty()) annotations[kAnnotationPolicyRevision] = revision;
  if (action.leader_epoch > 0) annotations[kAnnotationLeaderEpoch] = std::to_string(action.leader_epoch);

  // Nodes the placer chose, and what we know about them.
  std::vector<std::string> pinned;
  for (const NodeAssignment& a : action.nodes) {
    if (!a.node.empty()) pinned.push_back(a.node);
  }
  std::map<std::string, std::string> node_selector;
  std::vector<Taint> taints;
  std::string mig_strategy;
  for (const std::string& n : pinned) {
    auto it = ctx.nodes.find(n);
    if (it == ctx.nodes.end()) continue;
    auto product = it->second.labels.find(kLabelGpuProduct);
    if (product != it->second.labels.end()) node_selector[kLabelGpuProduct] = product->second;
    auto strategy = it->second.labels.find(kLabelMigStrategy);
    if (strategy != it->second.labels.end()) mig_strategy = strategy->second;
    taints.insert(taints.end(), it->second.taints.begin(), it->second.taints.end());
  }
  if (pinned.empty() && !action.provision_pool.empty()) {
    for (const auto& [k, v] : ctx.pool_selector) node_selector[k] = v;
  }

  // Resources per pod: whole GPUs, a MIG instance, or one shared (time-sliced) GPU.
  json limits = json::object();
  json requests = json::object();
  int gpus = action.nodes.empty() ? 0 : static_cast<int>(action.nodes.front().gpus.size());
  int64_t gpu_milli = 0;
  if (!action.mig_profile.empty()) {
    std::string resource = MigResourceName(action.mig_profile, mig_strategy);
    limits[resource] = "1";
    gpu_milli = model::MigMilliGpu(action.mig_profile);
  } else if (gpus > 0) {
    limits[kGpuResource] = std::to_string(gpus);
    gpu_milli = action.gpu_milli_each < 1000 ? action.gpu_milli_each : int64_t{gpus} * 1000;
  }
  // Extended resources cannot be overcommitted: requests must equal limits.
  requests = limits;
  if (action.cpu_milli > 0) requests["cpu"] = std::to_string(action.cpu_milli) + "m";
  if (action.memory_bytes > 0) requests["memory"] = std::to_string(action.memory_bytes);
  annotations[kAnnotationGpuMilli] = std::to_string(gpu_milli * members);

  json env = json::array();
  env.push_back({{"name", "GPUFED_WORKLOAD"}, {"value", action.workload}});
  env.push_back({{"name", "GPUFED_ATTEMPT"}, {"value", std::to_string(action.attempt)}});
  env.push_back(
      {{"name", "GPUFED_RESUME_FROM_SECONDS"}, {"value", std::to_string(action.resume_from.millis() / 1000)}});
  if (action.checkpoint_interval.millis() > 0) {
    env.push_back({{"name", "GPUFED_CHECKPOINT_INTERVAL_SECONDS"},
                   {"value", std::to_string(action.checkpoint_interval.millis() / 1000)}});
  }
  for (const auto& [k, v] : action.run.env) env.push_back({{"name", k}, {"value", v}});

  json container = {{"name", "main"},
                    {"image", action.run.image},
                    {"env", env},
                    {"resources", {{"limits", limits}, {"requests", requests}}},
                    {"securityContext", ContainerSecurityContext()}};
  if (!action.run.command.empty()) container["command"] = action.run.command;
  if (!action.run.args.empty()) container["args"] = action.run.args;
  if (!action.run.working_dir.empty()) container["workingDir"] = action.run.working_dir;

  json pod_spec = {{"restartPolicy", "Never"},
                   {"containers", json::array({container})},
                   {"securityContext", PodSecurityContext()},
                   // A workload has no business with the Kubernetes API: without this, any
                   // tenant's code could act as the namespace's service account. (The
                   // Workload model has no field to ask for the token.)
                   {"automountServiceAccountToken", false}};
  // The workload's priority class, as a Kubernetes PriorityClass of the same name (the
  // cluster must define it; see README.md).
  if (!action.priority_class.empty()) pod_spec["priorityClassName"] = action.priority_class;
  if (!node_selector.empty()) pod_spec["nodeSelector"] = node_selector;

  // GPU nodes are commonly tainted (GKE: nvidia.com/gpu=present:NoSchedule; GPU
  // Operator installs may add their own): tolerate nvidia.com/gpu always, and any
  // GPU-named taint of the nodes the placer chose.
  json tolerations = json::array();
  tolerations.push_back({{"key", kGpuResource}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  std::vector<std::string> seen = {std::string(kGpuResource) + "/NoSchedule"};
  for (const Taint& t : taints) {
    std::string lower = t.key;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("gpu") == std::string::npos && lower != "sku") continue;
    if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule") continue;
    std::string id = t.key + "/" + t.effect;
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) continue;
    seen.push_back(id);
    tolerations.push_back({{"key", t.key}, {"operator", "Exists"}, {"effect", t.effect}});
  }
  pod_spec["tolerations"] = tolerations;

  // A pinned placement uses required node affinity on the hostname, not nodeName: the
  // scheduler still checks resources and taints, and a Pending reason stays visible.
  if (!pinned.empty()) {
    std::vector<std::string> hosts = pinned;
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    json term = {{"matchExpressions", json::array({{{"key", kLabelHostname}, {"operator", "In"}, {"values", hosts}}})}};
    pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] =
        json::array({term});
  }
  if (members > 1) {
    // One gang member per node, as the placer bound them.
    json term = {{"labelSelector", {{"matchLabels", {{"job-name", name}}}}}, {"topologyKey", kLabelHostname}};
    pod_spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = json::array({term});
  }

  json spec = {{"backoffLimit", 0},
               {"ttlSecondsAfterFinished", 7 * 24 * 3600},
               {"template", {{"metadata", {{"labels", labels}, {"annotations", annotations}}}, {"spec", pod_spec}}}};
  // gpufed retries by attempts (with resume-from-checkpoint), so the Job must not
  // retry in place: backoffLimit 0. A finished Job is kept a week so that a controller
  // that was down still sees how it ended.
  if (members > 1) {
    spec["parallelism"] = members;
    spec["completions"] = members;
    spec["completionMode"] = "Indexed";
  }
  int64_t remaining = std::max<int64_t>(0, action.duration.millis() - action.resume_from.millis());
  if (remaining > 0) {
    // The hint is an estimate: allow 50% more plus staging before the API kills it.
    spec["activeDeadlineSeconds"] = CeilSeconds(remaining * 3 / 2 + action.start_delay.millis());
  }
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", ctx.ns}, {"labels", labels}, {"annotations", annotations}}},
              {"spec", spec}};
}

}  // namespace gpufed::connectors::kubernetes

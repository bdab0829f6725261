#pragma once
// Turns a Submit action into a batch/v1 Job: one Job per workload attempt, named
// deterministically from the action key so a retried create is answered 409
// AlreadyExists (idempotency without any local state).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/core/connector.h"

namespace gpufed::connectors::kubernetes {

// Labels and annotations gpufed puts on its Jobs (and their pods).
inline constexpr const char* kLabelWorkloadUid = "gpufed.io/workload-uid";
inline constexpr const char* kLabelAttempt = "gpufed.io/attempt";
inline constexpr const char* kLabelTenant = "gpufed.io/tenant";
inline constexpr const char* kLabelManagedBy = "app.kubernetes.io/managed-by";
inline constexpr const char* kAnnotationKey = "gpufed.io/action-key";
inline constexpr const char* kAnnotationWorkload = "gpufed.io/workload";
inline constexpr const char* kAnnotationTenant = "gpufed.io/tenant";
inline constexpr const char* kAnnotationResumeFrom = "gpufed.io/resume-from-seconds";
inline constexpr const char* kAnnotationCheckpointInterval = "gpufed.io/checkpoint-interval-seconds";
inline constexpr const char* kAnnotationGpuMilli = "gpufed.io/gpu-milli";
inline constexpr const char* kAnnotationPolicyRevision = "gpufed.io/policy-revision";
// The lease epoch of the leader that created the Job (replicas on one database).
inline constexpr const char* kAnnotationLeaderEpoch = "gpufed.io/leader-epoch";
// NVIDIA GPU Feature Discovery labels and the device plugin's resource names.
inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kMigResourcePrefix = "nvidia.com/mig-";
inline constexpr const char* kLabelGpuProduct = "nvidia.com/gpu.product";
inline constexpr const char* kLabelGpuMemory = "nvidia.com/gpu.memory";   // MiB per GPU
inline constexpr const char* kLabelGpuCount = "nvidia.com/gpu.count";
inline constexpr const char* kLabelMigStrategy = "nvidia.com/mig.strategy";
inline constexpr const char* kLabelHostname = "kubernetes.io/hostname";

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
};

// What the last observation knew about a node (for selectors and tolerations).
struct NodeFacts {
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
};

struct JobContext {
  std::string ns;
  std::map<std::string, NodeFacts> nodes;                // by node name
  std::map<std::string, std::string> pool_selector;      // for action.provision_pool
  std::string policy_revision;                           // optional annotation
};

// "<uid>.a<attempt>" -> the uid; the key itself when it has no attempt suffix.
std::string UidOfKey(const std::string& key);
// A valid label value (<= 63 chars of [A-Za-z0-9._-], alphanumeric at both ends) for
// `text`: itself when already valid, else a sanitised prefix plus a hash.
std::string LabelValue(const std::string& text);
// The Job name for an action key: a DNS-1123 label of at most 63 characters,
// "gpufed-<uid>-a<attempt>", with a hash standing in for a long or non-DNS uid.
std::string JobName(const std::string& key);
// The device-plugin resource for a MIG profile under a strategy: "mixed" (default)
// -> "nvidia.com/mig-<profile>", "single" -> "nvidia.com/gpu".
std::string MigResourceName(const std::string& profile, const std::string& strategy);

// The restricted pod security every Job gets (the Kubernetes "restricted" Pod Security
// Standard): pod level runAsNonRoot and the runtime's default seccomp profile; container
// level no privilege escalation and no capabilities. An image that runs as root (or names
// its USER rather than giving a number) is refused by the kubelet
// (CreateContainerConfigError): images must declare a numeric non-root USER. The root
// file system stays writable (see README).
nlohmann::json PodSecurityContext();
nlohmann::json ContainerSecurityContext();

// The Job for a Submit action. InvalidArgument when the action cannot become a Job
// (no image, no key). Its pods run with the security contexts above and without the
// service-account token (automountServiceAccountToken: false).
Result<nlohmann::json> BuildJob(const Action& action, const JobContext& ctx);

}  // namespace gpufed::connectors::kubernetes

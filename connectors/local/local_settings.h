#pragma once
// The `local` connector's settings: the Cluster's `local.gpufed.io/...` annotations,
// decoded and checked once, when the connector is created (README.md, "Settings").
//
// The checks here are the security boundary of the connector (gpufed issue 42): a job
// runs with the workload's command, environment and working folder, which a tenant
// writes through the API, so it must never run as root or as the controller's own user
// (it could read the admin token, the signing key and the store) unless the Cluster
// says so explicitly with `local.gpufed.io/allow-controller-user: "true"`.
#include <sys/types.h>

#include <string>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::local {

inline constexpr const char* kAnnotationPrefix = "local.gpufed.io/";
inline constexpr const char* kRunAsUser = "local.gpufed.io/run-as-user";
inline constexpr const char* kAllowControllerUser = "local.gpufed.io/allow-controller-user";
inline constexpr const char* kJobRoot = "local.gpufed.io/job-root";
inline constexpr const char* kAcceptApiWorkloads = "local.gpufed.io/accept-api-workloads";
inline constexpr const char* kGpuEnv = "local.gpufed.io/gpu-env";
inline constexpr const char* kGrace = "local.gpufed.io/grace";
inline constexpr const char* kBookkeepingDir = "local.gpufed.io/bookkeeping-dir";

// Where job folders go when the Cluster does not say: /var/lib/gpufed-jobs/<cluster>.
inline constexpr const char* kDefaultJobRootParent = "/var/lib/gpufed-jobs";

// The account jobs run as, looked up (getpwnam_r) when the connector is created: the
// child between fork and exec may only make async-signal-safe calls, so it gets numbers.
struct JobUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;        // the account's home folder: the job's HOME
  bool switch_user = false;  // the child changes credentials (the controller is root)
};

struct LocalSettings {
  std::string cluster;
  JobUser user;
  std::string job_root;    // absolute, lexically normal; one folder per job inside
  bool accept_api_workloads = true;
  std::string gpu_env = "CUDA_VISIBLE_DEVICES";
  Duration grace = Duration::FromSeconds(10);
  // The controller's record of the jobs: ledger.log and jobs/<key>/. Default: the
  // connector's own folder in the state folder. Replicas of one controller on this host
  // (gpufed run --store) name one folder that all of them use, so a new leader finds
  // the jobs the last one started (README.md, "Replicas").
  std::string bookkeeping_dir;
  bool shared_by_replicas = false;
};

// Decodes and checks the Cluster's local.gpufed.io/ annotations. `state_dir` is the
// connector's own folder, which the controller places at <state>/connectors/<cluster>:
// the controller's state folder is two levels up, and no job folder may be inside it.
// Reads the account database and stats folders; changes nothing.
// FailedPrecondition (naming the cluster and the annotation) for:
//   - an unknown local.gpufed.io/ annotation (a misspelt setting would be ignored),
//   - jobs that would run as root, as group root, or as the controller's own user
//     without allow-controller-user "true" (run-as-user unset means the controller's user),
//   - a run-as-user other than the controller's user when the controller is not root
//     (only root can switch users),
//   - a job root that is not absolute, contains "..", or overlaps the state folder,
//   - a state folder that the job user can enter (a job could read gpufed.db),
//   - a bookkeeping-dir that is not absolute and normal, or overlaps the job root,
//   - `shared_by_replicas` (FactoryContext::leader_epoch) without a bookkeeping-dir: each
//     replica's own state folder would hide the jobs one leader started from the next.
// InvalidArgument for values that do not parse (grace, booleans, gpu-env).
Result<LocalSettings> ReadLocalSettings(const model::Cluster& cluster, const std::string& state_dir,
                                        bool shared_by_replicas = false);

// Whether the account (uid, gid, and no other group: the child sets its groups to just
// `gid`) may search `path` and every folder above it: what the job needs of its job root
// and what it must lack for the state folder. Follows symlinks (canonical path).
// POSIX ACLs are not considered. Unavailable when a folder cannot be stat'ed.
Result<bool> CanReach(const std::string& path, uid_t uid, gid_t gid);

}  // namespace gpufed::connectors::local

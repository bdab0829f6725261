#pragma once
// The `kubernetes` connector: a Kubernetes cluster (on-prem with the NVIDIA GPU
// Operator, or managed: EKS, AKS, GKE, ...) through its API server.
//
// Observe re-lists, level-triggered: nodes, the pods that hold resources (for free
// GPUs), and gpufed's Jobs and pods in the namespace (label gpufed.io/workload-uid).
// Apply creates one batch/v1 Job per attempt (job_builder.h), named from the action
// key so a retried create meets 409 AlreadyExists and succeeds; Cancel and Preempt delete
// the Job with propagationPolicy Background. A deleted Job disappears from the API, so
// the connector keeps a tombstone per cancelled/preempted key (in its ActionLedger under
// the state folder, durable before the delete is sent) and keeps reporting that attempt
// as cancelled/preempted; a tombstoned key is never created again.
#include <map>
#include <memory>
#include <string>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"
#include "connectors/kubernetes/job_builder.h"
#include "connectors/kubernetes/kube_api.h"
#include "connectors/kubernetes/kubeconfig.h"
#include "controller/common/mutex.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::kubernetes {

struct KubernetesOptions {
  Credentials credentials;
  std::string ns = "default";       // where gpufed's Jobs live
  double qps = 50;                  // client-side, per cluster (client-go defaults to 5)
  int burst = 100;
  int page_size = 500;              // list limit per page
  std::string state_dir;            // "" keeps tombstones in memory only
  bool read_only = false;           // FactoryContext::read_only: the ledger is only read
  http::SleepFn sleep;              // how to wait for a rate-limit token; default: sleep
  http::LogFn log;                  // FactoryContext::log; empty: standard error
};

class KubernetesConnector : public Connector {
 public:
  // `cluster` is copied (node pools for mapping, prices). Errors: those of
  // http::Client::Create and ActionLedger::Open.
  static Result<std::unique_ptr<KubernetesConnector>> Create(const model::Cluster& cluster, KubernetesOptions options);

  Result<Observation> Observe(const CallContext& ctx) override EXCLUDES(mu_);
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override EXCLUDES(mu_);

  // Restarts of paged lists after 410 Gone, since creation (tests, metrics).
  int relists() const EXCLUDES(mu_);
  int64_t requests_sent() const EXCLUDES(mu_);

 private:
  struct Tombstone {
    ActionKind kind = ActionKind::kCancel;
    std::string workload;
    int attempt = 0;
    std::string reason;
    Duration at;
  };
  KubernetesConnector(model::Cluster cluster, KubernetesOptions options, std::unique_ptr<KubeApi> api,
                      std::unique_ptr<ActionLedger> ledger);
  Result<ApplyOutcome> Submit(const Action& action, const CallContext& ctx) REQUIRES(mu_);
  Result<ApplyOutcome> Delete(const Action& action, const CallContext& ctx) REQUIRES(mu_);
  std::string JobsPath() const;

  const model::Cluster cluster_;
  const KubernetesOptions options_;
  mutable Mutex mu_;
  std::unique_ptr<KubeApi> api_ PT_GUARDED_BY(mu_);
  std::unique_ptr<ActionLedger> ledger_ PT_GUARDED_BY(mu_);       // may be null
  std::map<std::string, Tombstone> tombstones_ GUARDED_BY(mu_);  // by action key
  JobContext facts_ GUARDED_BY(mu_);                              // node facts from the last Observe
  int relists_ GUARDED_BY(mu_) = 0;
};

// Builds options from the Cluster's connector block (kubernetes_config.h):
//   kubeconfig  path (relative to the file that declares the Cluster); empty with no
//               endpoint: in-cluster service account
//   context     kubeconfig context (default: current-context)
//   namespace   for Jobs (default: the context's namespace, else "default")
//   endpoint    overrides the server URL
// The server must be https:// (FailedPrecondition naming the cluster and field otherwise:
// a bearer token or client key would travel in clear text).
//   tokenFile / tokenEnv  override the user's token (tokenEnv is resolved by `getenv`)
//   qps, burst  client-side rate limit
// `getenv` is injected so tests need not touch the process environment.
Result<KubernetesOptions> OptionsFromCluster(const model::Cluster& cluster, const FactoryContext& ctx,
                                             const std::function<std::string(const std::string&)>& getenv);

// The "kubernetes" provider: its config check and schema (kubernetes_config.h),
// capabilities (it paces its own requests: the client's token bucket is the cluster's
// qps/burst) and factory (reads the process environment for tokenEnv and in-cluster
// settings).
ConnectorProvider KubernetesProvider();
Status RegisterKubernetesConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::kubernetes

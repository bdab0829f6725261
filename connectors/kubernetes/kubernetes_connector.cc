#include "connectors/kubernetes/kubernetes_connector.h"

#include "connectors/kubernetes/kubernetes_config.h"

#include <cstdlib>
#include <filesystem>
#include <set>

#include "connectors/kubernetes/observe_mapping.h"

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;

// Pods that hold resources on their node (Succeeded and Failed pods do not).
constexpr const char* kActivePods = "status.phase!=Succeeded,status.phase!=Failed";

}  // namespace

KubernetesConnector::KubernetesConnector(model::Cluster cluster, KubernetesOptions options,
                                         std::unique_ptr<KubeApi> api, std::unique_ptr<ActionLedger> ledger)
    : cluster_(std::move(cluster)), options_(std::move(options)), api_(std::move(api)), ledger_(std::move(ledger)) {
  facts_.ns = options_.ns;
  if (ledger_) {
    for (const LedgerRecord& r : ledger_->records()) {
      Tombstone t;
      // Every record stops its key; only a preempt record's says it was a preemption.
      Result<ActionKind> kind = ParseActionKind(r.kind);
      t.kind = kind.ok() && *kind == ActionKind::kPreempt ? ActionKind::kPreempt : ActionKind::kCancel;
      try {
        json p = json::parse(r.payload);
        t.workload = p.value("workload", "");
        t.attempt = p.value("attempt", 0);
        t.reason = p.value("reason", "");
        t.at = Duration::FromMillis(p.value("at_ms", int64_t{0}));
      } catch (const json::exception& e) {
        // A record we cannot read still blocks the key from being created again.
        t.reason = std::string("unreadable ledger record: ") + e.what();
      }
      tombstones_[r.key] = t;
    }
  }
}

Result<std::unique_ptr<KubernetesConnector>> KubernetesConnector::Create(const model::Cluster& cluster,
                                                                         KubernetesOptions options) {
  http::ClientOptions http;
  http.base_url = options.credentials.server;
  http.ca = options.credentials.ca;
  http.client_cert = options.credentials.client_cert;
  http.client_key = options.credentials.client_key;
  http.bearer_token = options.credentials.token;
  http.qps = options.qps;
  http.burst = options.burst;
  http.user_agent = "gpufed-kubernetes-connector";
  http.log = options.log;
  Result<std::unique_ptr<http::Client>> client = http::Client::Create(http, options.sleep);
  if (!client.ok()) return client.status();
  Result<std::unique_ptr<ActionLedger>> ledger = ActionLedger::OpenInStateDir(
      options.state_dir, Durability::kSynced, options.read_only ? LedgerAccess::kReadOnly : LedgerAccess::kReadWrite);
  if (!ledger.ok()) return ledger.status();
  auto api = std::make_unique<KubeApi>(std::move(client).value(), options.credentials.token_file);
  return std::unique_ptr<KubernetesConnector>(
      new KubernetesConnector(cluster, std::move(options), std::move(api), std::move(ledger).value()));
}

std::string KubernetesConnector::JobsPath() const { return "/apis/batch/v1/namespaces/" + options_.ns + "/jobs"; }

int KubernetesConnector::relists() const {
  MutexLock lock(mu_);
  return relists_;
}

int64_t KubernetesConnector::requests_sent() const {
  MutexLock lock(mu_);
  return api_->client()->requests_sent();
}

Result<Observation> KubernetesConnector::Observe(const CallContext& ctx) {
  MutexLock lock(mu_);
  ListOptions all{.limit = options_.page_size};
  Result<ListResult> nodes = api_->List("/api/v1/nodes", all, ctx);
  if (!nodes.ok()) return nodes.status();
  Result<ListResult> active =
      api_->List("/api/v1/pods", {.field_selector = kActivePods, .limit = options_.page_size}, ctx);
  if (!active.ok()) return active.status();
  ListOptions ours{.label_selector = kLabelWorkloadUid, .limit = options_.page_size};
  Result<ListResult> jobs = api_->List(JobsPath(), ours, ctx);
  if (!jobs.ok()) return jobs.status();
  Result<ListResult> pods = api_->List("/api/v1/namespaces/" + options_.ns + "/pods", ours, ctx);
  if (!pods.ok()) return pods.status();
  relists_ += nodes->relists + active->relists + jobs->relists + pods->relists;

  Observation obs;
  obs.healthy = true;
  obs.gpu_hour = cluster_.pricing.gpu_hour;
  std::map<std::string, NodeUsage> usage = UsageByNode(active->items);
  std::map<std::string, std::string> pool_by_node;
  JobContext facts;
  facts.ns = options_.ns;
  for (const json& n : nodes->items) {
    std::string name = n.value("/metadata/name"_json_pointer, "");
    MappedNode m = MapNode(n, cluster_, usage[name]);
    pool_by_node[m.node.name] = m.node.pool;
    facts.nodes[m.node.name] = m.facts;
    obs.nodes.push_back(std::move(m.node));
  }
  facts_ = std::move(facts);

  std::map<std::string, std::vector<const json*>> pods_by_job;
  for (const json& p : pods->items) {
    std::string job = p.value("/metadata/labels/job-name"_json_pointer, "");
    if (job.empty()) job = p.value("/metadata/labels/batch.kubernetes.io~1job-name"_json_pointer, "");
    pods_by_job[job].push_back(&p);
  }
  TimeBase time{ctx.clock ? ctx.clock->Now() : Duration(), jobs->server_time};
  std::set<std::string> reported;
  for (const json& j : jobs->items) {
    std::string name = j.value("/metadata/name"_json_pointer, "");
    ObservedWorkload w = MapJob(j, pods_by_job[name], time, cluster_, pool_by_node);
    auto t = tombstones_.find(w.key);
    if (t != tombstones_.end() && w.state == RunState::kCancelled) {
      // Deleted by us and still terminating: report what we did to it. A tombstoned Job
      // without a deletionTimestamp (the DELETE never arrived) is reported as it is, so
      // the controller sends the cancel again.
      w.state = t->second.kind == ActionKind::kPreempt ? RunState::kPreempted : RunState::kCancelled;
      w.reason = t->second.reason;
      w.finished_at = t->second.at;
    }
    reported.insert(w.key);
    obs.workloads.push_back(std::move(w));
  }
  for (const auto& [key, t] : tombstones_) {
    if (reported.count(key)) continue;
    ObservedWorkload w;
    w.key = key;
    w.workload = t.workload;
    w.attempt = t.attempt;
    w.state = t.kind == ActionKind::kPreempt ? RunState::kPreempted : RunState::kCancelled;
    w.reason = t.reason;
    w.finished_at = t.at;
    obs.workloads.push_back(std::move(w));
  }
  return obs;
}

Result<ApplyOutcome> KubernetesConnector::Apply(const Action& action, const CallContext& ctx) {
  MutexLock lock(mu_);
  switch (action.kind) {
    case ActionKind::kSubmit: return Submit(action, ctx);
    case ActionKind::kCancel:
    case ActionKind::kPreempt: return Delete(action, ctx);
  }
  return InvalidArgument("unknown action kind");
}

Result<ApplyOutcome> KubernetesConnector::Submit(const Action& action, const CallContext& ctx) {
  // A cancelled or preempted attempt stays dead, even if an old submit is retried.
  if (tombstones_.count(action.key)) return ApplyOutcome{.already_applied = true};
  Result<json> job = BuildJob(action, facts_);
  if (!job.ok()) return job.status();
  Result<json> created = api_->Create(JobsPath(), *job, ctx);
  if (created.ok()) return ApplyOutcome{.already_applied = false};
  if (created.status().code() != StatusCode::kAlreadyExists) return created.status();
  // The name is derived from the key: an existing Job with our key is this attempt,
  // created by an earlier try whose answer was lost (a crash, a timeout).
  std::string name = (*job)["metadata"]["name"];
  Result<json> existing = api_->Get(JobsPath() + "/" + name, ctx);
  if (!existing.ok()) return existing.status();
  std::string key = existing->value("/metadata/annotations/gpufed.io~1action-key"_json_pointer, "");
  if (key != action.key) {
    return FailedPrecondition("Job " + name + " exists but belongs to " + (key.empty() ? "something else" : key));
  }
  return ApplyOutcome{.already_applied = true};
}

Result<ApplyOutcome> KubernetesConnector::Delete(const Action& action, const CallContext& ctx) {
  bool known = tombstones_.count(action.key) > 0;
  if (!known) {
    Tombstone t{
        action.kind, action.workload, action.attempt,
        action.reason.empty() ? (action.kind == ActionKind::kPreempt ? "preempted" : "cancelled") : action.reason,
        ctx.clock ? ctx.clock->Now() : Duration()};
    if (ledger_) {
      json payload = {{"workload", t.workload}, {"attempt", t.attempt}, {"reason", t.reason}, {"at_ms", t.at.millis()}};
      GPUFED_RETURN_IF_ERROR(ledger_->Append({ActionKindName(action.kind), action.key, payload.dump()}));
    }
    tombstones_[action.key] = t;
  }
  // Background: the Job goes at once and the garbage collector removes its pods, which
  // get their normal termination grace period.
  Status deleted = api_->Delete(JobsPath() + "/" + JobName(action.key), "Background", ctx);
  if (deleted.code() == StatusCode::kNotFound) return ApplyOutcome{.already_applied = known};
  if (!deleted.ok()) return deleted;
  return ApplyOutcome{.already_applied = known};
}

Result<KubernetesOptions> OptionsFromCluster(const model::Cluster& cluster, const FactoryContext& ctx,
                                             const std::function<std::string(const std::string&)>& getenv) {
  Result<KubernetesConfig> config = DecodeKubernetesConfig(cluster.connector);
  if (!config.ok()) return config.status();
  const KubernetesConfig& spec = *config;
  KubernetesOptions o;
  Result<Credentials> creds = FailedPrecondition("unset");
  if (!spec.kubeconfig.empty()) {
    std::string path = spec.kubeconfig;
    if (path.rfind("~/", 0) == 0) path = getenv("HOME") + path.substr(1);
    creds = LoadKubeconfig(model::DeclaredPath(cluster, path), spec.context);
  } else if (!spec.endpoint.empty()) {
    Credentials c;
    c.server = spec.endpoint;
    creds = c;
  } else {
    creds = InClusterCredentials(getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT"));
  }
  if (!creds.ok()) return creds.status();
  o.credentials = *creds;
  if (!spec.endpoint.empty()) o.credentials.server = spec.endpoint;
  GPUFED_RETURN_IF_ERROR(RequireHttps(
      o.credentials.server,
      "cluster " + cluster.metadata.name + ": " + (spec.endpoint.empty() ? "the API server" : "connector.endpoint")));
  // connector.caFile overrides the kubeconfig's certificate-authority (a private CA in
  // front of the API server); without either, the system's trust store.
  if (!spec.ca_file.empty()) o.credentials.ca = http::PemSource{.file = model::DeclaredPath(cluster, spec.ca_file)};
  if (!spec.token_file.empty()) {
    o.credentials.token_file = model::DeclaredPath(cluster, spec.token_file);
    o.credentials.token.clear();
  }
  if (!spec.token_env.empty()) {
    std::string token = getenv(spec.token_env);
    if (token.empty()) return FailedPrecondition("environment variable " + spec.token_env + " is empty or unset");
    o.credentials.token = token;
    o.credentials.token_file.clear();
  }
  o.ns = !spec.ns.empty() ? spec.ns : !o.credentials.ns.empty() ? o.credentials.ns : "default";
  o.qps = cluster.connector.qps;  // the cluster's one limit: the registry does not wrap a pacing provider
  o.burst = cluster.connector.burst;
  o.state_dir = ctx.state_dir;
  o.read_only = ctx.read_only;
  o.log = http::LogTo(ctx.log);
  return o;
}

ConnectorProvider KubernetesProvider() {
  ConnectorProvider p;
  p.type = "kubernetes";
  p.summary = "API server, batch/v1 Jobs";
  // MIG slices are extended resources (nvidia.com/mig-*); nodes come from the cluster's
  // own autoscaler, not from gpufed.
  p.capabilities = {.virtual_time = false, .mig = true, .elastic_nodes = false, .paces_requests = true};
  p.check = CheckKubernetesConfig;
  p.schema_properties = KubernetesConfigSchema();
  p.factory = [](const model::Cluster& cluster, const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
    auto env = [](const std::string& name) {
      const char* v = std::getenv(name.c_str());
      return std::string(v ? v : "");
    };
    Result<KubernetesOptions> options = OptionsFromCluster(cluster, ctx, env);
    if (!options.ok()) return options.status();
    Result<std::unique_ptr<KubernetesConnector>> c = KubernetesConnector::Create(cluster, std::move(options).value());
    if (!c.ok()) return c.status();
    return std::unique_ptr<Connector>(std::move(c).value());
  };
  return p;
}

Status RegisterKubernetesConnector(ConnectorRegistry& registry) { return registry.Register(KubernetesProvider()); }

}  // namespace gpufed::connectors::kubernetes

#include "connectors/slurm/slurm_connector.h"

#include "connectors/slurm/negotiate.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

namespace gpufed::connectors::slurm {
namespace {

// The ledger's record kinds: the actions' own names, and one of its own.
constexpr const char* kSubmit = ActionKindName(ActionKind::kSubmit);
constexpr const char* kPreempt = ActionKindName(ActionKind::kPreempt);
// A job Slurm accepted with warnings (so maybe without its GPUs), cancelled by gpufed;
// keyed "<action key>#<job id>". Such jobs carry the key but are not the key's job.
constexpr char kRejected[] = "rejected";

std::string WarningsText(const std::vector<SlurmWarning>& warnings) {
  std::string text;
  for (const SlurmWarning& w : warnings) text += (text.empty() ? "" : "; ") + w.Text();
  return text;
}

// The "sun" claim of the token the client sends (read as the client reads it: trimmed,
// `scontrol token` output accepted as is); empty when unreadable or absent.
std::string TokenUser(const model::Cluster& cluster, const SlurmConfig& spec) {
  std::string token;
  if (!spec.token_env.empty()) {
    const char* v = std::getenv(spec.token_env.c_str());
    token = v == nullptr ? "" : v;
  } else if (!spec.token_file.empty()) {
    std::ifstream in(model::DeclaredPath(cluster, spec.token_file), std::ios::binary);
    char buf[16 * 1024];  // a JWT is far smaller; the rest of an odd file is not read
    in.read(buf, sizeof(buf));
    token.assign(buf, static_cast<size_t>(in.gcount()));
  }
  size_t b = token.find_first_not_of(" \t\r\n");
  token = b == std::string::npos ? "" : token.substr(b, token.find_last_not_of(" \t\r\n") - b + 1);
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);
  Result<JwtClaims> claims = ParseJwt(token);
  return claims.ok() ? claims->user : "";
}

bool Finished(const SlurmJob& job) {
  bool lost = false;
  return IsFinished(MapJobState(job.state, false, &lost));
}

}  // namespace

SlurmConnector::SlurmConnector(model::Cluster cluster, SlurmConfig config, SiteSettings site,
                               std::unique_ptr<SlurmClient> client, std::unique_ptr<ActionLedger> ledger,
                               std::function<int64_t()> unix_now)
    : cluster_(std::move(cluster)),
      config_(std::move(config)),
      site_(std::move(site)),
      client_(std::move(client)),
      ledger_(std::move(ledger)),
      unix_now_(std::move(unix_now)) {
  if (ledger_) {
    for (const LedgerRecord& r : ledger_->records()) {
      if (r.kind == kPreempt) preempted_.insert(r.key);
      if (r.kind == kRejected) {
        nlohmann::json payload = nlohmann::json::parse(r.payload, nullptr, false);
        if (payload.is_object() && payload.value("job_id", int64_t{0}) > 0)
          rejected_jobs_.insert(payload["job_id"].get<int64_t>());
      }
      if (r.kind != kSubmit) continue;
      nlohmann::json payload = nlohmann::json::parse(r.payload, nullptr, false);
      if (payload.is_object() && payload.value("job_id", int64_t{0}) > 0)
        job_ids_[r.key] = payload["job_id"].get<int64_t>();
    }
  }
}

Status SlurmConnector::Record(const std::string& kind, const std::string& key, const std::string& payload) {
  if (!ledger_) {
    applied_.insert({kind, key});
    return Status::Ok();
  }
  if (ledger_->Contains(kind, key)) return Status::Ok();
  Status s = ledger_->Append({kind, key, payload});
  // The action took effect in Slurm; a failed ledger write only weakens the purge-window
  // protection (the job list still finds the job), so report it without failing the call.
  return s.code() == StatusCode::kAlreadyExists ? Status::Ok() : s;
}

Result<std::vector<SlurmNode>> SlurmConnector::Inventory(const CallContext& ctx) { return client_->Nodes(ctx); }

std::string SlurmConnector::OwnSlurmUser() const {
  return !config_.user.empty() ? config_.user : TokenUser(cluster_, config_);
}

// Public for diagnostics and tests, which may call it while the loop observes: it reads
// the adoption state under mu_ like Observe (it once read job_ids_ and rejected_jobs_
// without it, a race with a concurrent Observe or Apply that writes them).
Result<std::map<std::string, SlurmJob>> SlurmConnector::GpufedJobs(const CallContext& ctx) {
  MutexLock lock(mu_);
  return GpufedJobsLocked(ctx);
}

Result<std::map<std::string, SlurmJob>> SlurmConnector::GpufedJobsLocked(const CallContext& ctx) {
  Result<std::vector<SlurmJob>> jobs = client_->Jobs(ctx);
  if (!jobs.ok()) return jobs.status();
  std::string own_user;  // read once per listing, and only when a job carries a tag
  bool own_user_read = false;
  std::map<std::string, SlurmJob> out;
  for (SlurmJob& job : *jobs) {
    std::optional<JobTag> tag = DecodeJobTag(job.comment);
    if (!tag || rejected_jobs_.count(job.job_id)) continue;
    if (!own_user_read) {
      own_user = OwnSlurmUser();
      own_user_read = true;
    }
    // Anyone can write a comment and a name: another Slurm user's job is never gpufed's.
    // (Also not after a cold-started slurmctld hands out a recorded id again.)
    if (own_user.empty() || job.user_name != own_user) continue;
    auto recorded = job_ids_.find(tag->key);
    if (recorded != job_ids_.end()) {
      if (recorded->second == job.job_id) out[tag->key] = std::move(job);  // that id, no other
      continue;
    }
    // No id recorded (a crash between submit and record, a lost state folder): the job
    // gpufed would have submitted for the tag, by its name too.
    if (job.name != JobNameFor(tag->workload, tag->attempt)) continue;
    auto it = out.find(tag->key);
    if (it == out.end() || it->second.job_id < job.job_id) out[tag->key] = std::move(job);
  }
  return out;
}

Result<Observation> SlurmConnector::Observe(const CallContext& ctx) {
  MutexLock lock(mu_);
  Result<std::vector<SlurmNode>> nodes = client_->Nodes(ctx);
  if (!nodes.ok()) return nodes.status();
  Result<std::vector<SlurmPartition>> partitions = client_->Partitions(ctx);
  if (!partitions.ok()) return partitions.status();
  Result<std::map<std::string, SlurmJob>> jobs = GpufedJobsLocked(ctx);
  if (!jobs.ok()) return jobs.status();

  const std::string& wanted = config_.partition;
  bool partition_up = true;
  if (!wanted.empty()) {
    const SlurmPartition* found = nullptr;
    std::string names;
    for (const SlurmPartition& p : *partitions) {
      if (p.name == wanted) found = &p;
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (found == nullptr) return FailedPrecondition("Slurm has no partition " + wanted + " (it has: " + names + ")");
    partition_up = found->state.empty() || found->state == "UP";
  }
  Observation obs;
  std::map<std::string, NodeGroup> groups;
  std::vector<SlurmJob> pending;
  for (const auto& [key, job] : *jobs) {
    bool lost = false;
    if (MapJobState(job.state, false, &lost) == RunState::kStarting && !job.required_nodes.empty())
      pending.push_back(job);
  }
  obs.nodes = ObserveNodes(*nodes, cluster_, wanted, &groups, pending);
  if (!partition_up) {
    for (ObservedNode& n : obs.nodes) n.ready = false;  // the partition takes no new jobs
  }
  groups_ = std::move(groups);
  TimeFrame frame{unix_now_(), ctx.clock ? ctx.clock->Now() : Duration()};
  for (const auto& [key, job] : *jobs) {
    job_ids_[key] = job.job_id;  // from now on this key adopts this id only
    std::optional<JobTag> tag = DecodeJobTag(job.comment);  // adopted jobs carry one
    obs.workloads.push_back(ObserveJob(job, *tag, cluster_, preempted_.count(key) > 0, frame));
  }
  obs.gpu_hour = cluster_.pricing.gpu_hour;
  ServerInfo server = client_->server();
  obs.api_version = server.api_version;
  obs.api_summary = server.Describe();
  return obs;
}

Status SlurmConnector::RefreshGroups(const CallContext& ctx) {
  Result<std::vector<SlurmNode>> nodes = client_->Nodes(ctx);
  if (!nodes.ok()) return nodes.status();
  std::map<std::string, NodeGroup> groups;
  ObserveNodes(*nodes, cluster_, config_.partition, &groups);
  groups_ = std::move(groups);
  return Status::Ok();
}

Result<JobPlacement> SlurmConnector::Resolve(const Action& action, const CallContext& ctx) {
  JobPlacement placement;
  const NodeGroup* shape = nullptr;  // the GPU group every member runs on
  int gpus = 0;
  for (const NodeAssignment& a : action.nodes) {
    gpus = std::max<int>(gpus, static_cast<int>(a.gpus.size()));
    const NodeGroup* group = nullptr;
    if (!a.node.empty()) {
      if (!groups_.count(a.node)) GPUFED_RETURN_IF_ERROR(RefreshGroups(ctx));
      auto it = groups_.find(a.node);
      if (it == groups_.end()) return InvalidArgument("Slurm has no node " + a.node + " (in the configured partition)");
      group = &it->second;
      placement.nodes.push_back(group->slurm_node);
    } else {
      // A member without a node: Slurm picks one; the GPU shape comes from the pool.
      for (const auto& [name, g] : groups_) {
        if (!action.provision_pool.empty() && g.pool == action.provision_pool) group = &g;
      }
    }
    if (group && !shape) shape = group;
  }
  if (shape == nullptr || gpus == 0) return placement;  // CPU-only, or nothing known: no GRES
  if (!shape->mig_base.empty() && action.mig_profile.empty()) {
    // Whole GPUs on a node's MIG-like group: the placer sees that group as a pool whose
    // GPU may be used whole, Slurm cannot hand out slices as a whole GPU. The same Slurm
    // node's whole GPUs of the same base are what is meant; Slurm picks free ones (or
    // queues the job until some are).
    const NodeGroup* whole = nullptr;
    for (const auto& [name, g] : groups_) {
      if (g.slurm_node == shape->slurm_node && !g.gres_type.empty() &&
          (g.gres_type == shape->mig_base || (!shape->model.empty() && g.model == shape->model))) {
        whole = &g;
        break;
      }
    }
    if (whole == nullptr) {
      return InvalidArgument("node " + shape->observed_name + " offers only MIG-like slices and " + shape->slurm_node +
                             " no whole GPUs of type " + shape->mig_base + "; the action names no MIG profile");
    }
    placement.gres = "gpu:" + whole->gres_type + ":" + std::to_string(gpus);
  } else if (!shape->mig_base.empty()) {
    std::string type = shape->mig_base + "_" + action.mig_profile;
    if (std::find(shape->mig_types.begin(), shape->mig_types.end(), type) == shape->mig_types.end()) {
      return InvalidArgument("node " + shape->slurm_node + " has no GRES type " + type);
    }
    placement.gres = "gpu:" + type + ":1";
  } else if (!shape->gres_type.empty()) {
    placement.gres = "gpu:" + shape->gres_type + ":" + std::to_string(gpus);
  }
  return placement;
}

Result<ApplyOutcome> SlurmConnector::Submit(const Action& action, const CallContext& ctx) {
  if ((ledger_ && ledger_->Contains(kSubmit, action.key)) || applied_.count({kSubmit, action.key})) {
    return ApplyOutcome{true};
  }
  // A crash between an earlier submit and its ledger record: the job is adopted by its
  // Slurm user, comment and name (GpufedJobs), and its id recorded.
  Result<std::map<std::string, SlurmJob>> existing = GpufedJobsLocked(ctx);
  if (!existing.ok()) return existing.status();
  auto found = existing->find(action.key);
  if (found != existing->end()) {
    job_ids_[action.key] = found->second.job_id;
    GPUFED_RETURN_IF_ERROR(Record(kSubmit, action.key, nlohmann::json{{"job_id", found->second.job_id}}.dump()));
    return ApplyOutcome{true};
  }
  Result<JobPlacement> placement = Resolve(action, ctx);
  if (!placement.ok()) return placement.status();
  JobSite site{config_.partition, site_.AccountFor(action.tenant),
               site_.work_dir.empty() ? DefaultWorkDir(OwnSlurmUser()) : site_.work_dir};
  Result<JobRequest> request = BuildJobRequest(action, *placement, site);
  if (!request.ok()) return request.status();
  Result<SubmitReply> reply = client_->Submit(*request, ctx);
  if (!reply.ok()) return reply.status();
  int64_t id = reply->job_id;
  std::string what = "slurmrestd " + client_->server().api_version + " submit of " + action.key;
  if (!reply->warnings.empty()) {
    // Slurm 24.11 ignores what it cannot read with only a warning: the job may lack its
    // GPUs or pinning. Never let such a job run as the workload's attempt.
    std::string text = WarningsText(reply->warnings);
    if (id <= 0) return InvalidArgument(what + ": Slurm submitted nothing: " + text);
    GPUFED_RETURN_IF_ERROR(
        Record(kRejected, action.key + "#" + std::to_string(id), nlohmann::json{{"job_id", id}}.dump()));
    rejected_jobs_.insert(id);
    Status cancelled = client_->Cancel(id, ctx);
    return InvalidArgument(what + ": Slurm accepted job " + std::to_string(id) + " with warnings (" + text + "); " +
                           (cancelled.ok() || cancelled.code() == StatusCode::kNotFound
                                ? "gpufed cancelled it"
                                : "gpufed could not cancel it (" + cancelled.message() + "): cancel it by hand"));
  }
  if (id <= 0) {
    // Never report a submit as done without a job id.
    if (!reply->errors.empty()) return StatusFromSlurmErrors(reply->errors, 500, what);
    return Unavailable(what + ": the reply carries no job_id, so nothing was submitted");
  }
  job_ids_[action.key] = id;
  GPUFED_RETURN_IF_ERROR(Record(kSubmit, action.key, nlohmann::json{{"job_id", id}}.dump()));
  return ApplyOutcome{false};
}

Result<ApplyOutcome> SlurmConnector::Stop(const Action& action, const CallContext& ctx) {
  const char* kind = ActionKindName(action.kind);  // cancel or preempt
  if ((ledger_ && ledger_->Contains(kind, action.key)) || applied_.count({kind, action.key})) return ApplyOutcome{true};
  if (action.kind == ActionKind::kPreempt) {
    // Durable before the job ends, so its CANCELLED state is read as a preemption even
    // after a controller crash.
    GPUFED_RETURN_IF_ERROR(Record(kPreempt, action.key, "{}"));
    preempted_.insert(action.key);
  }
  Result<std::map<std::string, SlurmJob>> jobs = GpufedJobsLocked(ctx);
  if (!jobs.ok()) return jobs.status();
  auto it = jobs->find(action.key);
  if (it == jobs->end()) {
    bool submitted = job_ids_.count(action.key) || (ledger_ && ledger_->Contains(kSubmit, action.key)) ||
                     applied_.count({kSubmit, action.key});
    if (!submitted) return NotFound("Slurm has no job for " + action.key);
    GPUFED_RETURN_IF_ERROR(Record(kind, action.key, "{}"));  // finished and purged already
    return ApplyOutcome{true};
  }
  if (Finished(it->second)) {
    GPUFED_RETURN_IF_ERROR(Record(kind, action.key, "{}"));
    return ApplyOutcome{true};
  }
  Status s = client_->Cancel(it->second.job_id, ctx);
  if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  GPUFED_RETURN_IF_ERROR(Record(kind, action.key, nlohmann::json{{"job_id", it->second.job_id}}.dump()));
  return ApplyOutcome{false};
}

Result<ApplyOutcome> SlurmConnector::Apply(const Action& action, const CallContext& ctx) {
  MutexLock lock(mu_);
  if (action.key.empty()) return InvalidArgument("action without a key");
  Result<ApplyOutcome> out = action.kind == ActionKind::kSubmit ? Submit(action, ctx) : Stop(action, ctx);
  // A credential problem is the cluster's, not the request's: the workload should wait
  // (and move elsewhere once the cluster turns unhealthy), not be re-planned every pass.
  if (!out.ok() &&
      (out.status().code() == StatusCode::kUnauthenticated || out.status().code() == StatusCode::kPermissionDenied)) {
    return Unavailable(out.status().message());
  }
  return out;
}

Result<std::unique_ptr<SlurmConnector>> CreateSlurmConnector(const model::Cluster& cluster, const FactoryContext& ctx,
                                                             const SlurmFactoryHooks& hooks) {
  Result<SlurmConfig> config = DecodeSlurmConfig(cluster.connector);
  if (!config.ok()) return config.status();
  const SlurmConfig& spec = *config;
  if (spec.endpoint.rfind("http://", 0) != 0 && spec.endpoint.rfind("https://", 0) != 0) {
    return InvalidArgument("connector.endpoint must be the slurmrestd URL, http(s)://host:port (got '" + spec.endpoint +
                           "')");
  }
  Result<SiteSettings> site = ReadSiteSettings(cluster);
  if (!site.ok()) return site.status();
  GPUFED_RETURN_IF_ERROR(CheckEndpoint(cluster.metadata.name, spec.endpoint, *site));
  std::string api_version = spec.api_version.empty() ? kAutoApiVersion : spec.api_version;
  std::vector<std::string> settings_allowed = ApiVersionSettings();
  if (std::find(settings_allowed.begin(), settings_allowed.end(), api_version) == settings_allowed.end()) {
    return InvalidArgument("connector.apiVersion " + api_version + " is not supported (use one of " +
                           JoinVersions(settings_allowed) + ")");
  }
  if (!spec.token_env.empty()) {
    const char* v = std::getenv(spec.token_env.c_str());
    if (v == nullptr || *v == '\0') {
      return InvalidArgument("connector.tokenEnv: $" + spec.token_env + " is not set (it must hold the Slurm JWT)");
    }
  }
  ClientSettings settings;
  settings.endpoint = spec.endpoint;
  settings.user = spec.user;
  settings.token_env = spec.token_env;
  settings.token_file = model::DeclaredPath(cluster, spec.token_file);
  settings.ca_file = model::DeclaredPath(cluster, spec.ca_file);
  settings.api_version = api_version;
  const model::ConnectorSpec& shared = cluster.connector;
  settings.timeout = shared.timeout.millis() > 0 ? shared.timeout : Duration::FromSeconds(10);
  settings.qps = shared.qps;  // the cluster's one limit: the registry does not wrap a pacing provider
  settings.burst = shared.burst;
  settings.auth_retry = hooks.auth_retry;
  settings.unix_now = hooks.unix_now;
  settings.log = http::LogTo(ctx.log);
  Result<std::unique_ptr<SlurmClient>> client = SlurmClient::Create(settings, hooks.sleep);
  if (!client.ok()) return client.status();
  Result<std::unique_ptr<ActionLedger>> opened =
      ActionLedger::OpenInStateDir(ctx.state_dir, Durability::kSynced, ctx.ledger_access());
  if (!opened.ok()) return opened.status();
  std::unique_ptr<ActionLedger> ledger = std::move(opened).value();
  std::function<int64_t()> unix_now = hooks.unix_now;
  if (!unix_now) {
    unix_now = [] {
      return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  return std::make_unique<SlurmConnector>(cluster, std::move(config).value(), std::move(site).value(),
                                          std::move(client).value(), std::move(ledger), std::move(unix_now));
}

ConnectorProvider SlurmProvider() {
  ConnectorProvider p;
  p.type = "slurm";
  p.summary = "slurmrestd";
  // MIG slices are GRES types; the node count is the site's, never grown by gpufed.
  p.capabilities = {.virtual_time = false, .mig = true, .elastic_nodes = false, .paces_requests = true};
  p.check = CheckSlurmConfig;
  p.schema_properties = SlurmConfigSchema();
  p.factory = [](const model::Cluster& cluster, const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
    Result<std::unique_ptr<SlurmConnector>> c = CreateSlurmConnector(cluster, ctx);
    if (!c.ok()) return c.status();
    return std::unique_ptr<Connector>(std::move(c).value());
  };
  return p;
}

Status RegisterSlurmConnector(ConnectorRegistry& registry) { return registry.Register(SlurmProvider()); }

}  // namespace gpufed::connectors::slurm

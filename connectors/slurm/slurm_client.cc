#include "connectors/slurm/slurm_client.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "connectors/http/peer_text.h"
#include "connectors/slurm/api_common.h"
#include "connectors/slurm/negotiate.h"
#include "controller/common/base64.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::string UtcTime(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A short excerpt of a non-JSON reply (a proxy's error page), safe to keep.
std::string Excerpt(const std::string& body) { return Trim(http::PeerText(body, 120)); }

// Job states in which a cancel has nothing left to do.
bool Ended(const SlurmJob& job) {
  const std::string& s = job.base_state.empty() ? job.state : job.base_state;
  return !s.empty() && s != "PENDING" && s != "RUNNING" && s != "SUSPENDED";
}

}  // namespace

std::string ServerInfo::Describe() const {
  if (api_version.empty()) return "";
  return "slurmrestd API " + api_version + (release.empty() ? "" : " (Slurm " + release + ")");
}

Result<JwtClaims> ParseJwt(const std::string& token) {
  size_t a = token.find('.');
  size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos) return Status(StatusCode::kUnauthenticated, "is not a JWT");
  Result<std::string> payload = Base64Decode(token.substr(a + 1, b - a - 1));
  if (!payload.ok()) return Status(StatusCode::kUnauthenticated, "is not a JWT (payload is not base64url)");
  json claims = json::parse(*payload, nullptr, false);
  if (!claims.is_object()) return Status(StatusCode::kUnauthenticated, "is not a JWT (payload is not a JSON object)");
  JwtClaims out;
  auto exp = claims.find("exp");
  if (exp != claims.end() && exp->is_number()) out.exp = exp->get<int64_t>();
  auto sun = claims.find("sun");
  if (sun != claims.end() && sun->is_string()) out.user = sun->get<std::string>();
  return out;
}

Result<std::unique_ptr<SlurmClient>> SlurmClient::Create(ClientSettings settings, http::SleepFn sleep) {
  if (settings.api_version.empty()) settings.api_version = kAutoApiVersion;
  if (settings.api_version != kAutoApiVersion && FindApiMapping(settings.api_version) == nullptr) {
    return InvalidArgument("connector.apiVersion " + settings.api_version + " is not supported (use auto or one of " +
                           JoinVersions(SupportedApiVersions()) + ")");
  }
  if (settings.token_env.empty() == settings.token_file.empty()) {
    return InvalidArgument("set exactly one of connector.tokenEnv and connector.tokenFile (the Slurm JWT)");
  }
  if (!settings.unix_now) {
    settings.unix_now = [] {
      return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  http::ClientOptions options;
  options.base_url = settings.endpoint;
  options.allow_plain_http = settings.endpoint.rfind("http://", 0) == 0;
  if (!settings.ca_file.empty()) options.ca.file = settings.ca_file;
  options.qps = settings.qps;
  options.burst = settings.burst;
  options.connect_timeout = std::min(settings.timeout, Duration::FromSeconds(5));
  options.user_agent = "gpufed-slurm";
  options.max_reply_bytes = settings.max_reply_bytes;
  options.log = settings.log;
  Result<std::unique_ptr<http::Client>> http = http::Client::Create(std::move(options), std::move(sleep));
  if (!http.ok()) return http.status();
  return std::unique_ptr<SlurmClient>(new SlurmClient(std::move(settings), std::move(http).value()));
}

std::string SlurmClient::TokenSource() const {
  return settings_.token_env.empty() ? "token file " + settings_.token_file : "token in $" + settings_.token_env;
}

Result<std::string> SlurmClient::ReadToken() const {
  std::string token;
  if (!settings_.token_env.empty()) {
    const char* v = std::getenv(settings_.token_env.c_str());
    if (v == nullptr || *v == '\0') {
      return Status(StatusCode::kUnauthenticated,
                    "$" + settings_.token_env + " is not set (it must hold the Slurm JWT)");
    }
    token = v;
  } else {
    std::ifstream in(settings_.token_file);
    if (!in) return Status(StatusCode::kUnauthenticated, "cannot read token file " + settings_.token_file);
    std::stringstream ss;
    ss << in.rdbuf();
    token = ss.str();
  }
  token = Trim(token);
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);  // `scontrol token` output as is
  if (token.empty()) return Status(StatusCode::kUnauthenticated, TokenSource() + " is empty");
  return token;
}

Result<SlurmClient::Exchange> SlurmClient::Send(const std::string& method, const std::string& path,
                                                const std::string& body, const http::CallBudget& budget) {
  const CallContext& ctx = budget.context();
  std::string what = method + " " + path;
  Result<std::string> token = ReadToken();
  if (!token.ok()) return token.status();
  Result<JwtClaims> claims = ParseJwt(*token);
  if (!claims.ok()) return Status(StatusCode::kUnauthenticated, TokenSource() + " " + claims.status().message());
  int64_t now = settings_.unix_now();
  if (claims->exp > 0 && claims->exp <= now) {
    return Status(StatusCode::kUnauthenticated, TokenSource() + " expired at " + UtcTime(claims->exp) +
                                                    "; renew it (scontrol token username=<user> lifespan=<seconds>)");
  }
  std::string user = !settings_.user.empty() ? settings_.user : claims->user;
  if (user.empty())
    return Status(StatusCode::kUnauthenticated, "no Slurm user: set connector.user (the token has no 'sun' claim)");
  size_t fingerprint = std::hash<std::string>{}(*token);
  Duration clock_now = ctx.clock ? ctx.clock->Now() : Duration();
  {
    MutexLock lock(mu_);
    if (rejected_token_ == fingerprint && clock_now < rejected_until_) return rejected_status_;
  }

  http::Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.headers = {{"X-SLURM-USER-NAME", user}, {"X-SLURM-USER-TOKEN", *token}};
  Result<CallContext> call = budget.Next("slurmrestd " + what, settings_.timeout);
  if (!call.ok()) return call.status();
  Result<http::Response> response = http_->Do(request, *call);
  if (!response.ok()) {
    Drop();  // slurmrestd went away (or never answered): negotiate again when it is back
    return Status(response.status().code(), "slurmrestd " + what + ": " + response.status().message());
  }

  Exchange out{response->status, json::parse(response->body, nullptr, false), response->body};
  int code = out.status;
  if (code == 401 || code == 403 || code == 511) {
    std::string retry = "; not retried with this token for " + settings_.auth_retry.ToString();
    Status s;
    if (code == 401) {
      s = Status(StatusCode::kUnauthenticated, "slurmrestd refused the credentials (HTTP 401) for user " + user +
                                                   " with the " + TokenSource() + retry);
    } else if (code == 511) {
      // 24.11: slurmctld rejected the token (bad signature, expired, another user's name).
      std::string why;
      if (!out.body.is_discarded()) {
        for (const SlurmError& e : ReadErrors(out.body)) why += (why.empty() ? ": " : "; ") + e.Text();
      }
      s = Status(StatusCode::kUnauthenticated, "slurmctld rejected the " + TokenSource() + " for user " + user +
                                                   " (HTTP 511 on " + what + why + ")" + retry);
    } else {
      s = Status(StatusCode::kPermissionDenied, "slurmrestd: user " + user + " may not " + what + " (HTTP 403)");
    }
    MutexLock lock(mu_);
    rejected_token_ = fingerprint;
    rejected_until_ = clock_now + settings_.auth_retry;
    rejected_status_ = s;
    return s;
  }
  return out;
}

Result<json> SlurmClient::Call(const std::string& method, const std::string& path, const std::string& body,
                               const http::CallBudget& budget, const ApiMapping& api) {
  std::string what = "slurmrestd " + api.version() + " " + method + " " + path;
  Result<Exchange> ex = Send(method, path, body, budget);
  if (!ex.ok()) return ex.status();
  int code = ex->status;
  const json& reply = ex->body;
  if (code == 404 && !reply.is_discarded()) {
    // 24.11 answers an unknown job id with 404 and a JSON error (2017).
    Status s = StatusFromSlurmErrors(api.ParseErrors(reply), code, what);
    if (s.code() == StatusCode::kNotFound) return s;
  }
  if (code == 404) {
    Drop();  // an upgraded Slurm may have dropped this version
    return FailedPrecondition("slurmrestd does not serve " + path + " (HTTP 404: " + Excerpt(ex->text) +
                              "); it no longer offers " + api.version() + "? (negotiated again on the next call)");
  }
  if (reply.is_discarded()) {
    Drop();  // not slurmrestd's JSON: a proxy in between, or another server on the port
    if (code >= 200 && code < 300) return Unavailable(what + ": malformed reply (not JSON): " + Excerpt(ex->text));
    std::string msg = what + ": HTTP " + std::to_string(code) + " " + Excerpt(ex->text);
    if (code >= 500 || code == 429) return Unavailable(msg);
    return InvalidArgument(msg);
  }
  if (code >= 200 && code < 300) return reply;
  if (code == 429 || code == 502 || code == 503 || code == 504)
    return Unavailable(what + ": HTTP " + std::to_string(code));
  // 22.05 answers 500 for every failure and explains in `errors`; 24.11 too, mostly.
  return StatusFromSlurmErrors(api.ParseErrors(reply), code, what);
}

void SlurmClient::Drop() {
  MutexLock lock(mu_);
  api_ = nullptr;
  pinged_ = false;
}

template <typename T>
T SlurmClient::Noted(T result) {
  // A reply of the negotiated version that does not read as one (the adapters report that
  // as Unavailable): negotiate again.
  const Status* s = nullptr;
  if constexpr (std::is_same_v<T, Status>) {
    s = &result;
  } else {
    s = &result.status();
  }
  if (s->code() == StatusCode::kUnavailable) Drop();
  return result;
}

Result<std::vector<std::string>> SlurmClient::Offered(const http::CallBudget& budget) {
  Result<Exchange> doc = Send("GET", "/openapi/v3", "", budget);
  if (!doc.ok()) return doc.status();
  if (doc->status >= 200 && doc->status < 300) {
    std::vector<std::string> versions = VersionsInOpenApi(doc->body);
    if (!versions.empty()) return versions;
  }
  if (doc->status >= 500) return Unavailable("slurmrestd GET /openapi/v3: HTTP " + std::to_string(doc->status));
  // No usable document: ask each version gpufed knows (404 = not served).
  std::vector<std::string> out;
  for (const std::string& v : SupportedApiVersions()) {
    Result<Exchange> ping = Send("GET", FindApiMapping(v)->PingPath(), "", budget);
    if (!ping.ok()) return ping.status();
    if (ping->status != 404) out.push_back(v);
  }
  return out;
}

Status SlurmClient::Connect(const CallContext& ctx) { return ConnectWithin(http::CallBudget(ctx)); }

Status SlurmClient::ConnectWithin(const http::CallBudget& budget) {
  const ApiMapping* api = nullptr;
  {
    MutexLock lock(mu_);
    if (api_ != nullptr && pinged_) return Status::Ok();
    api = api_;
  }
  if (api == nullptr) {
    Result<std::vector<std::string>> offered = Offered(budget);
    if (!offered.ok()) return offered.status();
    Result<const ApiMapping*> chosen = ChooseApi(settings_.api_version, *offered, settings_.endpoint);
    if (!chosen.ok()) return chosen.status();
    api = *chosen;
    // Connected: the version is served. Slurm-level failures from here on (slurmctld
    // down, a token it rejects) do not mean the server changed.
    MutexLock lock(mu_);
    api_ = api;
    server_ = {api->version(), "", *offered};
  }
  // The ping says which Slurm this is (retried on later calls until it answers). It
  // proves nothing about the token: 24.11 answers it 200 "DOWN" for a rejected one.
  Result<json> reply = Call("GET", api->PingPath(), "", budget, *api);
  if (!reply.ok()) return reply.status();
  Result<PingReply> ping = Noted(api->ParsePing(*reply));
  if (!ping.ok()) return ping.status();
  MutexLock lock(mu_);
  if (api_ == api) {
    server_.release = ping->release;
    pinged_ = true;
  }
  return Status::Ok();
}

bool SlurmClient::connected() const {
  MutexLock lock(mu_);
  return api_ != nullptr;
}

ServerInfo SlurmClient::server() const {
  MutexLock lock(mu_);
  return server_;
}

Result<const ApiMapping*> SlurmClient::Ready(const http::CallBudget& budget) {
  GPUFED_RETURN_IF_ERROR(ConnectWithin(budget));
  MutexLock lock(mu_);
  if (api_ == nullptr) return Unavailable("slurmrestd connection lost while negotiating; retried");
  return api_;
}

Result<std::vector<SlurmNode>> SlurmClient::Nodes(const CallContext& ctx) {
  http::CallBudget budget(ctx);
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  Result<json> reply = (Call("GET", (*api)->NodesPath(), "", budget, **api));
  if (!reply.ok()) return reply.status();
  return Noted((*api)->ParseNodes(*reply));
}

Result<std::vector<SlurmPartition>> SlurmClient::Partitions(const CallContext& ctx) {
  http::CallBudget budget(ctx);
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  Result<json> reply = (Call("GET", (*api)->PartitionsPath(), "", budget, **api));
  if (!reply.ok()) return reply.status();
  return Noted((*api)->ParsePartitions(*reply));
}

Result<std::vector<SlurmJob>> SlurmClient::Jobs(const CallContext& ctx) {
  http::CallBudget budget(ctx);
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  Result<json> reply = (Call("GET", (*api)->JobsPath(), "", budget, **api));
  if (!reply.ok()) return reply.status();
  return Noted((*api)->ParseJobs(*reply));
}

Result<std::optional<SlurmJob>> SlurmClient::Job(int64_t job_id, const CallContext& ctx) {
  return JobWithin(job_id, http::CallBudget(ctx));
}

Result<std::optional<SlurmJob>> SlurmClient::JobWithin(int64_t job_id, const http::CallBudget& budget) {
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  std::string path = (*api)->JobPath(job_id);
  Result<json> reply = (Call("GET", path, "", budget, **api));
  if (!reply.ok()) {
    if (reply.status().code() == StatusCode::kNotFound) return std::optional<SlurmJob>();
    return reply.status();
  }
  Result<std::vector<SlurmJob>> jobs = Noted((*api)->ParseJobList(*reply, path));
  if (!jobs.ok()) return jobs.status();
  for (SlurmJob& j : *jobs) {
    if (j.job_id == job_id) return std::optional<SlurmJob>(std::move(j));
  }
  return std::optional<SlurmJob>();
}

Result<SubmitReply> SlurmClient::Submit(const JobRequest& request, const CallContext& ctx) {
  http::CallBudget budget(ctx);
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  Result<json> reply = (Call("POST", (*api)->SubmitPath(), (*api)->BuildSubmit(request).dump(), budget, **api));
  if (!reply.ok()) return reply.status();
  return Noted((*api)->ParseSubmit(*reply));
}

Status SlurmClient::Cancel(int64_t job_id, const CallContext& ctx) {
  http::CallBudget budget(ctx);
  Result<const ApiMapping*> api = Ready(budget);
  if (!api.ok()) return api.status();
  Result<json> reply = (Call("DELETE", (*api)->JobPath(job_id), "", budget, **api));
  if (!reply.ok()) return reply.status();
  Status s = (*api)->ParseCancel(*reply, job_id);
  if (!s.ok() || (*api)->CancelReportsFailures()) return s;
  // v0.0.40/v0.0.41 say "done" even for a job that does not exist: look.
  Result<std::optional<SlurmJob>> job = JobWithin(job_id, budget);
  if (!job.ok()) return job.status();
  std::string what = "slurmrestd " + (*api)->version() + " DELETE " + (*api)->JobPath(job_id);
  if (!job->has_value()) return NotFound(what + ": slurmctld knows no job " + std::to_string(job_id));
  if (Ended(**job)) return Status::Ok();
  return Unavailable(what + " answered success, but job " + std::to_string(job_id) + " is still " + (*job)->state +
                     "; cancel retried");
}

}  // namespace gpufed::connectors::slurm

#include "connectors/slurm/slurm_client.h"

#include "controller/common/base64.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

constexpr int kSlurmInvalidJobId = 2017;


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

// Slurm errnos that mean "could not talk to slurmctld": retry later.
bool Transient(int number) {
  return number == -1 || number == 4 || number == 11 || number == 110 ||
         (number >= 1000 && number < 2000) || (number >= 5000 && number < 6000);
}

// A short, printable excerpt of a non-JSON reply (a proxy's error page).
std::string Excerpt(const std::string& body) {
  std::string out;
  for (char c : body.substr(0, 120)) out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : ' ');
  return Trim(out);
}

}  // namespace

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

Status StatusFromSlurmErrors(const std::vector<SlurmError>& errors, int http_status, const std::string& what) {
  if (errors.empty()) {
    if (http_status >= 500) return Unavailable(what + ": HTTP " + std::to_string(http_status));
    return InvalidArgument(what + ": HTTP " + std::to_string(http_status));
  }
  std::string text;
  for (const SlurmError& e : errors) text += (text.empty() ? "" : "; ") + e.Text();
  bool transient = false, not_found = false;
  for (const SlurmError& e : errors) {
    if (e.number == kSlurmInvalidJobId) not_found = true;
    // 9001 is slurmrestd's "Failure during parsing", which follows the real cause.
    if (Transient(e.number) && e.number != 9001) transient = true;
  }
  if (not_found) return NotFound(what + ": " + text);
  if (transient) {
    return Unavailable(what + ": slurmrestd got no usable answer from slurmctld (" + text +
                       "): slurmctld down or unreachable, or the token was rejected (Slurm 22.05 reports both "
                       "this way)");
  }
  return InvalidArgument(what + ": Slurm refused: " + text);
}

Result<std::unique_ptr<SlurmClient>> SlurmClient::Create(ClientSettings settings, http::SleepFn sleep) {
  if (settings.api == nullptr) return InvalidArgument("no slurmrestd API mapping");
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
      return Status(StatusCode::kUnauthenticated, "$" + settings_.token_env + " is not set (it must hold the Slurm JWT)");
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

Result<json> SlurmClient::Call(const std::string& method, const std::string& path, const std::string& body,
                               const CallContext& ctx) {
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
  if (user.empty()) return Status(StatusCode::kUnauthenticated, "no Slurm user: set connector.user (the token has no 'sun' claim)");
  size_t fingerprint = std::hash<std::string>{}(*token);
  Duration clock_now = ctx.clock ? ctx.clock->Now() : Duration();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rejected_token_ == fingerprint && clock_now < rejected_until_) return rejected_status_;
  }

  http::Request request;
  request.method = method;
  request.path = path;
  request.body = body;
  request.headers = {{"X-SLURM-USER-NAME", user}, {"X-SLURM-USER-TOKEN", *token}};
  CallContext call = ctx;
  if (settings_.timeout < call.timeout) call.timeout = settings_.timeout;
  Result<http::Response> response = http_->Do(request, call);
  if (!response.ok()) return Status(response.status().code(), "slurmrestd " + what + ": " + response.status().message());

  int code = response->status;
  if (code == 401 || code == 403) {
    Status s = code == 401 ? Status(StatusCode::kUnauthenticated,
                                    "slurmrestd refused the credentials (HTTP 401) for user " + user + " with the " +
                                        TokenSource() + "; not retried with this token for " +
                                        settings_.auth_retry.ToString())
                           : Status(StatusCode::kPermissionDenied, "slurmrestd: user " + user + " may not " + what +
                                                                       " (HTTP 403)");
    std::lock_guard<std::mutex> lock(mu_);
    rejected_token_ = fingerprint;
    rejected_until_ = clock_now + settings_.auth_retry;
    rejected_status_ = s;
    return s;
  }
  if (code == 404) {
    return FailedPrecondition("slurmrestd does not serve " + path + " (HTTP 404): is it started with -s openapi/" +
                              settings_.api->version() + "?");
  }
  json reply = json::parse(response->body, nullptr, false);
  if (reply.is_discarded()) {
    if (code >= 200 && code < 300) return Unavailable("slurmrestd " + what + ": malformed reply (not JSON)");
    std::string msg = "slurmrestd " + what + ": HTTP " + std::to_string(code) + " " + Excerpt(response->body);
    if (code >= 500 || code == 429) return Unavailable(msg);
    return InvalidArgument(msg);
  }
  if (code >= 200 && code < 300) return reply;
  if (code == 429 || code == 502 || code == 503 || code == 504) {
    return Unavailable("slurmrestd " + what + ": HTTP " + std::to_string(code));
  }
  // 22.05 answers 500 for every failure and explains in `errors`.
  return StatusFromSlurmErrors(settings_.api->ParseErrors(reply), code, "slurmrestd " + what);
}

Result<std::vector<SlurmNode>> SlurmClient::Nodes(const CallContext& ctx) {
  Result<json> reply = Call("GET", settings_.api->NodesPath(), "", ctx);
  if (!reply.ok()) return reply.status();
  return settings_.api->ParseNodes(*reply);
}

Result<std::vector<SlurmPartition>> SlurmClient::Partitions(const CallContext& ctx) {
  Result<json> reply = Call("GET", settings_.api->PartitionsPath(), "", ctx);
  if (!reply.ok()) return reply.status();
  return settings_.api->ParsePartitions(*reply);
}

Result<std::vector<SlurmJob>> SlurmClient::Jobs(const CallContext& ctx) {
  Result<json> reply = Call("GET", settings_.api->JobsPath(), "", ctx);
  if (!reply.ok()) return reply.status();
  return settings_.api->ParseJobs(*reply);
}

Result<int64_t> SlurmClient::Submit(const JobRequest& request, const CallContext& ctx) {
  Result<json> reply = Call("POST", settings_.api->SubmitPath(), settings_.api->BuildSubmit(request).dump(), ctx);
  if (!reply.ok()) return reply.status();
  Result<int64_t> id = settings_.api->ParseSubmit(*reply);
  if (id.ok()) return id;
  std::vector<SlurmError> errors = settings_.api->ParseErrors(*reply);
  if (!errors.empty()) return StatusFromSlurmErrors(errors, 500, "slurmrestd POST " + settings_.api->SubmitPath());
  return id.status();
}

Status SlurmClient::Cancel(int64_t job_id, const CallContext& ctx) {
  Result<json> reply = Call("DELETE", settings_.api->JobPath(job_id), "", ctx);
  if (!reply.ok()) return reply.status();
  std::vector<SlurmError> errors = settings_.api->ParseErrors(*reply);
  if (errors.empty()) return Status::Ok();
  return StatusFromSlurmErrors(errors, 200, "slurmrestd DELETE " + settings_.api->JobPath(job_id));
}

}  // namespace gpufed::connectors::slurm

#include "controller/server/admission.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string_view>

#include "controller/server/client_certificate.h"
#include "controller/server/http_json.h"
#include "controller/server/ui_routes.h"

namespace gpufed::server {
namespace {

// Client addresses with an unknown-token bucket before the table starts over.
constexpr size_t kMaxUnknownAddresses = 4096;

// The request's framing, checked before anything trusts it: one decimal Content-Length at
// most, Transfer-Encoding only as "chunked" and never beside a Content-Length (RFC 9112
// 6.1-6.3: a message with both, or with an unreadable length, must not be read as it says).
Status CheckFraming(const httplib::Request& req, bool& has_body) {
  has_body = false;
  const size_t lengths = req.get_header_value_count("Content-Length");
  const size_t encodings = req.get_header_value_count("Transfer-Encoding");
  if (lengths > 1) return InvalidArgument("more than one Content-Length header");
  if (encodings > 1 || (encodings == 1 && req.get_header_value("Transfer-Encoding") != "chunked")) {
    return InvalidArgument("Transfer-Encoding must be 'chunked'");
  }
  if (encodings == 1 && lengths == 1) return InvalidArgument("Content-Length and Transfer-Encoding together");
  if (lengths == 1) {
    const std::string value = req.get_header_value("Content-Length");
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return InvalidArgument("Content-Length must be a decimal number of bytes");
    }
    has_body = n > 0;
  }
  has_body = has_body || encodings == 1;
  return Status();
}

void Answer(httplib::Response& res, const Status& status, int http_status = 0) {
  SendError(res, status);
  if (http_status != 0) res.status = http_status;
  res.set_header("Connection", "close");
}

int64_t RetrySeconds(Duration wait) { return std::max<int64_t>(1, (wait.millis() + 999) / 1000); }

}  // namespace

bool RouteTakesBody(const std::string& method, const std::string& path) {
  if (method != "POST") return false;
  if (path == "/v1/workloads") return true;
  // /v1/tenants/{name}/workloads, {name} as the routes spell it ([A-Za-z0-9._-]+).
  constexpr std::string_view kPrefix = "/v1/tenants/", kSuffix = "/workloads";
  const std::string_view p(path);
  if (p.size() <= kPrefix.size() + kSuffix.size() || p.substr(0, kPrefix.size()) != kPrefix ||
      p.substr(p.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view name = p.substr(kPrefix.size(), p.size() - kPrefix.size() - kSuffix.size());
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

Admission::Admission(reconcile::Controller* controller, const TokenTable* tokens, GuardedServer* http,
                     const gpufed::Clock* clock)
    : controller_(controller), tokens_(tokens), http_(http), clock_(clock) {}

std::optional<Caller> Admission::CallerOf(const httplib::Request& req) const {
  const std::string header = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return std::nullopt;
  const Caller* token = tokens_->Find(std::string_view(header).substr(prefix.size()));
  if (token == nullptr) return std::nullopt;
  // req.ssl is the connection's TLS session (GuardedServer sets it; null on plain HTTP).
  return CallerOnConnection(*token, VerifiedClientPrincipal(req.ssl));
}

Duration Admission::TakeRate(BucketTable table, const std::string& key, double per_second, int burst) {
  if (per_second <= 0) return Duration();
  const Duration now = (clock_ != nullptr ? clock_ : &wall_)->Now();
  MutexLock lock(mu_);
  Buckets& buckets = table == BucketTable::kTenant ? tenant_buckets_ : unknown_buckets_;
  auto it = buckets.find(key);
  const std::pair<double, int> limit{per_second, burst};
  if (it == buckets.end() || it->second.first != limit) {
    if (table == BucketTable::kUnknownToken && buckets.size() >= kMaxUnknownAddresses) buckets.clear();
    it = buckets.insert_or_assign(key, std::make_pair(limit, TokenBucket(per_second, burst))).first;
  }
  if (it->second.second.Reserve(now, Duration()).has_value()) return Duration();
  return Duration::FromMillis(static_cast<int64_t>(std::ceil(1000.0 / per_second)));
}

bool RefuseUntrustedBody(const httplib::Request& req, httplib::Response& res) {
  bool has_body = false;
  if (Status framing = CheckFraming(req, has_body); !framing.ok()) {
    Answer(res, framing);
    return true;
  }
  if (has_body && !RouteTakesBody(req.method, req.path)) {
    Answer(res, InvalidArgument(req.method + " " + req.path + " takes no request body"));
    return true;
  }
  // A submission must say where its body ends (the parser would otherwise read until the
  // connection closes).
  if (RouteTakesBody(req.method, req.path) && !req.has_header("Content-Length") &&
      !req.has_header("Transfer-Encoding")) {
    Answer(res, Status(StatusCode::kInvalidArgument, "a workload submission needs a Content-Length or a chunked body"),
           411);
    return true;
  }
  return false;
}

bool Admission::Refuse(const httplib::Request& req, httplib::Response& res) {
  if (RefuseUntrustedBody(req, res)) return true;
  if (req.path == "/healthz" || req.path == "/readyz") return false;
  // The dashboard's static files hold no data (its pages fetch /v1 with a token).
  if (IsUiAssetRequest(req.method, req.path)) return false;
  const std::optional<Caller> caller = CallerOf(req);
  if (!caller.has_value()) {
    const Duration wait =
        TakeRate(BucketTable::kUnknownToken, req.remote_addr, kUnknownTokenRatePerSecond, kUnknownTokenBurst);
    if (wait.millis() > 0) {
      res.set_header("Retry-After", std::to_string(RetrySeconds(wait)));
      Answer(res, Status(StatusCode::kResourceExhausted, "too many requests without a valid token from this address"),
             429);
      return true;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    Answer(res, Status(StatusCode::kUnauthenticated, "missing or unknown bearer token"));
    return true;
  }
  if (req.path == "/metrics" && caller->role == Caller::Role::kTenant) {
    Answer(res, Status(StatusCode::kPermissionDenied, "/metrics needs an admin or a metrics token"));
    return true;
  }
  if (req.path != "/metrics" && caller->role == Caller::Role::kMetrics) {
    Answer(res, Status(StatusCode::kPermissionDenied, "a metrics token reads /metrics only"));
    return true;
  }
  if (caller->role != Caller::Role::kTenant) return false;  // admins and scrapers: the reserved headroom
  const reconcile::Controller::ApiLimit limit = controller_->ApiLimitOf(caller->tenant);
  const Duration wait = TakeRate(BucketTable::kTenant, caller->tenant, limit.per_second, limit.burst);
  if (wait.millis() > 0) {
    const int64_t seconds = RetrySeconds(wait);
    res.set_header("Retry-After", std::to_string(seconds));
    Answer(res,
           Status(StatusCode::kResourceExhausted, "tenant " + caller->tenant +
                                                      " is over its API rate limit; retry after " +
                                                      std::to_string(seconds) + " s"),
           429);
    return true;
  }
  const size_t group_limit = static_cast<size_t>(std::max(0, limit.max_concurrent_requests));
  switch (http_->ClaimInFlight(req.remote_addr, req.remote_port, "tenant:" + caller->tenant, group_limit)) {
    case GuardedServer::Claim::kOk: return false;
    case GuardedServer::Claim::kGroupFull:
      res.set_header("Retry-After", "1");
      Answer(res,
             Status(StatusCode::kResourceExhausted, "tenant " + caller->tenant + " has " + std::to_string(group_limit) +
                                                        " requests in flight (Tenant.spec.api.maxConcurrentRequests)"),
             429);
      return true;
    case GuardedServer::Claim::kAddressFull:
      res.set_header("Retry-After", "1");
      Answer(res, Status(StatusCode::kResourceExhausted, "too many requests in flight from this address"), 429);
      return true;
    case GuardedServer::Claim::kServerFull:
      res.set_header("Retry-After", "1");
      Answer(res, Unavailable("the server is busy; retry later"), 503);
      return true;
  }
  return false;
}

}  // namespace gpufed::server

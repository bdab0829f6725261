#pragma once
// Shared helper: an HTTPS client for connectors that talk to a cluster's REST API
// (Kubernetes API server, slurmrestd). One Client per cluster endpoint, on libcurl.
//
// What it guarantees:
//   - TLS verification is always on (peer and host name); there is no switch to turn it
//     off. Trust anchors come from a CA file, in-memory PEM, or the system store.
//   - Client certificate and key from files or in-memory PEM; a bearer token. Secrets
//     are held only here and never appear in a Status message or a log line.
//   - A per-client token bucket (QPS and burst), so one cluster's API is never flooded.
//   - A server's Retry-After (on 429 and 503) is honoured: until it expires, requests
//     fail fast with Unavailable without being sent.
// HTTP answers of any status are returned as a Response; mapping status codes to
// Status codes is the caller's business (the meaning differs between APIs).
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/http/token_bucket.h"

namespace gpufed::connectors::http {

// PEM text or a file holding it; `pem` wins when both are set.
struct PemSource {
  std::string pem;
  std::string file;
  bool empty() const { return pem.empty() && file.empty(); }
};

struct ClientOptions {
  std::string base_url;             // "https://host:port", optionally with a path prefix
  PemSource ca;                     // empty: the system trust store
  PemSource client_cert;            // both or neither of cert and key
  PemSource client_key;
  std::string bearer_token;         // "Authorization: Bearer ..."; never logged
  Duration connect_timeout = Duration::FromSeconds(5);
  double qps = 50;                  // <= 0: unlimited
  int burst = 100;
  std::string user_agent = "gpufed";
  // Accept http:// base URLs too. Off by default; for APIs that are commonly served in
  // plain HTTP on loopback or behind a TLS proxy (slurmrestd). The caller decides when
  // that is acceptable: any header it sends (tokens included) travels unencrypted.
  bool allow_plain_http = false;
};

struct Request {
  std::string method = "GET";
  std::string path;                 // absolute path, "/api/v1/nodes"; not encoded further
  std::vector<std::pair<std::string, std::string>> query;  // percent-encoded by the client
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

struct Response {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case; last value wins
  std::optional<Duration> retry_after;         // parsed Retry-After, when present
  // The header's value, or "" when absent. `name` in lower case.
  std::string Header(const std::string& name) const;
};

// How the client waits for a rate-limit token. Tests inject one that advances a
// virtual clock; the default sleeps on the wall clock.
using SleepFn = std::function<void(Duration)>;

class Client {
 public:
  // InvalidArgument for a URL that is not https:// (or http:// with allow_plain_http) or
  // a cert without its key;
  // FailedPrecondition when a PEM file cannot be read.
  static Result<std::unique_ptr<Client>> Create(ClientOptions options, SleepFn sleep = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends one request; the whole exchange (including any wait for a rate-limit token)
  // stays within ctx.timeout. `ctx.clock` drives the token bucket and Retry-After.
  // Errors: Unavailable when the server cannot be reached, the connection breaks, the
  // rate limit would need a longer wait than the timeout allows, or a server's
  // Retry-After is still pending; DeadlineExceeded on timeout; FailedPrecondition when
  // the server's certificate fails verification or local TLS material is unusable.
  Result<Response> Do(const Request& request, const CallContext& ctx);

  // Replaces the bearer token (rotated token files).
  void SetBearerToken(std::string token);
  // No request is sent before `until` (on the CallContext clock).
  void BackOffUntil(Duration until);
  const std::string& base_url() const { return options_.base_url; }
  int64_t requests_sent() const;

 private:
  Client(ClientOptions options, SleepFn sleep);
  Status Configure();

  ClientOptions options_;
  SleepFn sleep_;
  mutable std::mutex mu_;           // guards everything below; one exchange at a time
  void* curl_ = nullptr;            // CURL*, reused so TLS sessions are kept alive
  TokenBucket bucket_;
  Duration not_before_;
  bool has_not_before_ = false;
  int64_t requests_sent_ = 0;
};

// "a b/c" -> "a%20b%2Fc" (RFC 3986 unreserved characters are kept).
std::string PercentEncode(const std::string& text);

}  // namespace gpufed::connectors::http

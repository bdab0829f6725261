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
//   - Bounded whatever the peer does: a reply over `max_reply_bytes` (or headers over
//     `max_header_bytes`) is cut off while it arrives, never buffered whole; the whole
//     exchange (connect, TLS, headers, body) ends within the call's timeout; redirects are
//     never followed (a 3xx is an error naming where it pointed, so a token never travels
//     to another host); no compressed encodings are asked for (no decompression bombs).
//   - Why a peer is refused (TLS verification, over the cap, timeout, unreachable,
//     redirect, 5xx/429) is logged once per episode (peer_log.h) and counted (refusals()).
// HTTP answers of any status are returned as a Response; mapping status codes to
// Status codes is the caller's business (the meaning differs between APIs).
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/http/peer_log.h"
#include "connectors/http/token_bucket.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors::http {

// PEM text or a file holding it; `pem` wins when both are set.
struct PemSource {
  std::string pem;
  std::string file;
  bool empty() const { return pem.empty() && file.empty(); }
};

// The default reply cap: one page of a Kubernetes list (500 objects; nodes with long
// status.images lists are the largest common objects, 30-60 KiB, so ~30 MiB at worst)
// with room to spare, and far from what a flooding peer can make a controller hold
// (a 2 GB reply was seen). Connectors with larger unpaged replies set their own
// (slurm/slurm_client.h).
inline constexpr size_t kDefaultMaxReplyBytes = size_t{64} << 20;
// Response headers: real APIs send a few KiB; libcurl keeps each line whole.
inline constexpr size_t kDefaultMaxHeaderBytes = size_t{256} << 10;

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
  // A reply body larger than this fails the call (Unavailable, "reply from URL larger
  // than N bytes") as soon as it passes the cap, or at once when its Content-Length says so.
  size_t max_reply_bytes = kDefaultMaxReplyBytes;
  size_t max_header_bytes = kDefaultMaxHeaderBytes;
  // A transfer that moves nothing for this long is abandoned (DeadlineExceeded) even when
  // the call's timeout is longer: a peer that stops sending mid-reply.
  Duration stall_timeout = Duration::FromSeconds(30);
  // Where the refusal log goes (peer_log.h); empty: standard error.
  LogFn log;
};

// Why requests to a peer failed, by kind, since the client was created.
struct RefusalCounts {
  int64_t unreachable = 0;  // connect, reset, handshake, a reply that is not HTTP
  int64_t timeout = 0;      // the call's timeout or the stall timeout
  int64_t tls = 0;          // certificate or host name verification, unusable TLS material
  int64_t over_cap = 0;     // reply body or headers over the cap
  int64_t redirect = 0;     // a 3xx answer (never followed)
  int64_t bad_status = 0;   // HTTP 5xx or 429
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
  // rate limit would need a longer wait than the timeout allows, a server's
  // Retry-After is still pending, or the reply is over the cap; DeadlineExceeded on
  // timeout or a stalled transfer; FailedPrecondition when the server's certificate
  // fails verification, local TLS material is unusable, or the server answers with a
  // redirect (3xx other than 304).
  Result<Response> Do(const Request& request, const CallContext& ctx) EXCLUDES(mu_);

  // Replaces the bearer token (rotated token files).
  void SetBearerToken(std::string token) EXCLUDES(mu_);
  // No request is sent before `until` (on the CallContext clock).
  void BackOffUntil(Duration until) EXCLUDES(mu_);
  const std::string& base_url() const { return options_.base_url; }
  int64_t requests_sent() const EXCLUDES(mu_);
  RefusalCounts refusals() const EXCLUDES(mu_);

 private:
  Client(ClientOptions options, SleepFn sleep);
  Status Configure() REQUIRES(mu_);
  // Counts and logs a failed exchange; returns `status`.
  Status Refused(Status status, int64_t RefusalCounts::* kind) REQUIRES(mu_);

  // Never changed once Create has read the files (libcurl's blobs take non-const
  // pointers, hence no const): the token that SetBearerToken replaces lives under mu_
  // (bearer_token_), so nothing here changes while an exchange reads it.
  ClientOptions options_;
  SleepFn sleep_;
  mutable Mutex mu_;  // one exchange at a time
  std::string bearer_token_ GUARDED_BY(mu_);  // "Authorization: Bearer ..."; never logged
  void* curl_ GUARDED_BY(mu_) = nullptr;      // CURL*, reused so TLS sessions are kept alive
  TokenBucket bucket_ GUARDED_BY(mu_);
  Duration not_before_ GUARDED_BY(mu_);
  bool has_not_before_ GUARDED_BY(mu_) = false;
  int64_t requests_sent_ GUARDED_BY(mu_) = 0;
  RefusalCounts refusals_ GUARDED_BY(mu_);
  PeerLog log_ GUARDED_BY(mu_);
};

// A call's time budget shared by its requests (a version negotiation and then the
// request; the pages of a list): each request gets what is left of ctx.timeout, on the
// steady clock (the clock libcurl's own timeouts run on), so a call ends within its
// timeout however many requests it makes. Copyable; cheap.
class CallBudget {
 public:
  explicit CallBudget(const CallContext& ctx);
  // The context for the next request: its timeout is the time left, at most `cap` when
  // `cap` is positive. DeadlineExceeded, naming `what`, once nothing is left.
  Result<CallContext> Next(const std::string& what, Duration cap = Duration()) const;
  const CallContext& context() const { return ctx_; }

 private:
  CallContext ctx_;
  std::chrono::steady_clock::time_point deadline_;
};

// "a b/c" -> "a%20b%2Fc" (RFC 3986 unreserved characters are kept).
std::string PercentEncode(const std::string& text);

}  // namespace gpufed::connectors::http

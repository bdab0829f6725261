#pragma once
// What the API decides about a request after its head and before any of its body is read
// (httplib's pre-routing handler): whether its framing can be trusted, who its bearer
// token names, whether that caller may use the path, and whether the caller is within its
// share of the server (rate and requests in flight). Every refusal here closes the
// connection, so no byte of an unread body is ever parsed as a next request.
#include <httplib.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "controller/common/clock.h"
#include "controller/common/mutex.h"
#include "controller/common/token_bucket.h"
#include "controller/reconcile/controller.h"
#include "controller/server/guarded_server.h"
#include "controller/server/token_table.h"

namespace gpufed::server {

class Admission {
 public:
  // Requests with a missing or unknown token, per client address: over this rate they
  // get 429 instead of 401 (guessing tokens costs the guesser, not the server).
  static constexpr double kUnknownTokenRatePerSecond = 10;
  static constexpr int kUnknownTokenBurst = 20;

  // `controller` answers the tenants' limits; `http` holds the places in flight. All must
  // outlive the Admission. `clock` null: the wall clock.
  Admission(reconcile::Controller* controller, const TokenTable* tokens, GuardedServer* http,
            const gpufed::Clock* clock);

  // Whom a request acts as: the caller its bearer token names, named by the connection's
  // verified client certificate when it presented one (CallerOnConnection); nullopt
  // without a known token, or with a token bound to another certificate than the
  // connection's.
  std::optional<Caller> CallerOf(const httplib::Request& req) const;
  // Answers (and returns true for) a request refused before its body is read.
  bool Refuse(const httplib::Request& req, httplib::Response& res) EXCLUDES(mu_);

 private:
  // A rate limit and its bucket.
  using Buckets = std::map<std::string, std::pair<std::pair<double, int>, TokenBucket>>;
  // Which of the two tables of buckets a request is counted in.
  enum class BucketTable { kTenant, kUnknownToken };

  // Zero when a request of `key` may go ahead under `per_second`/`burst`; else how long
  // until it could. The table is named rather than passed by reference, so that it is
  // only ever touched with mu_ held.
  Duration TakeRate(BucketTable table, const std::string& key, double per_second, int burst) EXCLUDES(mu_);

  reconcile::Controller* controller_;
  const TokenTable* tokens_;
  GuardedServer* http_;
  const gpufed::Clock* clock_;
  gpufed::SystemClock wall_;
  Mutex mu_;
  // One bucket per tenant (rebuilt when its limit changes with a revision), and one per
  // client address for unknown tokens (bounded: idle ones are dropped when it grows).
  Buckets tenant_buckets_ GUARDED_BY(mu_);
  Buckets unknown_buckets_ GUARDED_BY(mu_);
};

// True when `method` `path` is a route that reads a request body (a workload submission).
// Every other request that declares one is refused before it is read.
bool RouteTakesBody(const std::string& method, const std::string& path);
// Answers (400, connection closed; true) a request whose framing cannot be trusted (two
// Content-Lengths, an unreadable one, Transfer-Encoding other than chunked or beside a
// Content-Length) or that declares a body on a route that takes none, before it is read.
bool RefuseUntrustedBody(const httplib::Request& req, httplib::Response& res);

}  // namespace gpufed::server

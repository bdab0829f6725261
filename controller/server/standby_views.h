#pragma once
// A standby replica's answers from what the leader published (standby_server.h): the
// reads of the leader's in-memory views (/v1/clusters, /v1/tenants[/{name}], /v1/queue,
// /v1/audit) from the newest published view (view_reads.h), scoped to the caller with the
// leader's own functions (reconcile/read_views.h), and /v1/history from the samples the
// store keeps (workload_reads.h). And who a standby's request acts as, for every read it
// answers.
#include <optional>

#include <httplib.h>

#include "controller/common/status.h"
#include "controller/server/standby_read_limits.h"
#include "controller/server/token_table.h"
#include "controller/server/view_reads.h"
#include "controller/server/workload_reads.h"

namespace gpufed::server {

// How long a client of a standby should wait before it retries (Retry-After): about one
// election retry period while no leader is known, and the period a leader publishes its
// views at.
inline constexpr char kStandbyRetryAfterSeconds[] = "2";

// The caller a request's bearer token names (with the connection's client certificate,
// as the leader's admission names it); nullopt without a valid token.
std::optional<Caller> StandbyCallerOf(const TokenTable& tokens, const httplib::Request& req);
// Answers 401 (with WWW-Authenticate).
void AnswerUnauthorized(httplib::Response& res);
// The caller of a read of data: nullopt with the request answered, 401 without a valid
// token and 403 for a metrics token, as the leader answers them, and 429 with Retry-After
// for a tenant over its rate on this standby (`limits`; null: none).
std::optional<Caller> AuthorizeStandbyRead(const TokenTable& tokens, StandbyReadLimits* limits,
                                           const httplib::Request& req, httplib::Response& res);
// Answers an error of a read; Unavailable also says when to retry (Retry-After).
void SendStandbyReadError(httplib::Response& res, const Status& status);

// Answers a GET of a view above and returns true; false when the request is none of
// them, or when the view it needs was too large to publish (the caller then sends it to
// the leader). `reads` (null: /v1/history is not answered here) and `views` must outlive
// the call.
bool ServePublishedView(const TokenTable& tokens, StandbyReadLimits* limits, ViewReads& views, WorkloadReads* reads,
                        const httplib::Request& req, httplib::Response& res);

}  // namespace gpufed::server

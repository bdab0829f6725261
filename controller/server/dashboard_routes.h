#pragma once
// The read-only endpoints the web dashboard (and any client) polls: /v1/queue,
// /v1/tenants, /v1/history and /v1/audit. Each answers for the token's tenant only (an
// admin: everyone), like the rest of the API.
#include <functional>
#include <optional>
#include <string>

#include <httplib.h>

#include "controller/reconcile/controller.h"
#include "controller/server/token_table.h"

namespace gpufed::server {

// Whom a request acts as: the caller its bearer token names (its tenant, "" for an admin)
// with its principal (the token's name, or the connection's client certificate's;
// Admission::CallerOf), or nullopt with the request answered (401).
using Authorize = std::function<std::optional<Caller>(const httplib::Request&, httplib::Response&)>;

// /v1/history's `?since=SECONDS` (controller time): nullopt without it, InvalidArgument
// when it is not a number of seconds >= 0. The leader's route and a standby's parse it here.
Result<std::optional<Duration>> HistorySince(const httplib::Request& req);

// `controller` must outlive the server.
void AddDashboardRoutes(httplib::Server& http, reconcile::Controller* controller, const Authorize& auth);

}  // namespace gpufed::server

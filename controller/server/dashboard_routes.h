#pragma once
// The read-only endpoints the web dashboard (and any client) polls: /v1/queue,
// /v1/tenants, /v1/history and /v1/audit. Each answers for the token's tenant only (an
// admin: everyone), like the rest of the API.
#include <functional>
#include <string>

#include <httplib.h>

#include "controller/reconcile/controller.h"

namespace gpufed::server {

// Sets `tenant` to the caller's tenant ("" for an admin) and returns true, or answers
// the request (401) and returns false.
using Authorize = std::function<bool(const httplib::Request&, httplib::Response&, std::string& tenant)>;

// `controller` must outlive the server.
void AddDashboardRoutes(httplib::Server& http, reconcile::Controller* controller, Authorize auth);

}  // namespace gpufed::server

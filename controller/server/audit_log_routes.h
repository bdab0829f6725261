#pragma once
// GET /v1/audit/log/checkpoint and /v1/audit/log/tile/...: the journal's Merkle tree in
// the C2SP tlog-tiles layout (audit/log_view.h), read-only, for verifiers that know
// nothing of gpufed. Any API token (a tenant's too) reads the checkpoint and the hash
// tiles, which say nothing about anyone's work; entry bundles hold every tenant's
// records, so only an admin token reads them (a tenant gets 403).
#include <httplib.h>

#include "controller/audit/log_view.h"
#include "controller/server/dashboard_routes.h"

namespace gpufed::server {

// `log` must outlive the server; null: the routes answer 503 (a read-only controller).
void AddAuditLogRoutes(httplib::Server& http, const audit::LogView* log, const Authorize& auth);

}  // namespace gpufed::server

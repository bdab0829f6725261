#include "controller/server/dashboard_routes.h"

#include "controller/server/http_json.h"

namespace gpufed::server {

void AddDashboardRoutes(httplib::Server& http, reconcile::Controller* controller, Authorize auth) {
  // A route whose answer is a Result of JSON, scoped to the caller's tenant.
  auto scoped = [controller, auth](Result<nlohmann::json> (reconcile::Controller::*read)(const std::string&)) {
    return [controller, auth, read](const httplib::Request& req, httplib::Response& res) {
      std::string tenant;
      if (!auth(req, res, tenant)) return;
      Result<nlohmann::json> body = (controller->*read)(tenant);
      if (!body.ok()) return SendError(res, body.status());
      SendJson(res, *body);
    };
  };
  http.Get("/v1/queue", scoped(&reconcile::Controller::Queue));
  http.Get("/v1/tenants", scoped(&reconcile::Controller::Tenants));
  http.Get("/v1/history", [controller, auth](const httplib::Request& req, httplib::Response& res) {
    std::string tenant;
    if (!auth(req, res, tenant)) return;
    SendJson(res, controller->HistoryJson(tenant));
  });
  // The journal's head and sinks say nothing about any tenant's work.
  http.Get("/v1/audit", [controller, auth](const httplib::Request& req, httplib::Response& res) {
    std::string tenant;
    if (!auth(req, res, tenant)) return;
    SendJson(res, controller->AuditStatus());
  });
}

}  // namespace gpufed::server

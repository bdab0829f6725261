#include "controller/server/dashboard_routes.h"

#include <charconv>
#include <cmath>

#include "controller/server/http_json.h"

namespace gpufed::server {

Result<std::optional<Duration>> HistorySince(const httplib::Request& req) {
  if (!req.has_param("since")) return std::optional<Duration>();
  const std::string text = req.get_param_value("since");
  double seconds = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e12) {
    return InvalidArgument("since: expected seconds of controller time (a number >= 0), not '" + text.substr(0, 32) +
                           "'");
  }
  return std::optional<Duration>(Duration::FromMillis(static_cast<int64_t>(seconds * 1000)));
}

void AddDashboardRoutes(httplib::Server& http, reconcile::Controller* controller, const Authorize& auth) {
  // A route whose answer is a Result of JSON, scoped to the caller's tenant.
  auto scoped = [controller, auth](Result<nlohmann::json> (reconcile::Controller::*read)(const std::string&)) {
    return [controller, auth, read](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const std::string& tenant = caller->tenant;
      Result<nlohmann::json> body = (controller->*read)(tenant);
      if (!body.ok()) return SendError(res, body.status());
      SendJson(res, *body);
    };
  };
  http.Get("/v1/queue", scoped(&reconcile::Controller::Queue));
  http.Get("/v1/tenants", scoped(&reconcile::Controller::Tenants));
  // ?since=SECONDS (controller time): only the samples taken after it, so a poll carries
  // what is new instead of the whole day.
  http.Get("/v1/history", [controller, auth](const httplib::Request& req, httplib::Response& res) {
    const std::optional<Caller> caller = auth(req, res);
    if (!caller) return;
    const std::string& tenant = caller->tenant;
    const Result<std::optional<Duration>> since = HistorySince(req);
    if (!since.ok()) return SendError(res, since.status());
    SendJson(res, controller->HistoryJson(tenant, *since));
  });
  // The journal's head and sinks say nothing about any tenant's work.
  http.Get("/v1/audit", [controller, auth](const httplib::Request& req, httplib::Response& res) {
    if (!auth(req, res)) return;
    SendJson(res, controller->AuditStatus());
  });
}

}  // namespace gpufed::server

#include "controller/server/standby_views.h"

#include <cstdio>
#include <regex>

#include "controller/reconcile/read_views.h"
#include "controller/server/client_certificate.h"
#include "controller/server/dashboard_routes.h"
#include "controller/server/http_json.h"
#include "controller/server/standby_server.h"
#include "controller/server/workload_api.h"

namespace gpufed::server {
namespace {

enum class ViewRoute { kClusters, kTenants, kTenant, kQueue, kAudit, kHistory };

std::optional<ViewRoute> RouteOf(const std::string& path, std::smatch& m) {
  static const std::regex tenant(std::string("/v1/tenants/") + kNamePattern);
  if (path == "/v1/clusters") return ViewRoute::kClusters;
  if (path == "/v1/tenants") return ViewRoute::kTenants;
  if (path == "/v1/queue") return ViewRoute::kQueue;
  if (path == "/v1/audit") return ViewRoute::kAudit;
  if (path == "/v1/history") return ViewRoute::kHistory;
  if (std::regex_match(path, m, tenant)) return ViewRoute::kTenant;
  return std::nullopt;
}

// The published view a route answers from. /v1/history's samples are the store's; the
// newest view says up to which controller time the leader had published (any view would:
// one transaction publishes them all).
const char* ViewOf(ViewRoute route) {
  switch (route) {
    case ViewRoute::kClusters:
    case ViewRoute::kHistory: return reconcile::kClustersView;
    case ViewRoute::kTenants:
    case ViewRoute::kTenant: return reconcile::kTenantsView;
    case ViewRoute::kQueue: return reconcile::kQueueView;
    case ViewRoute::kAudit: return reconcile::kAuditView;
  }
  return reconcile::kClustersView;
}

}  // namespace

std::optional<Caller> StandbyCallerOf(const TokenTable& tokens, const httplib::Request& req) {
  const std::string header = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return std::nullopt;
  const Caller* token = tokens.Find(std::string_view(header).substr(prefix.size()));
  if (token == nullptr) return std::nullopt;
  return CallerOnConnection(*token, VerifiedClientPrincipal(req.ssl));
}

void AnswerUnauthorized(httplib::Response& res) {
  res.set_header("WWW-Authenticate", "Bearer");
  SendError(res, Status(StatusCode::kUnauthenticated, "missing or unknown bearer token"));
}

std::optional<Caller> AuthorizeStandbyRead(const TokenTable& tokens, StandbyReadLimits* limits,
                                           const httplib::Request& req, httplib::Response& res) {
  std::optional<Caller> caller = StandbyCallerOf(tokens, req);
  if (!caller) {
    AnswerUnauthorized(res);
    return std::nullopt;
  }
  if (caller->role == Caller::Role::kMetrics) {
    SendError(res, Status(StatusCode::kPermissionDenied, "a metrics token reads /metrics only"));
    return std::nullopt;
  }
  if (limits != nullptr && caller->role == Caller::Role::kTenant && !limits->Take(caller->tenant)) {
    const std::string seconds = std::to_string(limits->retry_after_seconds());
    res.set_header("Retry-After", seconds);
    SendError(res, Status(StatusCode::kResourceExhausted, "tenant " + caller->tenant +
                                                              " is over its read rate on this standby; retry after " +
                                                              seconds + " s"));
    res.status = 429;
    return std::nullopt;
  }
  return caller;
}

void SendStandbyReadError(httplib::Response& res, const Status& status) {
  if (status.code() == StatusCode::kUnavailable) res.set_header("Retry-After", kStandbyRetryAfterSeconds);
  SendError(res, status);
}

bool ServePublishedView(const TokenTable& tokens, StandbyReadLimits* limits, ViewReads& views, WorkloadReads* reads,
                        const httplib::Request& req, httplib::Response& res) {
  std::smatch m;
  const std::optional<ViewRoute> route = RouteOf(req.path, m);
  if (!route || (*route == ViewRoute::kHistory && reads == nullptr)) return false;
  res.set_header(kServedByHeader, "standby");
  const std::optional<Caller> caller = AuthorizeStandbyRead(tokens, limits, req, res);
  if (!caller) return true;
  const std::string& tenant = caller->tenant;
  // What the leader refuses before it reads anything, refused here the same way.
  if (*route == ViewRoute::kTenant) {
    if (Status visible = reconcile::TenantVisible(m.str(1), tenant); !visible.ok()) {
      SendError(res, visible);
      return true;
    }
  }
  Result<std::optional<Duration>> since = std::optional<Duration>();
  if (*route == ViewRoute::kHistory) {
    since = HistorySince(req);
    if (!since.ok()) {
      SendError(res, since.status());
      return true;
    }
  }
  Result<PublishedView> view = views.ReadView(ViewOf(*route));
  if (!view.ok()) {
    SendStandbyReadError(res, view.status());
    return true;
  }
  if (view->oversized) {
    res.headers.erase(kServedByHeader);
    return false;  // the leader answers it
  }
  char age[32];
  std::snprintf(age, sizeof age, "%.3f", view->age_seconds);
  res.set_header(kViewAgeHeader, age);
  res.set_header(kViewTermHeader, std::to_string(view->term));
  Result<nlohmann::json> body = view->body;
  switch (*route) {
    case ViewRoute::kClusters: body = nlohmann::json{{"items", view->body}}; break;
    case ViewRoute::kTenants: body = reconcile::ScopeTenants(view->body, tenant); break;
    case ViewRoute::kTenant: body = reconcile::ScopeTenant(view->body, m.str(1), tenant); break;
    case ViewRoute::kQueue: body = reconcile::ScopeQueue(view->body, tenant); break;
    case ViewRoute::kAudit: break;  // the journal's head and sinks say nothing about any tenant's work
    case ViewRoute::kHistory: body = reads->History(tenant, *since, view->controller_now); break;
  }
  if (!body.ok()) {
    SendStandbyReadError(res, body.status());
  } else {
    SendJson(res, *body);
  }
  return true;
}

}  // namespace gpufed::server

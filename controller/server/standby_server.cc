#include "controller/server/standby_server.h"

#include <httplib.h>

#include <regex>
#include <vector>

#include "controller/server/connection_stream.h"
#include "controller/server/guarded_server.h"
#include "controller/server/http_json.h"
#include "controller/server/server.h"
#include "controller/server/standby_views.h"
#include "controller/server/ui_routes.h"
#include "controller/server/workload_api.h"

namespace gpufed::server {
namespace {

// The workload API's reads a standby answers itself, as the leader routes them (server.cc:
// the namespaced paths and the short ones for the token's own tenant).
enum class ReadKind { kList, kGet, kDecisions, kExplain };
struct ReadRoute {
  std::regex path;
  ReadKind kind;
  bool namespaced;  // the path starts with /v1/tenants/{tenant}
};

const std::vector<ReadRoute>& ReadRoutes() {
  static const std::vector<ReadRoute> routes = [] {
    const std::string name = kNamePattern;
    const std::string tenant = TenantWorkloadsRoute();
    std::vector<ReadRoute> r;
    r.push_back({std::regex("/v1/workloads"), ReadKind::kList, false});
    r.push_back({std::regex(tenant), ReadKind::kList, true});
    r.push_back({std::regex("/v1/workloads/" + name), ReadKind::kGet, false});
    r.push_back({std::regex(tenant + "/" + name), ReadKind::kGet, true});
    r.push_back({std::regex("/v1/decisions"), ReadKind::kDecisions, false});
    r.push_back({std::regex(tenant + "/" + name + "/decisions"), ReadKind::kDecisions, true});
    r.push_back({std::regex("/v1/explain/" + name), ReadKind::kExplain, false});
    r.push_back({std::regex(tenant + "/" + name + "/explain"), ReadKind::kExplain, true});
    return r;
  }();
  return routes;
}

// The workload a path names (server.cc's WorkloadRefOf).
reconcile::WorkloadRef PathRef(const ReadRoute& route, const std::smatch& m) {
  return route.namespaced ? reconcile::WorkloadRef{m.str(1), m.str(2)} : reconcile::WorkloadRef{"", m.str(1)};
}

// The answer to one read: the leader's JSON for what the caller (its tenant, "" for an
// admin) may see.
Result<nlohmann::json> Read(WorkloadReads& reads, const ReadRoute& route, const std::smatch& m,
                            const httplib::Request& req, const std::string& caller) {
  switch (route.kind) {
    case ReadKind::kList: {
      Result<std::vector<store::WorkloadRecord>> all = reads.List(caller, route.namespaced ? m.str(1) : "");
      if (!all.ok()) return all.status();
      nlohmann::json items = nlohmann::json::array();
      for (const store::WorkloadRecord& r : *all) items.push_back(WorkloadJson(r));
      return nlohmann::json{{"items", std::move(items)}};
    }
    case ReadKind::kGet: {
      Result<store::WorkloadRecord> r = reads.Get(PathRef(route, m), caller);
      if (!r.ok()) return r.status();
      return WorkloadJson(*r);
    }
    case ReadKind::kExplain: return reads.Explain(PathRef(route, m), caller);
    case ReadKind::kDecisions: {
      const reconcile::WorkloadRef ref =
          route.namespaced ? PathRef(route, m) : reconcile::WorkloadRef{"", req.get_param_value("workload")};
      Result<std::vector<store::DecisionRow>> rows = reads.Decisions(ref, caller);
      if (!rows.ok()) return rows.status();
      return DecisionsJson(*rows);
    }
  }
  return Internal("unknown read");
}

// Answers a workload read from the database; false when the request is not one.
bool ServeRead(const StandbyOptions& o, StandbyReadLimits* limits, const httplib::Request& req,
               httplib::Response& res) {
  for (const ReadRoute& route : ReadRoutes()) {
    std::smatch m;
    if (!std::regex_match(req.path, m, route.path)) continue;
    res.set_header(kServedByHeader, "standby");
    const std::optional<Caller> caller = AuthorizeStandbyRead(o.tokens, limits, req, res);
    if (!caller) return true;
    Result<nlohmann::json> body = Read(*o.reads, route, m, req, caller->tenant);
    if (body.ok()) {
      SendJson(res, *body);
    } else {
      SendStandbyReadError(res, body.status());
    }
    return true;
  }
  return false;
}

}  // namespace

Result<std::unique_ptr<StandbyServer>> StandbyServer::Start(StandbyOptions options) {
  std::unique_ptr<StandbyServer> s(new StandbyServer());
  s->options_ = std::move(options);
  const StandbyOptions& o = s->options_;
  Result<std::unique_ptr<TlsContext>> tls = LoadApiTls(o.tls_cert, o.tls_key, o.tls_client_ca, o.tokens);
  if (!tls.ok()) return tls.status();
  s->http_ = std::make_unique<GuardedServer>(o.connections, std::move(tls).value());
  GuardedServer& http = *s->http_;
  s->limits_ = std::make_unique<StandbyReadLimits>(o.tenant_reads_per_second, o.tenant_reads_burst, o.clock);
  const StandbyOptions* opts = &s->options_;
  StandbyReadLimits* limits = s->limits_.get();
  // Everything is answered from the request's head, before any body is read.
  http.set_pre_routing_handler([opts, limits](const httplib::Request& req, httplib::Response& res) {
    // A body (of any framing) is never read: the connection ends after the answer.
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
      res.set_header("Connection", "close");
    }
    const bool get = req.method == "GET" || req.method == "HEAD";
    if (get && req.path == "/healthz") {
      SendJson(res, {{"status", "ok"}});
    } else if (opts->metrics_only) {
      if (get && req.path == "/metrics") {
        res.set_content(opts->metrics(), "text/plain; version=0.0.4");
      } else {
        SendError(res, NotFound("this listener serves /metrics only"));
      }
    } else if (get && req.path == "/readyz") {
      SendJson(res, opts->status(), 503);
    } else if (get && req.path == "/v1/status") {
      if (!StandbyCallerOf(opts->tokens, req))
        return AnswerUnauthorized(res), httplib::Server::HandlerResponse::Handled;
      SendJson(res, opts->status());
    } else if (get && req.path == "/metrics") {
      const std::optional<Caller> caller = StandbyCallerOf(opts->tokens, req);
      if (!caller) return AnswerUnauthorized(res), httplib::Server::HandlerResponse::Handled;
      if (caller->role == Caller::Role::kTenant) {
        SendError(res, Status(StatusCode::kPermissionDenied, "/metrics needs an admin or metrics token"));
      } else {
        res.set_content(opts->metrics(), "text/plain; version=0.0.4");
      }
    } else if (IsUiAssetRequest(req.method, req.path)) {
      ServeUiRequest(req, res);  // the dashboard's page: no data in it, no token needed
    } else if (get && ((opts->reads != nullptr && ServeRead(*opts, limits, req, res)) ||
                       (opts->views != nullptr &&
                        ServePublishedView(opts->tokens, limits, *opts->views, opts->reads, req, res)))) {
      // answered from the database: its rows, or the leader's newest published view
    } else if (std::optional<std::string> leader = opts->leader_url(); leader) {
      // The target as the client sent it (path and query): the leader checks the token.
      res.status = 307;
      res.set_header("Location", *leader + req.target);
      res.set_header("Connection", "close");
      SendJson(res, {{"standby", true}, {"leader", *leader}}, 307);
    } else {
      res.set_header("Retry-After", kStandbyRetryAfterSeconds);
      SendError(res, Unavailable("this replica is a standby and no leader is known yet: retry shortly"));
    }
    return httplib::Server::HandlerResponse::Handled;
  });
  const int port = http.Start(o.host, o.port);
  if (port < 0) return Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port));
  s->port_ = port;
  return s;
}

void StandbyServer::Stop() {
  if (http_) http_->Stop();
}

StandbyServer::~StandbyServer() { Stop(); }

}  // namespace gpufed::server

#include "controller/server/server.h"

#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <iostream>
#include <mutex>
#include <sstream>

#include "controller/server/admission.h"
#include "controller/server/audit_log_routes.h"
#include "controller/server/dashboard_routes.h"
#include "controller/server/guarded_server.h"
#include "controller/server/http_json.h"
#include "controller/server/ui_routes.h"
#include "controller/server/workload_api.h"

namespace gpufed::server {

namespace {

void Answer500(httplib::Response& res) {
  SendError(res, Internal("internal error"));
  res.status = 500;
  res.set_header("Connection", "close");
}

// httplib's hooks around the routes. The pre-routing check runs after the request line
// and headers, before any body is read: a request that is refused there is answered
// without buffering what it sends, and its connection closed. A handler that throws
// answers 500 with no word of the exception (httplib's default would put its text in a
// header); the text goes to the log.
void GuardRequests(GuardedServer& http, Admission* admission) {
  http.set_pre_routing_handler([admission](const httplib::Request& req, httplib::Response& res) {
    return admission->Refuse(req, res) ? httplib::Server::HandlerResponse::Handled
                                       : httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, const std::exception_ptr& e) {
    std::string what = "unknown exception";  // also when there is none to rethrow
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
      what = "unknown exception";  // not a std::exception: it has no text to log
    }
    std::cerr << "gpufed run: API: " << req.method << " " << req.path << " failed: " << what << "\n";
    res.headers.clear();
    Answer500(res);
  });
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string code = res.status == 413 ? "RESOURCE_EXHAUSTED" : res.status == 404 ? "NOT_FOUND" : "ERROR";
    std::string message = res.status == 413 ? "request body too large" : "HTTP " + std::to_string(res.status);
    res.set_content(nlohmann::json{{"error", {{"code", code}, {"message", message}}}}.dump() + "\n",
                    "application/json");
  });
}

// Who a request acts as: its tenant ("" for admin) and principal; nullopt (with an answer
// sent) when none.
Authorize AuthorizeWith(Admission* admission) {
  return [admission](const httplib::Request& req, httplib::Response& res) -> std::optional<Caller> {
    std::optional<Caller> caller = admission->CallerOf(req);
    if (!caller || caller->role == Caller::Role::kMetrics) {
      SendError(res, Status(StatusCode::kUnauthenticated, "missing or unknown bearer token"));
      return std::nullopt;
    }
    return caller;
  };
}

// Whom the journal names for what a request asks (a submission, a cancel).
reconcile::Controller::Requester RequesterOf(const Caller& caller) { return {caller.tenant, caller.principal}; }

// /healthz and /readyz (no token) and /metrics. `tls`: how the listener is served, for
// /readyz ("off", "server", or "mutual": client certificates required).
void AddHealthRoutes(httplib::Server& http, reconcile::Controller* controller, const std::vector<std::string>& warnings,
                     const std::string& tls, const std::function<nlohmann::json()>& replica_status) {
  auto replica = [replica_status]() -> nlohmann::json {
    return replica_status ? replica_status() : nlohmann::json{{"role", "single"}};
  };
  // Who answers: this replica's role and who leads (any valid token: it names replicas,
  // never a tenant's data).
  http.Get("/v1/status", [controller, replica](const httplib::Request&, httplib::Response& res) {
    nlohmann::json body = replica();
    body["ready"] = controller->ready();
    body["revision"] = controller->active_revision();
    SendJson(res, body);
  });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { SendJson(res, {{"status", "ok"}}); });
  http.Get("/readyz", [controller, warnings, tls, replica](const httplib::Request&, httplib::Response& res) {
    bool ready = controller->ready();
    Status audit = controller->audit_health();
    nlohmann::json body = {{"ready", ready},
                           {"revision", controller->active_revision()},
                           {"audit", audit.ok() ? "ok" : audit.ToString()},
                           {"tls", tls},
                           {"replica", replica()}};
    // Sinks past their lag limit by name: the journal is not reaching its receivers.
    std::vector<std::string> lagging = controller->LaggingSinks();
    if (!lagging.empty()) body["laggingSinks"] = lagging;
    // Witnesses: how far they vouch for the journal, and how long the newest checkpoint
    // has waited for them (a refusing witness means the history is not the one it saw).
    nlohmann::json witnesses = nlohmann::json::array();
    const int64_t now_micros =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    for (const audit::WitnessStatus& w : controller->Witnesses()) {
      nlohmann::json item = {
          {"name", w.name},
          {"cosignedSize", w.cosigned_size},
          {"refusing", w.refused},
          {"unwitnessedSeconds", w.behind_since_micros == 0 ? 0 : (now_micros - w.behind_since_micros) / 1'000'000}};
      if (w.cosigned_at_micros != 0) item["cosignedAgeSeconds"] = (now_micros - w.cosigned_at_micros) / 1'000'000;
      if (!w.last_error.empty()) item["lastError"] = w.last_error;
      witnesses.push_back(std::move(item));
    }
    if (!witnesses.empty()) body["witnesses"] = std::move(witnesses);
    if (!warnings.empty()) body["warnings"] = warnings;
    SendJson(res, body, ready ? 200 : 503);
  });
  http.Get("/metrics", [controller](const httplib::Request&, httplib::Response& res) {
    // The pre-routing check let only admin and metrics tokens through.
    res.set_content(controller->Metrics(), "text/plain; version=0.0.4");
  });
}

// The paths and their aliases: workload_api.h.

// The workload a request names; `namespaced`: the path starts with /v1/tenants/{tenant}.
reconcile::Controller::WorkloadRef WorkloadRefOf(const httplib::Request& req, bool namespaced) {
  return namespaced ? reconcile::Controller::WorkloadRef{req.matches[1], req.matches[2]}
                    : reconcile::Controller::WorkloadRef{"", req.matches[1]};
}

// Reads a request body of at most `max_body` bytes into `body`. The body is streamed
// through httplib's reader so the cap holds for chunked transfers and every content type
// alike (httplib's own limit covers only Content-Length bodies); a declared length over
// the cap is refused before reading (httplib's reader would refuse it too, without
// saying why).
Status ReadCappedBody(const httplib::Request& req, const httplib::ContentReader& read, size_t max_body,
                      std::string& body) {
  const std::string declared = req.get_header_value("Content-Length");
  size_t length = 0;
  auto [end, ec] = std::from_chars(declared.data(), declared.data() + declared.size(), length);
  const bool declared_too_large = !declared.empty() && (ec != std::errc() || length > max_body);
  bool too_large = declared_too_large;
  const bool complete = !declared_too_large && read([&](const char* data, size_t length) {
    if (body.size() + length > max_body) {
      too_large = true;
      return false;  // stop reading: nothing past the cap is buffered
    }
    body.append(data, length);
    return true;
  });
  if (too_large) {
    return Status(StatusCode::kResourceExhausted, "request body larger than " + std::to_string(max_body) + " bytes");
  }
  if (!complete) return InvalidArgument("request body could not be read");
  return Status::Ok();
}

// POST a workload (YAML, or JSON by Content-Type).
auto SubmitHandler(reconcile::Controller* controller, const Authorize& auth, size_t max_body, bool namespaced) {
  return [=](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    const std::optional<Caller> caller = auth(req, res);
    if (!caller) return;
    const std::string& tenant = caller->tenant;
    const std::string owner = namespaced ? std::string(req.matches[1]) : "";
    // Another tenant's path looks like an unknown one, refused before any body is read.
    if (!tenant.empty() && !owner.empty() && owner != tenant) {
      res.set_header("Connection", "close");
      return SendError(res, NotFound("no tenant " + owner));
    }
    std::string body;
    if (Status read_status = ReadCappedBody(req, read, max_body, body); !read_status.ok()) {
      res.set_header("Connection", "close");
      return SendError(res, read_status);
    }
    std::string type = req.get_header_value("Content-Type");
    std::string file = type.find("json") != std::string::npos ? "request.json" : "request.yaml";
    Result<store::WorkloadRecord> r = controller->Submit(body, file, RequesterOf(*caller), owner);
    if (!r.ok()) return SendError(res, r.status());
    SendJson(res, WorkloadJson(*r), 201);
  };
}

// Submit, list, read and cancel workloads, on the namespaced paths and their aliases.
void AddWorkloadRoutes(httplib::Server& http, reconcile::Controller* controller, const Authorize& auth,
                       size_t max_body) {
  const std::string tenant_path = TenantWorkloadsRoute();
  http.Post("/v1/workloads", SubmitHandler(controller, auth, max_body, false));
  http.Post(tenant_path, SubmitHandler(controller, auth, max_body, true));
  auto list = [controller, auth](bool namespaced) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const std::string& tenant = caller->tenant;
      Result<std::vector<store::WorkloadRecord>> all =
          controller->List(tenant, namespaced ? std::string(req.matches[1]) : "");
      if (!all.ok()) return SendError(res, all.status());
      nlohmann::json items = nlohmann::json::array();
      for (const auto& r : *all) items.push_back(WorkloadJson(r));
      SendJson(res, {{"items", items}});
    };
  };
  http.Get("/v1/workloads", list(false));
  http.Get(tenant_path, list(true));
  auto get = [controller, auth](bool namespaced) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const std::string& tenant = caller->tenant;
      Result<store::WorkloadRecord> r = controller->Get(WorkloadRefOf(req, namespaced), tenant);
      if (!r.ok()) return SendError(res, r.status());
      SendJson(res, WorkloadJson(*r));
    };
  };
  http.Get(std::string("/v1/workloads/") + kNamePattern, get(false));
  http.Get(tenant_path + "/" + kNamePattern, get(true));
  auto cancel = [controller, auth](bool namespaced) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const reconcile::Controller::WorkloadRef ref = WorkloadRefOf(req, namespaced);
      Status s = controller->Cancel(ref, RequesterOf(*caller));
      if (!s.ok()) return SendError(res, s);
      SendJson(res, {{"name", ref.name}, {"cancel_requested", true}}, 202);
    };
  };
  http.Delete(std::string("/v1/workloads/") + kNamePattern, cancel(false));
  http.Delete(tenant_path + "/" + kNamePattern, cancel(true));
}

// A workload's decisions and explanation, a tenant's standing, the clusters.
void AddExplanationRoutes(httplib::Server& http, reconcile::Controller* controller, const Authorize& auth) {
  const std::string tenant_path = TenantWorkloadsRoute();
  const std::string tenant_route = std::string("/v1/tenants/") + kNamePattern;
  http.Get(tenant_route, [controller, auth](const httplib::Request& req, httplib::Response& res) {
    const std::optional<Caller> caller = auth(req, res);
    if (!caller) return;
    const std::string& tenant = caller->tenant;
    Result<nlohmann::json> t = controller->Tenant(req.matches[1], tenant);
    if (!t.ok()) return SendError(res, t.status());
    SendJson(res, *t);
  });
  http.Get("/v1/clusters", [controller, auth](const httplib::Request& req, httplib::Response& res) {
    if (!auth(req, res)) return;
    SendJson(res, {{"items", controller->Clusters()}});
  });
  auto decisions = [controller, auth](bool namespaced) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const std::string& tenant = caller->tenant;
      const reconcile::Controller::WorkloadRef ref =
          namespaced ? WorkloadRefOf(req, true)
                     : reconcile::Controller::WorkloadRef{"", req.get_param_value("workload")};
      Result<std::vector<store::DecisionRow>> rows = controller->Decisions(ref, tenant);
      if (!rows.ok()) return SendError(res, rows.status());
      SendJson(res, DecisionsJson(*rows));
    };
  };
  http.Get("/v1/decisions", decisions(false));
  http.Get(tenant_path + "/" + kNamePattern + "/decisions", decisions(true));
  auto explain = [controller, auth](bool namespaced) {
    return [=](const httplib::Request& req, httplib::Response& res) {
      const std::optional<Caller> caller = auth(req, res);
      if (!caller) return;
      const std::string& tenant = caller->tenant;
      Result<nlohmann::json> e = controller->Explain(WorkloadRefOf(req, namespaced), tenant);
      if (!e.ok()) return SendError(res, e.status());
      SendJson(res, *e);
    };
  };
  http.Get(std::string("/v1/explain/") + kNamePattern, explain(false));
  http.Get(tenant_path + "/" + kNamePattern + "/explain", explain(true));
}

}  // namespace

Status ApiServer::ReloadTls() {
  if (tls_cert_.empty()) return FailedPrecondition("the API serves plain HTTP: no certificate to reload");
  // The client CA is read again too (a CA bundle rotated in place), and never dropped.
  Result<std::unique_ptr<TlsContext>> loaded = TlsContext::Load(tls_cert_, tls_key_, tls_client_ca_);
  if (!loaded.ok()) return loaded.status();
  return http_->ReplaceTls(std::move(loaded).value());
}

Result<std::unique_ptr<TlsContext>> LoadApiTls(const std::string& tls_cert, const std::string& tls_key,
                                               const std::string& tls_client_ca, const TokenTable& tokens) {
  if (!tls_client_ca.empty() && tls_cert.empty()) {
    return InvalidArgument(
        "--tls-client-ca asks clients for certificates in the TLS handshake: it needs --tls-cert "
        "and --tls-key");
  }
  if (const size_t bound = tokens.bound_to_certificates(); bound > 0 && tls_client_ca.empty()) {
    return InvalidArgument("the tokens file binds " + std::to_string(bound) +
                           " token(s) to client certificates (names beginning with x509:), but the API asks for "
                           "none: give --tls-client-ca, or name those tokens otherwise");
  }
  if (tls_cert.empty()) return std::unique_ptr<TlsContext>();
  return TlsContext::Load(tls_cert, tls_key, tls_client_ca);
}

Result<std::unique_ptr<ApiServer>> ApiServer::Start(reconcile::Controller* controller, const ServerOptions& o) {
  std::unique_ptr<ApiServer> s(new ApiServer());
  // httplib parses and routes; the connections (deadlines, caps, keep-alive, TLS) are
  // GuardedServer's, because httplib's own let slow clients hold every worker.
  Result<std::unique_ptr<TlsContext>> loaded = LoadApiTls(o.tls_cert, o.tls_key, o.tls_client_ca, o.tokens);
  if (!loaded.ok()) return loaded.status();
  std::unique_ptr<TlsContext> tls = std::move(loaded).value();
  auto guarded = std::make_unique<GuardedServer>(o.connections, std::move(tls));
  GuardedServer& http = *guarded;
  s->http_ = std::move(guarded);
  http.set_payload_max_length(o.max_body_bytes);
  s->tokens_ = std::make_unique<TokenTable>(o.tokens);
  s->admission_ = std::make_unique<Admission>(controller, s->tokens_.get(), &http, o.clock);
  GuardRequests(http, s->admission_.get());
  const Authorize auth = AuthorizeWith(s->admission_.get());
  AddHealthRoutes(http, controller, o.warnings,
                  o.tls_cert.empty()        ? "off"
                  : o.tls_client_ca.empty() ? "server"
                                            : "mutual",
                  o.replica_status);
  AddWorkloadRoutes(http, controller, auth, o.max_body_bytes);
  AddExplanationRoutes(http, controller, auth);
  AddDashboardRoutes(http, controller, auth);
  AddAuditLogRoutes(http, o.audit_log, auth);
  RegisterUiRoutes(http);
  int port = http.Start(o.host, o.port);
  if (port < 0) return Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port));
  s->port_ = port;
  s->tls_cert_ = o.tls_cert;
  s->tls_key_ = o.tls_key;
  s->tls_client_ca_ = o.tls_client_ca;
  return s;
}

void ApiServer::Stop() {
  if (http_) http_->Stop();
}

ApiServer::~ApiServer() { Stop(); }

}  // namespace gpufed::server

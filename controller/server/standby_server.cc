#include "controller/server/standby_server.h"

#include <httplib.h>

#include "controller/server/client_certificate.h"
#include "controller/server/connection_stream.h"
#include "controller/server/guarded_server.h"
#include "controller/server/http_json.h"
#include "controller/server/server.h"

namespace gpufed::server {
namespace {

// How long a client should wait before retrying while no leader is known: about one
// election retry period.
constexpr char kRetryAfterSeconds[] = "2";

std::optional<Caller> CallerOf(const TokenTable& tokens, const httplib::Request& req) {
  const std::string header = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  if (header.rfind(prefix, 0) != 0) return std::nullopt;
  const Caller* token = tokens.Find(std::string_view(header).substr(prefix.size()));
  if (token == nullptr) return std::nullopt;
  return CallerOnConnection(*token, VerifiedClientPrincipal(req.ssl));
}

bool Unauthorized(httplib::Response& res) {
  res.set_header("WWW-Authenticate", "Bearer");
  SendError(res, Status(StatusCode::kUnauthenticated, "missing or unknown bearer token"));
  return true;
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
  const StandbyOptions* opts = &s->options_;
  // Everything is answered from the request's head, before any body is read.
  http.set_pre_routing_handler([opts](const httplib::Request& req, httplib::Response& res) {
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
      if (!CallerOf(opts->tokens, req)) return Unauthorized(res), httplib::Server::HandlerResponse::Handled;
      SendJson(res, opts->status());
    } else if (get && req.path == "/metrics") {
      const std::optional<Caller> caller = CallerOf(opts->tokens, req);
      if (!caller) return Unauthorized(res), httplib::Server::HandlerResponse::Handled;
      if (caller->role == Caller::Role::kTenant) {
        SendError(res, Status(StatusCode::kPermissionDenied, "/metrics needs an admin or metrics token"));
      } else {
        res.set_content(opts->metrics(), "text/plain; version=0.0.4");
      }
    } else if (std::optional<std::string> leader = opts->leader_url(); leader) {
      // The target as the client sent it (path and query): the leader checks the token.
      res.status = 307;
      res.set_header("Location", *leader + req.target);
      res.set_header("Connection", "close");
      SendJson(res, {{"standby", true}, {"leader", *leader}}, 307);
    } else {
      res.set_header("Retry-After", kRetryAfterSeconds);
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

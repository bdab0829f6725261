#include "controller/server/metrics_server.h"

#include <algorithm>
#include <chrono>

#include "controller/server/admission.h"
#include "controller/server/guarded_server.h"
#include "controller/server/listen_address.h"

namespace gpufed::server {
namespace {

constexpr const char* kFlag = "--metrics-listen";

}  // namespace

Result<MetricsEndpoint> ParseMetricsListen(const std::string& listen) {
  Result<ListenAddress> address = ParseListenAddress(kFlag, listen);
  if (!address.ok()) return address.status();
  if (!IsLoopbackOrPrivateAddress(address->host)) {
    return InvalidArgument(std::string(kFlag) + ": " + address->host +
                           " is not a loopback or private address (127.0.0.0/8, ::1, 10.0.0.0/8, 172.16.0.0/12, "
                           "192.168.0.0/16, fc00::/7); metrics are served without a token");
  }
  return MetricsEndpoint{address->host, address->port};
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(reconcile::Controller* controller,
                                                            const std::string& listen, const ConnectionLimits& limits) {
  Result<MetricsEndpoint> endpoint = ParseMetricsListen(listen);
  if (!endpoint.ok()) return endpoint.status();
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->http_ = std::make_unique<GuardedServer>(limits);
  GuardedServer& http = *s->http_;
  http.set_payload_max_length(size_t{64} * 1024);  // scrapes send no body
  // No route here reads a body: one that is declared is refused before it is read.
  http.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    return RefuseUntrustedBody(req, res) ? httplib::Server::HandlerResponse::Handled
                                         : httplib::Server::HandlerResponse::Unhandled;
  });
  http.Get("/metrics", [controller](const httplib::Request&, httplib::Response& res) {
    res.set_content(controller->Metrics(), "text/plain; version=0.0.4");
  });
  const int port = http.Start(endpoint->host, endpoint->port);
  if (port < 0) return Unavailable(std::string(kFlag) + ": cannot listen on " + listen);
  s->port_ = port;
  return s;
}

void MetricsServer::Stop() {
  if (http_) http_->Stop();
}

MetricsServer::~MetricsServer() { Stop(); }

}  // namespace gpufed::server

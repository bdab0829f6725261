#include "controller/server/metrics_server.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>

#include "controller/server/admission.h"
#include "controller/server/guarded_server.h"

namespace gpufed::server {
namespace {

constexpr const char* kFlag = "--metrics-listen";

bool LoopbackOrPrivate(const std::string& host) {
  unsigned char a[16];
  if (::inet_pton(AF_INET, host.c_str(), a) == 1) {
    return a[0] == 127 || a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) || (a[0] == 192 && a[1] == 168);
  }
  if (::inet_pton(AF_INET6, host.c_str(), a) == 1) {
    static constexpr unsigned char kLoopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return std::equal(a, a + 16, kLoopback) || (a[0] & 0xfe) == 0xfc;
  }
  return false;
}

}  // namespace

Result<MetricsEndpoint> ParseMetricsListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument(std::string(kFlag) + ": expected ADDR:PORT, got '" + listen + "'");
  }
  MetricsEndpoint e;
  e.host = listen.substr(0, colon);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  if (e.host == "localhost") e.host = "127.0.0.1";
  const std::string port = listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return InvalidArgument(std::string(kFlag) + ": bad port in '" + listen + "'");
  }
  e.port = std::stoi(port);
  if (!LoopbackOrPrivate(e.host)) {
    return InvalidArgument(std::string(kFlag) + ": " + e.host +
                           " is not a loopback or private address (127.0.0.0/8, ::1, 10.0.0.0/8, 172.16.0.0/12, "
                           "192.168.0.0/16, fc00::/7); metrics are served without a token");
  }
  return e;
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(reconcile::Controller* controller, const std::string& listen,
                                                            const ConnectionLimits& limits) {
  Result<MetricsEndpoint> endpoint = ParseMetricsListen(listen);
  if (!endpoint.ok()) return endpoint.status();
  std::unique_ptr<MetricsServer> s(new MetricsServer());
  s->http_ = std::make_unique<GuardedServer>(limits);
  GuardedServer& http = *s->http_;
  http.set_payload_max_length(64 * 1024);  // scrapes send no body
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

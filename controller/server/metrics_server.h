#pragma once
// `gpufed run --metrics-listen ADDR:PORT`: GET /metrics without a token, for Prometheus
// scrapes, on a second listener that may bind only a loopback or private address (the
// text shows every tenant's queues and spend, so it must not face the internet). Every
// other path is 404. Same connection layer (GuardedServer) and the same
// Controller::Metrics() as the API's /metrics.
#include <memory>
#include <string>

#include "controller/common/status.h"
#include "controller/reconcile/controller.h"
#include "controller/server/connection_limits.h"

namespace gpufed::server {

class GuardedServer;

struct MetricsEndpoint {
  std::string host;
  int port = 0;  // 0: any free port
};

// Parses ADDR:PORT ("127.0.0.1:9100", "[::1]:9100", "localhost:9100"); refuses, naming
// the flag, an address that is not loopback (127.0.0.0/8, ::1) or private (10.0.0.0/8,
// 172.16.0.0/12, 192.168.0.0/16, fc00::/7), and host names other than localhost.
Result<MetricsEndpoint> ParseMetricsListen(const std::string& listen);

class MetricsServer {
 public:
  // Binds and starts serving; `controller` must outlive the server.
  static Result<std::unique_ptr<MetricsServer>> Start(reconcile::Controller* controller, const std::string& listen,
                                                      const ConnectionLimits& limits = {});
  ~MetricsServer();
  int port() const { return port_; }
  void Stop();

 private:
  MetricsServer() = default;
  std::unique_ptr<GuardedServer> http_;
  int port_ = 0;
};

}  // namespace gpufed::server

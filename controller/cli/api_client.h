#pragma once
// The HTTP client side of `gpufed submit|get|cancel|explain`: where the controller is
// (--server, else $GPUFED_SERVER, else http://127.0.0.1:8080), the bearer token
// (--token, else $GPUFED_TOKEN, else $GPUFED_TOKEN_FILE's content) and, for a controller
// that requires client certificates (mutual TLS), the certificate and its key
// (--client-cert/--client-key, else $GPUFED_CLIENT_CERT/$GPUFED_CLIENT_KEY).
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "controller/common/status.h"

namespace gpufed::cli {

struct ApiTarget {
  std::string server;
  std::string token;
  std::string ca_cert;  // verify HTTPS against this CA (default: system store)
  std::string client_cert, client_key;  // PEM: present this certificate (mutual TLS)
  std::string tenant;   // workloads are namespaced by tenant; empty: the token's own
};

void AddApiTargetOptions(CLI::App* cmd, ApiTarget& target);

// The path of the workloads collection, or of one workload when `name` is given:
// /v1/tenants/{tenant}/workloads[/{name}] with --tenant, else the token's own
// tenant's alias /v1/workloads[/{name}].
std::string WorkloadsPath(const ApiTarget& target, const std::string& name = "");

struct ApiResponse {
  int status = 0;
  nlohmann::json body;
};

// Unavailable when the server cannot be reached.
Result<ApiResponse> CallApi(const ApiTarget& target, const std::string& method, const std::string& path,
                            const std::string& body = "", const std::string& content_type = "");

// Prints an error body ("error: CODE: message") to stderr; returns the exit code (1).
int ReportApiError(const std::string& command, const ApiResponse& response);

}  // namespace gpufed::cli

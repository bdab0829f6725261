#pragma once
// JSON answers of the HTTP API: a body with its status, and errors as
// {"error": {"code", "message"}} with the HTTP status a Status code maps to.
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"

namespace gpufed::server {

int HttpStatus(StatusCode code);
void SendError(httplib::Response& res, const Status& status);
void SendJson(httplib::Response& res, const nlohmann::json& body, int status = 200);

}  // namespace gpufed::server

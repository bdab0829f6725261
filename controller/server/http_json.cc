#include "controller/server/http_json.h"

namespace gpufed::server {

int HttpStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition: return 409;
    case StatusCode::kResourceExhausted: return 413;
    case StatusCode::kUnavailable: return 503;
    default: return 500;
  }
}

void SendError(httplib::Response& res, const Status& s) {
  res.status = HttpStatus(s.code());
  nlohmann::json body = {{"error", {{"code", StatusCodeName(s.code())}, {"message", s.message()}}}};
  res.set_content(body.dump() + "\n", "application/json");
}

void SendJson(httplib::Response& res, const nlohmann::json& body, int status) {
  res.status = status;
  res.set_content(body.dump() + "\n", "application/json");
}

}  // namespace gpufed::server

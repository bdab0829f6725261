#include "controller/pg/sqlstate.h"

namespace gpufed::pg {
namespace {

bool HasClass(std::string_view sqlstate, std::string_view class_code) {
  return sqlstate.size() == 5 && sqlstate.substr(0, 2) == class_code;
}

}  // namespace

StatusCode StatusCodeForSqlState(std::string_view sqlstate) {
  if (sqlstate == "40001" || sqlstate == "40P01") return StatusCode::kAborted;
  if (HasClass(sqlstate, "08") || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03" ||
      sqlstate == "25006" || sqlstate == "55P03" || sqlstate == "53300") {
    return StatusCode::kUnavailable;
  }
  if (sqlstate == "57014") return StatusCode::kDeadlineExceeded;
  if (sqlstate == "23505") return StatusCode::kAlreadyExists;
  if (HasClass(sqlstate, "23")) return StatusCode::kFailedPrecondition;
  if (HasClass(sqlstate, "28")) return StatusCode::kUnauthenticated;
  if (sqlstate == "42501") return StatusCode::kPermissionDenied;
  if (HasClass(sqlstate, "53")) return StatusCode::kResourceExhausted;
  if (HasClass(sqlstate, "22")) return StatusCode::kInvalidArgument;
  if (HasClass(sqlstate, "GF")) return StatusCode::kUnavailable;
  return StatusCode::kInternal;
}

Status StatusFromServerError(std::string_view purpose, std::string_view sqlstate, std::string_view primary_message,
                             std::string_view constraint_name) {
  std::string message(purpose);
  message += ": ";
  if (HasClass(sqlstate, "22")) {
    message += "the server refused a value as invalid input";
  } else if (HasClass(sqlstate, "23")) {
    message += sqlstate == "23505" ? "a row with that key already exists" : "an integrity constraint refused the row";
    if (!constraint_name.empty()) message += " (constraint " + std::string(constraint_name) + ")";
  } else if (primary_message.empty()) {
    message += "the server reported an error";
  } else {
    message += primary_message;
  }
  message += " (SQLSTATE " + std::string(sqlstate.empty() ? "unknown" : sqlstate) + ")";
  return {StatusCodeForSqlState(sqlstate), std::move(message)};
}

}  // namespace gpufed::pg

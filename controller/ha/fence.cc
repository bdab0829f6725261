#include "controller/ha/fence.h"

namespace gpufed::ha {
namespace {

constexpr std::string_view kFencedPrefix = "fenced: ";
constexpr std::string_view kCheckPurpose = "check the fence";
// The function raises SQLSTATE GF001 with a message starting "fenced: " (lease.cc), which
// pg::StatusFromServerError turns into Unavailable with that message kept.
constexpr std::string_view kCheckFenceSql = "SELECT gpufed_check_fence($1, $2, $3)";

}  // namespace

Status CheckFence(pg::Transaction& tx, const FenceToken& token) {
  return CheckFenceInTransaction(tx.connection(), token);
}

Status CheckFenceInTransaction(pg::Connection& connection, const FenceToken& token) {
  auto held = connection.Exec(kCheckPurpose, kCheckFenceSql, {token.lease_name, token.holder, token.epoch});
  return held.ok() ? Status::Ok() : held.status();
}

Status DeferFenceCheck(pg::Transaction& tx, const FenceToken& token) {
  tx.connection().DeferStatement(std::string(kCheckPurpose), std::string(kCheckFenceSql),
                                 {pg::Param(token.lease_name), pg::Param(token.holder), pg::Param(token.epoch)});
  return Status::Ok();
}

bool IsFenced(const Status& status) {
  // Unavailable as the database's refusal arrives (pg/sqlstate.h); FailedPrecondition as
  // this replica's own components said it before (a refusal without the database).
  if (status.code() != StatusCode::kUnavailable && status.code() != StatusCode::kFailedPrecondition) return false;
  const std::string& message = status.message();
  // At the start, or after a caller's context ("...: fenced: ...").
  return message.starts_with(kFencedPrefix) || message.find(": " + std::string(kFencedPrefix)) != std::string::npos;
}

Status RunFenced(pg::Connection& connection, const FenceToken& token, std::string_view purpose,
                 const std::function<Status(pg::Transaction&)>& write) {
  auto tx = pg::Transaction::Begin(connection, purpose);
  if (!tx.ok()) return tx.status();
  GPUFED_RETURN_IF_ERROR(CheckFence(*tx, token));
  GPUFED_RETURN_IF_ERROR(write(*tx));
  return tx->Commit();
}

}  // namespace gpufed::ha

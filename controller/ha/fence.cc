#include "controller/ha/fence.h"

#include "controller/ha/lease.h"

namespace gpufed::ha {
namespace {

constexpr std::string_view kFencedPrefix = "fenced: ";

Status Fenced(const std::string& detail) { return FailedPrecondition(std::string(kFencedPrefix) + detail); }

}  // namespace

Status CheckFence(pg::Transaction& tx, const FenceToken& token) {
  return CheckFenceInTransaction(tx.connection(), token);
}

Status CheckFenceInTransaction(pg::Connection& connection, const FenceToken& token) {
  auto held = connection.Exec("check the fence",
                              "SELECT epoch FROM gpufed_lease"
                              " WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > clock_timestamp()"
                              " FOR SHARE",
                              {token.lease_name, token.holder, token.epoch});
  if (!held.ok()) return held.status();
  if (!held->empty()) return Status::Ok();
  // Refused: say who holds it now (a plain read; the transaction is rolled back anyway).
  const std::string lost = "epoch " + std::to_string(token.epoch) + " is no longer the lease's";
  auto current = ReadLease(connection, token.lease_name);
  if (!current.ok()) return Fenced(lost + " (reading the lease failed: " + current.status().message() + ")");
  if (!current->has_value()) return Fenced(lost + ": lease " + token.lease_name + " does not exist");
  const LeaseRecord& now = **current;
  if (now.holder == token.holder && now.epoch == token.epoch) {
    return Fenced("epoch " + std::to_string(token.epoch) +
                  "'s lease expired by the database's clock and was not renewed");
  }
  return Fenced(lost + ", now held by " + now.holder + " epoch " + std::to_string(now.epoch) +
                (now.expired ? " (expired)" : ""));
}

bool IsFenced(const Status& status) {
  if (status.code() != StatusCode::kFailedPrecondition) return false;
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

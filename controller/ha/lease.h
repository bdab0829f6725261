#pragma once
// The lease row that names the leader (table gpufed_lease: name, holder, epoch, renewed_at,
// expires_at), read and written only by the database's clock (clock_timestamp()): replicas'
// clocks never decide who holds it. Taking a lease that is free or expired increments its
// epoch; renewing keeps it. The epoch is the fencing token (fence.h).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "controller/common/duration.h"
#include "controller/pg/connection.h"
#include "controller/pg/migrations.h"

namespace gpufed::ha {

// The component name of the lease table's migrations in gpufed_schema.
inline constexpr std::string_view kMigrationComponent = "ha";
// The lease table's migrations (append-only: pg/migrations.h).
std::span<const pg::Migration> LeaseMigrations();

// The lease as one statement read it. Times are Unix microseconds by the database's clock.
struct LeaseRecord {
  std::string holder;
  int64_t epoch = 0;
  int64_t renewed_at_unix_micros = 0;
  int64_t expires_at_unix_micros = 0;
  bool expired = false;  // expires_at <= clock_timestamp() when it was read
};

// What an attempt to take or renew the lease found.
struct LeaseAttempt {
  bool held = false;  // this attempt took or renewed it
  LeaseRecord lease;  // the row after the attempt: its holder, when not `held`
};

// One statement that renews the lease when `holder` holds it at `held_epoch` (same epoch,
// new expiry), or takes it when it is free or expired (epoch + 1; `held_epoch` 0 when this
// replica holds none). Returns whether it did and the row after it (when it did not, read
// in a second statement: possibly this holder's own lapsed or older term). Errors as
// pg::Connection::Exec's. A taker's UPDATE waits for every fenced write in flight (their
// FOR SHARE locks on this row, fence.h) before it can change the epoch. Without an epoch
// (a standby) a live lease is refused by a plain read first, so standbys' retries never
// lock the row and never delay the leader's fenced writes; only a renewal and a takeover
// of an expired lease lock it.
Result<LeaseAttempt> TryAcquireOrRenew(pg::Connection& connection, std::string_view lease_name, std::string_view holder,
                                       int64_t held_epoch, Duration lease_duration);

// The lease as it stands (nullopt: never taken).
Result<std::optional<LeaseRecord>> ReadLease(pg::Connection& connection, std::string_view lease_name);

// Ends `holder`'s lease at `epoch` now (a clean shutdown), so a standby takes over at its
// next retry instead of at the lease's expiry. OK when the lease was no longer this holder's.
Status ReleaseLease(pg::Connection& connection, std::string_view lease_name, std::string_view holder, int64_t epoch);

}  // namespace gpufed::ha

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

// The leader's session lock: a session-level advisory lock keyed by the lease's name and
// epoch, which the leader of that epoch takes on its election session right after it takes
// the lease. The server releases it when that session ends, which it does at once when the
// leader's process dies (kill -9, a crash: the socket closes), so a standby need not wait
// for the lease to expire to know the leader is gone. A leader that is alive but paused
// keeps its session and its lock: then only the lease's expiry frees it. True when this
// session holds it (taken now or before).
Result<bool> TakeSessionLock(pg::Connection& connection, std::string_view lease_name, int64_t epoch);

// A standby's fast takeover: when the live lease's epoch `observed.epoch` has no session
// lock (its leader's session ended), takes the lease at once with epoch + 1 (a
// compare-and-set on that epoch, which waits for the old epoch's fenced writes in flight
// as any takeover does) and takes the new epoch's session lock. Otherwise changes nothing
// and returns `held` false with `observed`. Leaders that never take the session lock (an
// older gpufed) look gone to it: mixing versions costs a takeover, never a double leader
// (the old epoch's writes are fenced).
Result<LeaseAttempt> TakeOverFromAnEndedSession(pg::Connection& connection, std::string_view lease_name,
                                                std::string_view holder, const LeaseRecord& observed,
                                                Duration lease_duration);

// Gives up every session lock of this session (a leader that stopped leading).
Status DropSessionLocks(pg::Connection& connection);

// The lease as it stands (nullopt: never taken).
Result<std::optional<LeaseRecord>> ReadLease(pg::Connection& connection, std::string_view lease_name);

// Ends `holder`'s lease at `epoch` now (a clean shutdown), so a standby takes over at its
// next retry instead of at the lease's expiry. OK when the lease was no longer this holder's.
Status ReleaseLease(pg::Connection& connection, std::string_view lease_name, std::string_view holder, int64_t epoch);

}  // namespace gpufed::ha

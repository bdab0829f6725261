#include "controller/ha/lease.h"

namespace gpufed::ha {
namespace {

constexpr pg::Migration kLeaseMigrations[] = {
    {1, "the leader lease",
     "CREATE TABLE gpufed_lease ("
     " name text PRIMARY KEY,"
     " holder text NOT NULL,"
     " epoch bigint NOT NULL CHECK (epoch > 0),"
     " renewed_at timestamptz NOT NULL,"
     " expires_at timestamptz NOT NULL)"},
    {2, "the replicas and the API each serves (replicas.h)",
     "CREATE TABLE gpufed_replicas ("
     " name text PRIMARY KEY,"
     " api_url text NOT NULL,"
     " announced_at timestamptz NOT NULL)"},
    // The fence as one statement that fails when it does not hold (fence.h): so it can be
    // sent with the statement after it, in one round trip, and stop the transaction there.
    // The row lock taken by PERFORM ... FOR SHARE lasts until the transaction ends, as a
    // plain SELECT's does. The refusal names who holds the lease now.
    {3, "the fence as a function that refuses (fence.h)",
     "CREATE FUNCTION gpufed_check_fence(lease_name text, lease_holder text, lease_epoch bigint)"
     " RETURNS void LANGUAGE plpgsql AS $fence$\n"
     "DECLARE now_held record;\n"
     "BEGIN\n"
     "  PERFORM 1 FROM gpufed_lease WHERE name = lease_name AND holder = lease_holder"
     " AND epoch = lease_epoch AND expires_at > clock_timestamp() FOR SHARE;\n"
     "  IF FOUND THEN RETURN; END IF;\n"
     "  SELECT holder, epoch, expires_at <= clock_timestamp() AS expired INTO now_held"
     " FROM gpufed_lease WHERE name = lease_name;\n"
     "  IF NOT FOUND THEN\n"
     "    RAISE EXCEPTION 'fenced: epoch % is no longer the lease''s: lease % does not exist',"
     " lease_epoch, lease_name USING ERRCODE = 'GF001';\n"
     "  ELSIF now_held.holder = lease_holder AND now_held.epoch = lease_epoch THEN\n"
     "    RAISE EXCEPTION 'fenced: epoch %''s lease expired by the database''s clock and was not renewed',"
     " lease_epoch USING ERRCODE = 'GF001';\n"
     "  END IF;\n"
     "  RAISE EXCEPTION USING ERRCODE = 'GF001', MESSAGE = format("
     "'fenced: epoch %s is no longer the lease''s, now held by %s epoch %s%s', lease_epoch, now_held.holder,"
     " now_held.epoch, CASE WHEN now_held.expired THEN ' (expired)' ELSE '' END);\n"
     "END\n"
     "$fence$"},
};

// The columns every lease statement returns, the times as Unix microseconds.
constexpr std::string_view kLeaseColumns =
    "holder, epoch,"
    " (extract(epoch FROM renewed_at) * 1000000)::bigint AS renewed_at_us,"
    " (extract(epoch FROM expires_at) * 1000000)::bigint AS expires_at_us,"
    " expires_at <= clock_timestamp() AS expired";

Result<LeaseRecord> RecordAt(const pg::Rows& rows, size_t row) {
  LeaseRecord record;
  auto holder = rows.Text(row, "holder");
  auto epoch = rows.Int64(row, "epoch");
  auto renewed = rows.Int64(row, "renewed_at_us");
  auto expires = rows.Int64(row, "expires_at_us");
  auto expired = rows.Bool(row, "expired");
  for (const Status* s : {&holder.status(), &epoch.status(), &renewed.status(), &expires.status(), &expired.status()}) {
    if (!s->ok()) return *s;
  }
  record.holder = *holder;
  record.epoch = *epoch;
  record.renewed_at_unix_micros = *renewed;
  record.expires_at_unix_micros = *expires;
  record.expired = *expired;
  return record;
}

}  // namespace

std::span<const pg::Migration> LeaseMigrations() { return kLeaseMigrations; }

Result<LeaseAttempt> TryAcquireOrRenew(pg::Connection& connection, std::string_view lease_name, std::string_view holder,
                                       int64_t held_epoch, Duration lease_duration) {
  if (held_epoch == 0) {
    // A standby first looks without a lock. The upsert below locks the row (FOR NO KEY
    // UPDATE) even when its WHERE then changes nothing, so it would queue behind the
    // leader's fenced writes (their FOR SHARE) and hold up the ones that come after it,
    // every retry period, for nothing: a live lease is refused by a plain read.
    auto current = ReadLease(connection, lease_name);
    if (!current.ok()) return current.status();
    if (current->has_value() && !(*current)->expired) return LeaseAttempt{false, **current};
  }
  // ON CONFLICT DO UPDATE locks the row (FOR NO KEY UPDATE) before its WHERE is judged, so it
  // waits for fenced writes holding FOR SHARE and then judges the committed row, by the
  // database's clock at that moment. Renewal needs the same holder and epoch; taking
  // needs expiry. A lapsed lease its holder renews late still gets a new epoch: writes
  // fenced by the old one must fail, whoever holds it next.
  const std::string sql =
      "INSERT INTO gpufed_lease AS l (name, holder, epoch, renewed_at, expires_at)"
      " VALUES ($1, $2, 1, clock_timestamp(), clock_timestamp() + $3 * interval '1 millisecond')"
      " ON CONFLICT (name) DO UPDATE SET"
      "  holder = EXCLUDED.holder,"
      "  epoch = CASE WHEN l.holder = EXCLUDED.holder AND l.epoch = $4 AND l.expires_at > clock_timestamp()"
      "          THEN l.epoch ELSE l.epoch + 1 END,"
      "  renewed_at = clock_timestamp(),"
      "  expires_at = clock_timestamp() + $3 * interval '1 millisecond'"
      " WHERE l.expires_at <= clock_timestamp() OR (l.holder = EXCLUDED.holder AND l.epoch = $4)"
      " RETURNING " +
      std::string(kLeaseColumns);
  auto taken =
      connection.Exec("take or renew the lease", sql, {lease_name, holder, lease_duration.millis(), held_epoch});
  if (!taken.ok()) return taken.status();
  if (!taken->empty()) {
    auto record = RecordAt(*taken, 0);
    if (!record.ok()) return record.status();
    return LeaseAttempt{true, *record};
  }
  auto current = ReadLease(connection, lease_name);
  if (!current.ok()) return current.status();
  if (!current->has_value()) return Internal("take or renew the lease: the lease row vanished");
  return LeaseAttempt{false, **current};
}

namespace {

// The advisory lock's two keys: the lease's name and its epoch (both int4 in the
// two-key form, which keeps clear of the single-bigint locks pg::Migrate takes).
constexpr std::string_view kSessionLockKeys = "hashtext('gpufed-lease:' || $1), ($2::bigint % 2147483647)::int";

}  // namespace

Result<bool> TakeSessionLock(pg::Connection& connection, std::string_view lease_name, int64_t epoch) {
  auto rows = connection.Exec("take the leader's session lock",
                              "SELECT pg_try_advisory_lock(" + std::string(kSessionLockKeys) + ") AS locked",
                              {lease_name, epoch});
  if (!rows.ok()) return rows.status();
  return rows->Bool(0, "locked");
}

Result<LeaseAttempt> TakeOverFromAnEndedSession(pg::Connection& connection, std::string_view lease_name,
                                                std::string_view holder, const LeaseRecord& observed,
                                                Duration lease_duration) {
  // Free only while no session holds it: the leader of that epoch is gone. Held by this
  // probe now, so no other standby's probe passes at the same time; let go below.
  Result<bool> free = TakeSessionLock(connection, lease_name, observed.epoch);
  if (!free.ok()) return free.status();
  if (!*free) return LeaseAttempt{false, observed};
  const std::string sql =
      "UPDATE gpufed_lease AS l SET holder = $2, epoch = l.epoch + 1, renewed_at = clock_timestamp(),"
      " expires_at = clock_timestamp() + $3 * interval '1 millisecond'"
      " WHERE name = $1 AND epoch = $4 RETURNING " +
      std::string(kLeaseColumns);
  auto taken = connection.Exec("take over from a leader whose session ended", sql,
                               {lease_name, holder, lease_duration.millis(), observed.epoch});
  auto unlocked =
      connection.Exec("let go of the ended session's lock",
                      "SELECT pg_advisory_unlock(" + std::string(kSessionLockKeys) + ")", {lease_name, observed.epoch});
  if (!taken.ok()) return taken.status();
  if (!unlocked.ok()) return unlocked.status();
  if (taken->empty()) {  // another replica's epoch came first
    auto current = ReadLease(connection, lease_name);
    if (!current.ok()) return current.status();
    if (!current->has_value()) return Internal("take over the lease: the lease row vanished");
    return LeaseAttempt{false, **current};
  }
  auto record = RecordAt(*taken, 0);
  if (!record.ok()) return record.status();
  // A probe of the new epoch between the UPDATE and this lock would take it over again:
  // a spurious change of leader, fenced like any other, never two leaders.
  Result<bool> locked = TakeSessionLock(connection, lease_name, record->epoch);
  if (!locked.ok()) return locked.status();
  return LeaseAttempt{true, *record};
}

Status DropSessionLocks(pg::Connection& connection) {
  auto dropped = connection.Exec("let go of the leader's session lock", "SELECT pg_advisory_unlock_all()");
  return dropped.ok() ? Status::Ok() : dropped.status();
}

Result<std::optional<LeaseRecord>> ReadLease(pg::Connection& connection, std::string_view lease_name) {
  auto rows = connection.Exec(
      "read the lease", "SELECT " + std::string(kLeaseColumns) + " FROM gpufed_lease WHERE name = $1", {lease_name});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<LeaseRecord>();
  auto record = RecordAt(*rows, 0);
  if (!record.ok()) return record.status();
  return std::optional<LeaseRecord>(*record);
}

Status ReleaseLease(pg::Connection& connection, std::string_view lease_name, std::string_view holder, int64_t epoch) {
  auto released = connection.Exec(
      "release the lease",
      "UPDATE gpufed_lease SET expires_at = clock_timestamp() WHERE name = $1 AND holder = $2 AND epoch = $3 AND "
      "expires_at > clock_timestamp()",
      {lease_name, holder, epoch});
  return released.ok() ? Status::Ok() : released.status();
}

}  // namespace gpufed::ha

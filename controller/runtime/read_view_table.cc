#include "controller/runtime/read_view_table.h"

namespace gpufed::runtime {
namespace {

// The body's CHECK bounds what a standby reads and parses per request (16 MiB), whatever
// a publisher's own cap (view_publisher.h) says.
constexpr std::string_view kMigrations[] = {
    "CREATE TABLE gpufed_read_views ("
    "  name text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),"
    "  term bigint NOT NULL,"
    "  replica text NOT NULL,"
    "  controller_ms bigint NOT NULL,"
    "  published_at timestamptz NOT NULL,"
    "  body text CHECK (octet_length(body) <= 16777216))",
};

const pg::Migration kReadViewMigrations[] = {
    {1, "gpufed_read_views: each read view a leader publishes for standbys, one row per view", kMigrations[0]},
};

}  // namespace

std::span<const pg::Migration> ReadViewMigrations() { return kReadViewMigrations; }

Status WriteViews(pg::Transaction& tx, int64_t term, std::string_view replica, Duration controller_now,
                  const std::vector<ViewText>& views) {
  for (const ViewText& v : views) {
    Result<pg::Rows> written = tx.Exec(
        "publish a read view",
        "INSERT INTO gpufed_read_views (name, term, replica, controller_ms, published_at, body) "
        "VALUES ($1, $2, $3, $4, clock_timestamp(), $5) "
        "ON CONFLICT (name) DO UPDATE SET term = EXCLUDED.term, replica = EXCLUDED.replica, "
        "controller_ms = EXCLUDED.controller_ms, published_at = EXCLUDED.published_at, body = EXCLUDED.body",
        {v.name, term, std::string(replica), controller_now.millis(), v.text ? pg::Param(*v.text) : pg::Param::Null()});
    if (!written.ok()) return written.status();
  }
  return Status::Ok();
}

Result<server::PublishedView> ReadPublishedView(pg::Connection& connection, std::string_view name) {
  // A database no leader of this version has published to has no table: nothing published.
  Result<int> version = pg::SchemaVersion(connection, kReadViewsComponent);
  if (!version.ok()) return version.status();
  if (*version < 1) return NotFound("no leader has published its read views yet");
  Result<pg::Rows> rows =
      connection.Exec("read a published view",
                      "SELECT term, replica, controller_ms, body IS NULL AS oversized, coalesce(body, 'null') AS body, "
                      "(extract(epoch FROM clock_timestamp() - published_at) * 1000)::bigint AS age_ms "
                      "FROM gpufed_read_views WHERE name = $1",
                      {std::string(name)});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound("the leader has not published its " + std::string(name) + " view yet");
  server::PublishedView view;
  Result<int64_t> term = rows->Int64(0, "term");
  Result<std::string> replica = rows->Text(0, "replica");
  Result<int64_t> controller_ms = rows->Int64(0, "controller_ms");
  Result<bool> oversized = rows->Bool(0, "oversized");
  Result<std::string> body = rows->Text(0, "body");
  Result<int64_t> age_ms = rows->Int64(0, "age_ms");
  for (const Status& s :
       {term.status(), replica.status(), controller_ms.status(), oversized.status(), body.status(), age_ms.status()}) {
    GPUFED_RETURN_IF_ERROR(s);
  }
  view.term = *term;
  view.replica = *replica;
  view.controller_now = Duration::FromMillis(*controller_ms);
  view.oversized = *oversized;
  view.age_seconds = static_cast<double>(std::max<int64_t>(0, *age_ms)) / 1000.0;
  view.body = nlohmann::json::parse(*body, nullptr, false);
  if (view.body.is_discarded()) {
    return Status(StatusCode::kDataLoss, "the published " + std::string(name) + " view is not JSON");
  }
  return view;
}

}  // namespace gpufed::runtime

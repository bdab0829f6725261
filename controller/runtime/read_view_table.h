#pragma once
// The table a leader publishes its read views in and standbys read them from (issue 38):
// gpufed_read_views, one row per view (reconcile/read_views.h names them), replaced in
// place by each publication, never a history (the dashboard's history samples are the
// store's own). Its schema is a component of its own in gpufed_schema ("read_views",
// pg/migrations.h), so neither the store's nor the journal's migrations change for it.
//
// A row holds the view's JSON text (NULL: the view was larger than the publisher's cap,
// and standbys send that route to the leader), the term (lease epoch) and replica that
// published it, the controller time it was taken at and when it was published by the
// database's clock (its age is read on that clock too: no replica's clock is trusted).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/migrations.h"
#include "controller/pg/transaction.h"
#include "controller/server/view_reads.h"

namespace gpufed::runtime {

inline constexpr std::string_view kReadViewsComponent = "read_views";
// The table's migrations (append-only).
std::span<const pg::Migration> ReadViewMigrations();

// One view to publish; `text` nullopt: too large, published as such.
struct ViewText {
  std::string name;
  std::optional<std::string> text;
};

// Upserts `views` in `tx` (which the caller has fenced: ha::CheckFence), all stamped with
// the same term, replica and controller time.
Status WriteViews(pg::Transaction& tx, int64_t term, std::string_view replica, Duration controller_now,
                  const std::vector<ViewText>& views);

// The newest publication of view `name`; NotFound when there is none (or no table yet).
// The body is parsed here: DataLoss when it does not parse.
Result<server::PublishedView> ReadPublishedView(pg::Connection& connection, std::string_view name);

}  // namespace gpufed::runtime

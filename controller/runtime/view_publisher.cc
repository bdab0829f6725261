#include "controller/runtime/view_publisher.h"

#include "controller/pg/migrations.h"
#include "controller/runtime/read_view_table.h"

namespace gpufed::runtime {
namespace {

// The publication runs on the loop's thread: a database that hangs must cost a pass
// seconds, not the pg layer's default 30.
pg::ConnectOptions PublisherSession() {
  pg::ConnectOptions o;
  o.statement_timeout = Duration::FromSeconds(5);
  return o;
}

}  // namespace

Result<std::unique_ptr<ViewPublisher>> ViewPublisher::Open(const pg::ConnectionPolicy& policy, const Clock& pace,
                                                           ViewPublisherOptions options) {
  std::unique_ptr<ViewPublisher> p(new ViewPublisher(policy, pace, std::move(options)));
  Result<std::unique_ptr<pg::Connection>> connection = pg::Connection::Open(policy, PublisherSession());
  if (!connection.ok()) return connection.status();
  GPUFED_RETURN_IF_ERROR(pg::Migrate(**connection, kReadViewsComponent, ReadViewMigrations()));
  p->connection_ = std::move(connection).value();
  return p;
}

Status ViewPublisher::MaybePublish(reconcile::Controller& controller) {
  const Duration now = pace_.Now();
  if (last_ && now < *last_ + options_.interval) return Status::Ok();
  // Paced from the attempt, not its success: a database that is away costs one attempt
  // per interval, not one per pass.
  last_ = now;
  return Publish(controller);
}

Status ViewPublisher::Publish(reconcile::Controller& controller) {
  // A waiting workload's item is at least kMinQueueItemBytes of JSON (its keys, state,
  // time and numbers alone): a queue of more items than fit is too large before it is
  // rendered. At 30,000 waiting, rendering it took a fifth of the loop's thread.
  constexpr size_t kMinQueueItemBytes = 100;
  Result<reconcile::ReadViews> views = controller.Views(options_.max_view_bytes / kMinQueueItemBytes);
  if (!views.ok()) return views.status();
  return PublishViews(*views);
}

Status ViewPublisher::PublishViews(const reconcile::ReadViews& views) {
  std::vector<ViewText> rows;
  for (const auto& [name, body] :
       {std::pair<const char*, const nlohmann::json*>{reconcile::kClustersView, &views.clusters},
        {reconcile::kTenantsView, &views.tenants},
        {reconcile::kQueueView, &views.queue},
        {reconcile::kAuditView, &views.audit}}) {
    std::string text = body->is_null() ? std::string() : body->dump();
    if (body->is_null() || text.size() > options_.max_view_bytes) {
      rows.push_back({name, std::nullopt});
    } else {
      rows.push_back({name, std::move(text)});
    }
  }
  if (connection_ == nullptr || !connection_->Healthy()) {
    connection_.reset();
    Result<std::unique_ptr<pg::Connection>> opened = pg::Connection::Open(policy_, PublisherSession());
    if (!opened.ok()) return opened.status();
    connection_ = std::move(opened).value();
  }
  // BEGIN and the fence (when it defers its check) go with the first write.
  pg::Transaction tx = pg::Transaction::BeginDeferred(*connection_, "publish the read views");
  if (options_.fence) GPUFED_RETURN_IF_ERROR(options_.fence(tx));
  GPUFED_RETURN_IF_ERROR(WriteViews(tx, options_.term, options_.replica, views.now, rows));
  return tx.Commit();
}

}  // namespace gpufed::runtime

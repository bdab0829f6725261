#pragma once
// A leader's publication of its read views for the standbys (issue 38): after a pass, at
// most once per `interval` of the pacing clock, the Controller's unscoped views
// (reconcile/read_views.h) go into gpufed_read_views (read_view_table.h), every row of
// them in one transaction fenced by the term (the fence runs first in it: a deposed
// leader publishes nothing, and its publication fails with the fence's status).
//
// Bounded: a view whose JSON is larger than `max_view_bytes` is published as too large
// (no body), and standbys send that route to the leader instead of answering an old one.
// The publication runs on the loop's thread after the pass, on a session of its own
// (opened again after a failure), outside the Controller's lock except to take the views.
#include <memory>
#include <string>

#include "controller/common/clock.h"
#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"
#include "controller/pg/transaction.h"
#include "controller/reconcile/controller.h"

namespace gpufed::runtime {

struct ViewPublisherOptions {
  // The term: its epoch and replica name are on every row, and `fence` (ha::CheckFence
  // with the term's token) runs first in every publication's transaction.
  int64_t term = 0;
  std::string replica;
  std::function<Status(pg::Transaction&)> fence;
  Duration interval = Duration::FromSeconds(2);
  size_t max_view_bytes = size_t{4} << 20;
};

class ViewPublisher {
 public:
  // Opens a session `policy` connects and migrates the table's component. `pace` (the
  // wall clock in a run, a test's clock in tests) must outlive the publisher.
  static Result<std::unique_ptr<ViewPublisher>> Open(const pg::ConnectionPolicy& policy, const Clock& pace,
                                                     ViewPublisherOptions options);
  // Publishes `controller`'s views when none was published yet or `interval` has passed
  // since the last publication (OK and nothing done otherwise).
  Status MaybePublish(reconcile::Controller& controller);
  // Publishes them now.
  Status Publish(reconcile::Controller& controller);
  // Publishes `views` now (tests give their own).
  Status PublishViews(const reconcile::ReadViews& views);

 private:
  ViewPublisher(pg::ConnectionPolicy policy, const Clock& pace, ViewPublisherOptions options)
      : policy_(std::move(policy)), pace_(pace), options_(std::move(options)) {}

  const pg::ConnectionPolicy policy_;
  const Clock& pace_;
  const ViewPublisherOptions options_;
  std::unique_ptr<pg::Connection> connection_;  // null or unhealthy: opened at the next publication
  std::optional<Duration> last_;                // the pace clock's time of the last publication
};

}  // namespace gpufed::runtime

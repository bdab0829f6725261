#pragma once
// What a standby replica (standby_server.h) reads to answer the leader's in-memory views
// itself: the newest read views the leader published to the database after a pass
// (reconcile/read_views.h names them and scopes them; runtime/view_publisher.h publishes
// them, runtime/standby_reads.h reads them). The runtime implements it; this module only
// serves what it returns.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/status.h"

namespace gpufed::server {

// One view as published.
struct PublishedView {
  // The view's unscoped body; null when the leader found it larger than it publishes (the
  // standby then sends the request to the leader).
  nlohmann::json body;
  bool oversized = false;
  int64_t term = 0;        // the lease epoch of the leader that published it
  std::string replica;     // that leader's replica name
  double age_seconds = 0;  // since it was published, by the database's clock
  Duration controller_now; // the leader's controller time when it was taken
};

// The headers a standby's answer from a published view carries: its age in seconds (by
// the database's clock, with milliseconds) and the term that published it.
inline constexpr char kViewAgeHeader[] = "X-Gpufed-View-Age";
inline constexpr char kViewTermHeader[] = "X-Gpufed-View-Term";

class ViewReads {
 public:
  virtual ~ViewReads() = default;
  // The newest published view of that name. Errors: Unavailable (with the reason) when
  // none was published yet or the database cannot be read now. Called from several
  // connection threads at once.
  virtual Result<PublishedView> ReadView(std::string_view name) = 0;
};

}  // namespace gpufed::server

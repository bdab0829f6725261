// The controller and its AuditSinks while it runs: a sink past its lag limit is journaled
// once (sink-lagging), makes the controller not ready and shows in the metrics; with
// `onLagLimit: pause` nothing is placed until the sink catches up (sink-recovered).
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/live_shipping.h"
#include "controller/audit/testing/receiver_sink.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

constexpr int64_t kPatience = 30'000'000;  // upper bound; waits end on the sink's progress

// The kinds of the journal's records, in order.
std::vector<std::string> Kinds(const std::string& audit_dir) {
  std::vector<std::string> kinds;
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto segments = audit::ListSegments(*env, audit_dir + "/journal");
  EXPECT_TRUE(segments.ok());
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) kinds.push_back(nlohmann::json::parse(line)["kind"]);
  }
  return kinds;
}

TEST(SinkLag, APauseSinkPastItsLimitStopsPlacingUntilItCatchesUp) {
  std::string dir = ::testing::TempDir() + "/gpufed_it_sink_lag";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy(std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart", dir + "/repo",
                        std::filesystem::copy_options::recursive);
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  reconcile::Controller& c = *h.controller;

  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::testing::Receiver receiver;
  receiver.up = false;
  model::AuditSink spec;
  spec.metadata.name = "soc";
  spec.lag_limit_records = 1;
  spec.on_lag_limit = model::LagAction::kPause;
  audit::LiveShippingOptions o;
  o.env = env.get();
  o.audit_dir = dir + "/state/audit";
  o.durable_head = [&c] { return c.audit_head(); };
  o.max_idle_micros = 5'000;
  std::vector<audit::SinkSetup> sinks;
  sinks.push_back({spec, std::make_unique<audit::testing::ReceiverSink>(&receiver)});
  auto live = audit::LiveShipping::StartWith(o, std::move(sinks));
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  c.AttachShipping(live->get());

  // controller-start and policy-activated are already two records behind.
  bool lagging = false;
  for (int i = 0; i < 600 && !lagging; ++i) {
    (void)(*live)->WaitAcknowledged(c.audit_head(), 50'000, nullptr);
    lagging = (*live)->Sinks()[0].lagging;
  }
  ASSERT_TRUE(lagging);
  auto paused = c.Pass();
  ASSERT_TRUE(paused.ok()) << paused.status().ToString();
  EXPECT_EQ(paused->placed, 0);
  EXPECT_FALSE(c.ready());
  EXPECT_EQ(c.LaggingSinks(), (std::vector<std::string>{"soc"}));
  EXPECT_NE(c.Metrics().find("gpufed_audit_sink_lagging{sink=\"soc\"} 1"), std::string::npos);
  std::vector<std::string> notices;  // the quickstart's tenants also report budget alerts
  for (const std::string& n : c.TakeNotices()) {
    if (n.find("audit sink") != std::string::npos) notices.push_back(n);
  }
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("audit sink soc lags"), std::string::npos) << notices[0];

  receiver.SetUp(true);
  ASSERT_TRUE((*live)->WaitAcknowledged(c.audit_head(), kPatience, nullptr).empty());
  auto resumed = c.Pass();
  ASSERT_TRUE(resumed.ok());
  EXPECT_GT(resumed->placed, 0);
  EXPECT_EQ(c.LaggingSinks(), std::vector<std::string>{});
  ASSERT_TRUE(h.Stop("test done").ok());
  EXPECT_TRUE((*live)->WaitAcknowledged(c.audit_head(), kPatience, nullptr).empty());
  c.AttachShipping(nullptr);

  std::vector<std::string> kinds = Kinds(dir + "/state/audit");
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "sink-lagging"), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "sink-recovered"), 1);
  // Nothing was decided while the sink lagged: the first decision follows the recovery.
  auto recovered = std::find(kinds.begin(), kinds.end(), "sink-recovered");
  EXPECT_EQ(std::find(kinds.begin(), recovered, "decision"), recovered);
  EXPECT_NE(std::find(recovered, kinds.end(), "decision"), kinds.end());
  EXPECT_EQ(receiver.Distinct().size(), kinds.size());  // the receiver holds every record
}

}  // namespace
}  // namespace gpufed::testing

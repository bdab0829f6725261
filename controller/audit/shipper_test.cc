#include "controller/audit/shipper.h"

#include <set>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/testing/fault_env.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// A receiver in memory: acknowledges what it got after `ack_delay` Sends, can be down.
class FakeSink : public Sink {
 public:
  bool up = true;
  bool lose_unacked_on_failure = true;
  std::vector<uint64_t> received;
  uint64_t acked = 0;
  int sends_before_failure = -1;  // fail the Nth Send from now

  Status Connect() override { return up ? Status::Ok() : Unavailable("receiver down"); }
  Status Send(std::span<const JournalEntry> batch) override {
    if (!up) return Unavailable("receiver down");
    if (sends_before_failure == 0) {
      up = false;
      return Unavailable("connection reset");
    }
    if (sends_before_failure > 0) --sends_before_failure;
    for (const JournalEntry& e : batch) received.push_back(e.seq);
    pending = batch.back().seq;
    return Status::Ok();
  }
  Result<uint64_t> Acknowledged() override {
    if (!up) return Unavailable("receiver down");
    acked = pending;
    return acked;
  }
  void Disconnect() override {}
  std::string Describe() const override { return "fake"; }
  uint64_t pending = 0;
};

class ShipperTest : public ::testing::Test {
 protected:
  void Write(int n) {
    JournalOptions o;
    o.env = &env_;
    o.dir = dir_.str();
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok());
    for (int i = 0; i < n; ++i) ASSERT_TRUE((*j)->Append({RecordKind::kDecision, {{"i", i}}}).ok());
  }
  ShipperOptions Options() {
    ShipperOptions o;
    o.env = &env_;
    o.audit_dir = dir_.str();
    o.sink_name = "fake";
    o.batch_records = 7;
    o.alert = [this](const std::string& m) { alerts_.push_back(m); };
    return o;
  }
  testing::FaultEnv env_;
  testutil::TempDir dir_;
  std::vector<std::string> alerts_;
};

TEST_F(ShipperTest, ShipsEverythingAndPersistsTheCursor) {
  Write(30);
  auto sink = std::make_unique<FakeSink>();
  FakeSink* fake = sink.get();
  {
    auto s = Shipper::Open(Options(), std::move(sink));
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->DrainTo(30, 60'000'000).ok());
    EXPECT_EQ(fake->received.size(), 30u);  // the shipper owns the sink: check before it goes
  }
  auto cursor = env_.ReadFile(dir_.str() + "/cursors/fake.cursor");
  ASSERT_TRUE(cursor.ok());
  EXPECT_NE(cursor->find("\"seq\":30"), std::string::npos);
}

TEST_F(ShipperTest, ResumesFromTheCursorAfterRestart) {
  Write(10);
  {
    auto s = Shipper::Open(Options(), std::make_unique<FakeSink>());
    ASSERT_TRUE((*s)->DrainTo(10, 60'000'000).ok());
  }
  Write(5);
  auto sink = std::make_unique<FakeSink>();
  FakeSink* fake = sink.get();
  auto s = Shipper::Open(Options(), std::move(sink));
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->DrainTo(15, 60'000'000).ok());
  ASSERT_EQ(fake->received.size(), 5u);
  EXPECT_EQ(fake->received.front(), 11u);
}

TEST_F(ShipperTest, OutageOnlyDelaysAndBacksOffExponentially) {
  Write(20);
  auto sink = std::make_unique<FakeSink>();
  FakeSink* fake = sink.get();
  fake->up = false;
  ShipperOptions o = Options();
  o.backoff_initial_micros = 100'000;
  auto s = Shipper::Open(o, std::move(sink)).value();
  std::vector<int64_t> waits;
  for (int i = 0; i < 4; ++i) {
    int64_t w = s->Step();
    waits.push_back(w);
    env_.Advance(w);
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{100'000, 200'000, 400'000, 800'000}));
  EXPECT_EQ(s->stats().failures, 4u);
  fake->up = true;
  ASSERT_TRUE(s->DrainTo(20, 60'000'000).ok());
  EXPECT_EQ(s->stats().acknowledged, 20u);
}

TEST_F(ShipperTest, ResendsUnacknowledgedRecordsAfterAFailure) {
  Write(30);
  auto sink = std::make_unique<FakeSink>();
  FakeSink* fake = sink.get();
  fake->sends_before_failure = 2;
  auto s = Shipper::Open(Options(), std::move(sink)).value();
  s->Step();
  s->Step();
  s->Step();  // fails: receiver went down
  fake->up = true;
  fake->sends_before_failure = -1;
  ASSERT_TRUE(s->DrainTo(30, 60'000'000).ok());
  std::set<uint64_t> distinct(fake->received.begin(), fake->received.end());
  EXPECT_EQ(distinct.size(), 30u);  // every record, some more than once
}

TEST_F(ShipperTest, LagLimitRaisesAndClearsAnAlert) {
  Write(50);
  auto sink = std::make_unique<FakeSink>();
  FakeSink* fake = sink.get();
  fake->up = false;
  ShipperOptions o = Options();
  o.lag_limit_records = 10;
  o.durable_head = [] { return uint64_t{50}; };
  auto s = Shipper::Open(o, std::move(sink)).value();
  env_.Advance(5'000'000);
  env_.Advance(s->Step());
  ASSERT_EQ(alerts_.size(), 1u);
  EXPECT_NE(alerts_[0].find("ALERT"), std::string::npos);
  EXPECT_TRUE(s->stats().lag_alert);
  EXPECT_EQ(s->stats().lag_records, 50u);
  EXPECT_GT(s->stats().lag_micros, 0);
  fake->up = true;
  ASSERT_TRUE(s->DrainTo(50, 60'000'000).ok());
  s->Step();
  EXPECT_FALSE(s->stats().lag_alert);
  EXPECT_EQ(alerts_.size(), 2u);
}

TEST_F(ShipperTest, CursorFromAnotherJournalIsRefused) {
  Write(3);
  ASSERT_TRUE(env_.CreateDirs(dir_.str() + "/cursors").ok());
  ASSERT_TRUE(WriteFileAtomic(env_, dir_.str() + "/cursors/fake.cursor",
                              R"({"seq":2,"hash":"0000000000000000000000000000000000000000000000000000000000000001"})")
                  .ok());
  auto s = Shipper::Open(Options(), std::make_unique<FakeSink>());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed::audit

#include "controller/audit/live_shipping.h"

#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/testing/memory_journal_storage.h"
#include "controller/audit/testing/receiver_sink.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

using testing::Receiver;
using testing::ReceiverSink;

constexpr int64_t kPatience = 30'000'000;  // an upper bound only: waits end on progress

model::AuditSink Spec(const std::string& name, int64_t lag_limit_records = 0) {
  model::AuditSink s;
  s.metadata.name = name;
  s.lag_limit_records = lag_limit_records;
  s.batch_size = 7;
  return s;
}

class LiveShippingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JournalOptions o;
    o.env = env_.get();
    o.dir = dir_.str();
    journal_ = std::move(AuditJournal::Open(o)).value();
  }
  void Append(int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(journal_->Append({RecordKind::kDecision, {{"i", i}}}).ok());
  }
  std::unique_ptr<LiveShipping> Start(const std::vector<std::pair<model::AuditSink, Receiver*>>& sinks) {
    LiveShippingOptions o;
    o.env = env_.get();
    o.audit_dir = dir_.str();
    o.durable_head = [j = journal_.get()] { return j->last_seq(); };
    o.max_idle_micros = 5'000;
    std::vector<SinkSetup> setups;
    setups.reserve(sinks.size());
    for (const auto& [spec, receiver] : sinks) setups.push_back({spec, std::make_unique<ReceiverSink>(receiver)});
    Result<std::unique_ptr<LiveShipping>> live = LiveShipping::StartWith(o, std::move(setups));
    EXPECT_TRUE(live.ok()) << live.status().ToString();
    return live.ok() ? std::move(live).value() : nullptr;
  }
  std::set<uint64_t> AllUpTo(uint64_t n) {
    std::set<uint64_t> all;
    for (uint64_t i = 1; i <= n; ++i) all.insert(i);
    return all;
  }
  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
  std::unique_ptr<AuditJournal> journal_;
};

TEST_F(LiveShippingTest, EverySinkReceivesEveryRecordAppendedWhileItRuns) {
  Receiver a, b;
  auto live = Start({{Spec("a"), &a}, {Spec("b"), &b}});
  ASSERT_TRUE(live);
  for (int round = 0; round < 20; ++round) {
    Append(5);
    live->Wake();
  }
  EXPECT_TRUE(live->WaitAcknowledged(journal_->last_seq(), kPatience, nullptr).empty());
  EXPECT_EQ(a.Distinct(), AllUpTo(100));
  EXPECT_EQ(b.Distinct(), AllUpTo(100));
  for (const SinkStatus& s : live->Sinks()) EXPECT_EQ(s.stats.acknowledged, 100u) << s.name;
}

// A journal kept elsewhere (here an in-memory table; PostgreSQL in controller/pgjournal)
// is shipped through the readers open_source makes; the cursors stay in audit_dir.
TEST(LiveShipping, ShipsAJournalKeptElsewhereThroughItsRecordSource) {
  testing::MemoryJournalTable table;
  std::unique_ptr<Env> env = NewPosixEnv();
  testutil::TempDir dir;
  JournalOptions jo;
  jo.env = env.get();
  auto journal = AuditJournal::OpenWith(jo, std::make_unique<testing::MemoryJournalStorage>(&table));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  LiveShippingOptions o;
  o.env = env.get();
  o.audit_dir = dir.str();
  o.durable_head = [j = journal->get()] { return j->last_seq(); };
  o.max_idle_micros = 5'000;
  o.open_source = [&]() -> std::unique_ptr<JournalRecordSource> {
    return std::make_unique<testing::MemoryRecordSource>(&table);
  };
  Receiver receiver;
  std::vector<SinkSetup> setups;
  setups.push_back({Spec("soc"), std::make_unique<ReceiverSink>(&receiver)});
  auto live = LiveShipping::StartWith(o, std::move(setups));
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  for (int i = 0; i < 12; ++i) ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"i", i}}}).ok());
  (*live)->Wake();
  EXPECT_TRUE((*live)->WaitAcknowledged(12, kPatience, nullptr).empty());
  EXPECT_EQ(receiver.Distinct().size(), 12u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "journal"));
}

TEST_F(LiveShippingTest, ARestartResumesFromTheDurableCursor) {
  Receiver first;
  {
    auto live = Start({{Spec("soc"), &first}});
    Append(10);
    ASSERT_TRUE(live->WaitAcknowledged(10, kPatience, nullptr).empty());
  }
  Append(5);
  Receiver second;
  auto live = Start({{Spec("soc"), &second}});
  ASSERT_TRUE(live->WaitAcknowledged(15, kPatience, nullptr).empty());
  EXPECT_EQ(second.Distinct(), (std::set<uint64_t>{11, 12, 13, 14, 15}));
}

TEST_F(LiveShippingTest, AnOutagePastTheLagLimitIsReportedOnceAndRecoveredWithoutLoss) {
  Receiver down, healthy;
  down.up = false;
  Append(20);
  auto live = Start({{Spec("down", 5), &down}, {Spec("healthy"), &healthy}});
  std::vector<SinkLagChange> changes;
  for (int i = 0; i < 600 && changes.empty(); ++i) {
    (void)live->WaitAcknowledged(20, 50'000, nullptr);
    changes = live->TakeLagChanges();
  }
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].sink, "down");
  EXPECT_TRUE(changes[0].lagging);
  EXPECT_EQ(changes[0].lag_records, 20u);
  EXPECT_EQ(changes[0].action, "alert");
  EXPECT_FALSE(changes[0].last_error.empty());
  EXPECT_NE(live->Metrics().find("gpufed_audit_sink_lagging{sink=\"down\"} 1"), std::string::npos) << live->Metrics();
  // Still behind after a short wait: named, and nothing dropped meanwhile.
  EXPECT_EQ(live->WaitAcknowledged(20, 10'000, nullptr), (std::vector<std::string>{"down"}));

  down.SetUp(true);
  EXPECT_TRUE(live->WaitAcknowledged(20, kPatience, nullptr).empty());
  EXPECT_EQ(down.Distinct(), AllUpTo(20));
  // The step that saw the acknowledgement also queued the recovery.
  changes = live->TakeLagChanges();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].sink, "down");
  EXPECT_FALSE(changes[0].lagging);
  EXPECT_NE(live->Metrics().find("gpufed_audit_sink_lag_records{sink=\"down\"} 0"), std::string::npos);
}

TEST_F(LiveShippingTest, AbortEndsTheWaitAndNamesTheSinksBehind) {
  Receiver down;
  down.up = false;
  auto live = Start({{Spec("down"), &down}});
  Append(3);
  EXPECT_EQ(live->WaitAcknowledged(3, kPatience, [] { return true; }), (std::vector<std::string>{"down"}));
}

TEST_F(LiveShippingTest, KnowsWhichSpecsItShips) {
  Receiver r;
  auto live = Start({{Spec("a"), &r}});
  EXPECT_TRUE(live->Ships({Spec("a")}));
  EXPECT_FALSE(live->Ships({}));
  EXPECT_FALSE(live->Ships({Spec("a", 10)}));
  EXPECT_FALSE(live->Ships({Spec("a"), Spec("b")}));
}

TEST_F(LiveShippingTest, ACursorOfAnotherJournalRefusesTheWholeStart) {
  Append(3);
  ASSERT_TRUE(env_->CreateDirs(dir_.str() + "/cursors").ok());
  ASSERT_TRUE(WriteFileAtomic(*env_, dir_.str() + "/cursors/b.cursor",
                              R"({"seq":2,"hash":"0000000000000000000000000000000000000000000000000000000000000001"})")
                  .ok());
  Receiver a, b;
  LiveShippingOptions o;
  o.env = env_.get();
  o.audit_dir = dir_.str();
  o.durable_head = [] { return uint64_t{3}; };
  std::vector<SinkSetup> setups;
  setups.push_back({Spec("a"), std::make_unique<ReceiverSink>(&a)});
  setups.push_back({Spec("b"), std::make_unique<ReceiverSink>(&b)});
  Result<std::unique_ptr<LiveShipping>> live = LiveShipping::StartWith(o, std::move(setups));
  ASSERT_FALSE(live.ok());
  EXPECT_NE(live.status().message().find("AuditSink b"), std::string::npos);
  EXPECT_TRUE(a.Distinct().empty());  // no thread started
}

}  // namespace
}  // namespace gpufed::audit

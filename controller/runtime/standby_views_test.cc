// A standby's answers from the leader's published read views (issue 38), end to end on a
// real PostgreSQL 15 (the pg_cluster fixture, a database per test) and real HTTP on
// 127.0.0.1: a leader's App on the shared store (the quickstart federation, simulated, on
// a test clock) publishes its views through a ViewPublisher fenced by a real lease
// (controller/ha); a StandbyServer reads them through StandbyReads. Every answer must be
// what the leader's Controller answers the same caller, and a tenant must see nothing of
// another tenant's through any of the new paths.
#include <httplib.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/runtime/shared_leader_test_fixture.h"
#include "controller/runtime/standby_reads.h"
#include "controller/runtime/view_publisher.h"
#include "controller/server/standby_server.h"

namespace gpufed::runtime {
namespace {

using server::Caller;

constexpr char kAdmin[] = "admin-token-0123456789";
constexpr char kNlp[] = "nlp-token-01234567890123";
constexpr char kVision[] = "vision-token-0123456789";
constexpr char kMetrics[] = "metrics-token-01234567";
constexpr char kLeaderUrl[] = "http://127.0.0.1:1";  // never contacted: only named in 307s
constexpr char kLease[] = "standby-views-test";
const std::string kRepo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";

// The leader's App and a setup session come from the shared leader's fixture.
class StandbyViewsTest : public SharedLeaderTest {
 protected:
  void SetUp() override {
    SharedLeaderTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    token_ = Take("leader-a");
  }
  void TearDown() override {
    api_.reset();
    reads_.reset();
    publisher_.reset();
    SharedLeaderTest::TearDown();
  }

  ha::FenceToken Take(const std::string& holder) { return SharedLeaderTest::Take(kLease, holder); }

  // The leader through its first hour.
  void StartLeader() {
    ASSERT_NO_FATAL_FAILURE(SharedLeaderTest::StartLeader(token_, kRepo, Duration::FromSeconds(3600)));
    // The history samples the loop took commit with its next write: written now, so the
    // database holds what the leader's memory does.
    ASSERT_TRUE(app_->controller().store()->Flush().ok());
  }
  // Publishes the leader's views now, as the App does after a pass.
  Status Publish(const ha::FenceToken& token, size_t max_view_bytes = size_t{4} << 20) {
    if (publisher_ == nullptr || publisher_term_ != token.epoch) {
      Result<std::unique_ptr<ViewPublisher>> opened = ViewPublisher::Open(
          SocketPolicy(), pace_,
          {.term = token.epoch, .replica = token.holder, .fence = FenceOf(token), .max_view_bytes = max_view_bytes});
      if (!opened.ok()) return opened.status();
      publisher_ = std::move(opened).value();
      publisher_term_ = token.epoch;
    }
    return publisher_->Publish(app_->controller());
  }
  void StartStandby() {
    reads_ = StandbyReads::OnPostgres(SocketPolicy(), wall_);
    server::StandbyOptions o;
    o.tokens = server::TokenTable{{kAdmin, Caller::Admin("ops")},
                                  {kNlp, Caller::OfTenant("team-nlp", "nlp-ci")},
                                  {kVision, Caller::OfTenant("team-vision", "vision-ci")},
                                  {kMetrics, Caller::Metrics("prom")}};
    o.status = [] { return nlohmann::json{{"role", "standby"}}; };
    o.leader_url = [] { return std::optional<std::string>(kLeaderUrl); };
    o.metrics = [] { return std::string(); };
    o.reads = reads_.get();
    o.views = reads_.get();
    Result<std::unique_ptr<server::StandbyServer>> started = server::StandbyServer::Start(std::move(o));
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    api_ = std::move(started).value();
  }
  httplib::Result Get(const std::string& path, const std::string& token) {
    httplib::Client client("127.0.0.1", api_->port());
    client.set_read_timeout(20, 0);
    return client.Get(path, {{"Authorization", std::string("Bearer ") + token}});
  }
  static nlohmann::json Body(const httplib::Result& res) { return nlohmann::json::parse(res->body, nullptr, false); }
  // What the leader answers `tenant` ("" : an admin) on `path`: its Controller's method
  // for that route, as server.cc and dashboard_routes.cc call it. Null for an error.
  nlohmann::json LeaderAnswer(const std::string& path, const std::string& tenant) {
    reconcile::Controller& c = app_->controller();
    auto value = [](Result<nlohmann::json> r) { return r.ok() ? *r : nlohmann::json(nullptr); };
    if (path == "/v1/clusters") return {{"items", c.Clusters()}};
    if (path == "/v1/tenants") return value(c.Tenants(tenant));
    if (path.starts_with("/v1/tenants/"))
      return value(c.Tenant(path.substr(std::string("/v1/tenants/").size()), tenant));
    if (path == "/v1/queue") return value(c.Queue(tenant));
    if (path == "/v1/audit") return c.AuditStatus();
    if (path == "/v1/history") return c.HistoryJson(tenant);
    if (path == "/v1/history?since=1800") return c.HistoryJson(tenant, Duration::FromSeconds(1800));
    ADD_FAILURE() << "no leader answer for " << path;
    return nullptr;
  }

  ManualClock pace_;   // the publisher's pacing
  SystemClock wall_;   // the standby's retry pacing
  ha::FenceToken token_;
  std::unique_ptr<ViewPublisher> publisher_;
  int64_t publisher_term_ = 0;
  std::unique_ptr<StandbyReads> reads_;
  std::unique_ptr<server::StandbyServer> api_;
};

const std::vector<std::string> kViewPaths = {
    "/v1/clusters", "/v1/tenants", "/v1/tenants/team-nlp", "/v1/tenants/team-vision",
    "/v1/queue",    "/v1/audit",   "/v1/history",          "/v1/history?since=1800"};

TEST_F(StandbyViewsTest, AnswersEveryViewWithTheLeadersJsonForEveryCaller) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  ASSERT_TRUE(Publish(token_).ok());
  StartStandby();
  // The leader's own views hold something worth comparing: both tenants' work waits.
  const nlohmann::json queue = LeaderAnswer("/v1/queue", "");
  int nlp = 0, vision = 0;
  for (const nlohmann::json& item : queue["items"]) {
    nlp += item["tenant"] == "team-nlp";
    vision += item["tenant"] == "team-vision";
  }
  EXPECT_GT(nlp, 0) << queue.dump();
  EXPECT_GT(vision, 0) << queue.dump();
  EXPECT_FALSE(LeaderAnswer("/v1/history", "")["samples"].empty());
  for (const auto& [token, tenant] :
       std::vector<std::pair<std::string, std::string>>{{kAdmin, ""}, {kNlp, "team-nlp"}, {kVision, "team-vision"}}) {
    for (const std::string& path : kViewPaths) {
      const nlohmann::json leader = LeaderAnswer(path, tenant);
      if (leader.is_null()) continue;  // another tenant's: TenantIsolation checks those
      httplib::Result res = Get(path, token);
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 200) << path << " as " << tenant << ": " << res->body;
      EXPECT_EQ(res->get_header_value(server::kServedByHeader), "standby") << path;
      EXPECT_EQ(res->get_header_value(server::kViewTermHeader), std::to_string(token_.epoch)) << path;
      EXPECT_TRUE(res->has_header(server::kViewAgeHeader)) << path;
      EXPECT_EQ(Body(res), leader) << path << " as " << (tenant.empty() ? "admin" : tenant);
    }
  }
}

TEST_F(StandbyViewsTest, ATenantSeesNothingOfAnotherTenantsThroughAnyView) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  ASSERT_TRUE(Publish(token_).ok());
  StartStandby();
  // team-vision asks for team-nlp: 404 exactly as the leader says it.
  Result<nlohmann::json> leader = app_->controller().Tenant("team-nlp", "team-vision");
  ASSERT_EQ(leader.status().code(), StatusCode::kNotFound);
  httplib::Result other = Get("/v1/tenants/team-nlp", kVision);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404) << other->body;
  EXPECT_EQ(Body(other)["error"]["message"], leader.status().message());
  // An undeclared tenant: 404 for an admin too, as from the leader.
  EXPECT_EQ(app_->controller().Tenant("nobody", "").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Get("/v1/tenants/nobody", kAdmin)->status, 404);
  // Lists, the queue and the history hold the caller's tenant only.
  for (const std::string path : {"/v1/tenants", "/v1/queue", "/v1/history", "/v1/tenants/team-vision"}) {
    httplib::Result res = Get(path, kVision);
    ASSERT_TRUE(res) << path;
    ASSERT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->body.find("team-nlp"), std::string::npos) << path << ": " << res->body;
  }
  const nlohmann::json queue = Body(Get("/v1/queue", kVision));
  ASSERT_FALSE(queue["items"].empty());
  int position = 0;
  for (const nlohmann::json& item : queue["items"]) {
    EXPECT_EQ(item["tenant"], "team-vision");
    EXPECT_EQ(item["position"], ++position);  // numbered among its own, leaking no one's count
  }
  // No token, an unknown one: 401; a metrics token: 403, on every view.
  httplib::Client anonymous("127.0.0.1", api_->port());
  for (const std::string& path : kViewPaths) {
    httplib::Result none = anonymous.Get(path);
    ASSERT_TRUE(none) << path;
    EXPECT_EQ(none->status, 401) << path;
    EXPECT_EQ(Get(path, "not-a-token-at-all-000")->status, 401) << path;
    EXPECT_EQ(Get(path, kMetrics)->status, 403) << path;
  }
  EXPECT_EQ(Get("/v1/history?since=-1", kVision)->status, 400);  // the leader's own check
}

TEST_F(StandbyViewsTest, ADeposedLeadersPublicationIsRefusedByTheFence) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  ASSERT_TRUE(Publish(token_).ok());
  // Another replica takes the lease: leader-a's next publication writes nothing.
  ASSERT_TRUE(ha::ReleaseLease(*setup_, kLease, token_.holder, token_.epoch).ok());
  const ha::FenceToken b = Take("leader-b");
  ASSERT_GT(b.epoch, token_.epoch);
  Status stale = Publish(token_);
  EXPECT_TRUE(ha::IsFenced(stale)) << stale.ToString();
  StartStandby();
  httplib::Result res = Get("/v1/clusters", kAdmin);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value(server::kViewTermHeader), std::to_string(token_.epoch));
  // The new term publishes, and the standby answers from its view.
  ASSERT_TRUE(Publish(b).ok());
  res = Get("/v1/clusters", kAdmin);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value(server::kViewTermHeader), std::to_string(b.epoch));
  Result<pg::Rows> rows = setup_->Exec("count the views", "SELECT count(*) AS n FROM gpufed_read_views");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->Int64(0, "n").value(), 4);  // one row per view, replaced in place
}

TEST_F(StandbyViewsTest, NoPublishedViewIsA503WithTheReason) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());  // the store exists; nothing published by the test
  ASSERT_TRUE(setup_->Exec("forget the App's views", "DELETE FROM gpufed_read_views").ok());
  StartStandby();
  for (const std::string& path : kViewPaths) {
    httplib::Result res = Get(path, kAdmin);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 503) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Retry-After"), "2") << path;
    EXPECT_NE(res->body.find("not published"), std::string::npos) << path << ": " << res->body;
  }
  // Without the table at all (a database no leader of this version led): the same.
  ASSERT_TRUE(setup_
                  ->ExecScript("drop the table",
                               "DROP TABLE gpufed_read_views; DELETE FROM gpufed_schema WHERE "
                               "component = 'read_views'")
                  .ok());
  httplib::Result res = Get("/v1/queue", kAdmin);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  EXPECT_NE(res->body.find("published"), std::string::npos) << res->body;
}

TEST_F(StandbyViewsTest, SaysHowOldTheViewIsByTheDatabasesClock) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  ASSERT_TRUE(Publish(token_).ok());
  StartStandby();
  // Published 42 s ago, as the database's clock says (no replica's clock is read).
  ASSERT_TRUE(
      setup_->Exec("age the views", "UPDATE gpufed_read_views SET published_at = published_at - interval '42 seconds'")
          .ok());
  httplib::Result res = Get("/v1/queue", kNlp);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const double age = std::stod(res->get_header_value(server::kViewAgeHeader));
  EXPECT_GE(age, 42.0);
  EXPECT_LT(age, 42.0 + 60);  // the test's own run time, at most
}

TEST_F(StandbyViewsTest, AViewTooLargeToPublishIsSentToTheLeader) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  ASSERT_TRUE(Publish(token_, 16).ok());  // every view is larger than 16 bytes
  StartStandby();
  for (const std::string path : {"/v1/queue", "/v1/tenants"}) {
    httplib::Result res = Get(path, kNlp);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 307) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Location"), kLeaderUrl + path);
    EXPECT_FALSE(res->has_header(server::kServedByHeader));
  }
}

// A queue of more waiting workloads than a publication can hold (one item is at least 100
// bytes) is not rendered at all: published as too large, and sent to the leader.
TEST_F(StandbyViewsTest, AQueueLongerThanAPublicationHoldsIsNotRenderedAndSentToTheLeader) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  Result<reconcile::ReadViews> all = app_->controller().Views();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const size_t waiting = all->queue["items"].size();
  ASSERT_GE(waiting, 2u) << "the quickstart's first hour queues work";
  Result<reconcile::ReadViews> fewer = app_->controller().Views(waiting - 1);
  ASSERT_TRUE(fewer.ok());
  EXPECT_TRUE(fewer->queue.is_null());
  EXPECT_FALSE(fewer->tenants.is_null());
  Result<reconcile::ReadViews> enough = app_->controller().Views(waiting);
  ASSERT_TRUE(enough.ok());
  EXPECT_EQ(enough->queue, all->queue);
  ASSERT_TRUE(Publish(token_, (waiting - 1) * 100).ok());
  StartStandby();
  httplib::Result queue = Get("/v1/queue", kNlp);
  ASSERT_TRUE(queue);
  EXPECT_EQ(queue->status, 307) << queue->body;
  EXPECT_EQ(queue->get_header_value("Location"), std::string(kLeaderUrl) + "/v1/queue");
}

TEST_F(StandbyViewsTest, TheLeadersAppPublishesAfterItsFirstPass) {
  ASSERT_NO_FATAL_FAILURE(StartLeader());
  Result<pg::Rows> rows =
      setup_->Exec("read the views", "SELECT name, term, replica FROM gpufed_read_views ORDER BY name");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 4u);
  for (size_t i = 0; i < rows->size(); ++i) {
    EXPECT_EQ(rows->Int64(i, "term").value(), token_.epoch);
    EXPECT_EQ(rows->Text(i, "replica").value(), "leader-a");
  }
  EXPECT_EQ(rows->Text(0, "name").value(), "audit");
}

}  // namespace
}  // namespace gpufed::runtime

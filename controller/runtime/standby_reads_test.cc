// A standby replica's reads (issue 38) over real HTTP on 127.0.0.1 and a real PostgreSQL
// 15 (the pg_cluster fixture, a database per test): StandbyReads' read-only session under
// a StandbyServer, against rows a writable Store (the leader's role) committed. The
// answers must be the leader's (the same JSON functions on the same rows), scoped by
// tenant as the leader scopes them, and everything else still goes to the leader.
#include <httplib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <functional>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/reconcile/scoped_reads.h"
#include "controller/runtime/standby_reads.h"
#include "controller/server/standby_server.h"
#include "controller/server/workload_api.h"
#include "controller/store/store.h"

namespace gpufed::runtime {
namespace {

using server::Caller;

constexpr char kAdmin[] = "admin-token-0123456789";
constexpr char kAlpha[] = "alpha-token-0123456789";
constexpr char kBeta[] = "beta-token-01234567890";
constexpr char kMetrics[] = "metrics-token-01234567";
constexpr char kLeader[] = "http://127.0.0.1:1";  // never contacted: only named in 307s

class StandbyReadsTest : public pg::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    // The leader's store: migrates the database and writes what the standby reads.
    Result<std::unique_ptr<pgstore::PgConnection>> c = pgstore::PgConnection::Adopt(Connect(), false);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<std::unique_ptr<store::Store>> s = store::Store::OpenOn(std::move(c).value());
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    leader_ = std::move(s).value();
    Submit("train", "alpha");
    Submit("shared", "alpha");
    Submit("shared", "beta");
    Submit("eval", "beta");
    ASSERT_TRUE(
        leader_
            ->RecordDecision({0, Duration::FromMillis(1'700'000'000'000), "train", 1, "rev1", "queued", "",
                              "no capacity", R"({"outcome":"queued","reason":"no capacity"})", "alpha", "train-u1"})
            .ok());
    ASSERT_TRUE(
        leader_
            ->RecordDecision({0, Duration::FromMillis(1'700'000'001'000), "eval", 1, "rev1", "queued", "",
                              "beta's secret reason", R"({"outcome":"queued","reason":"beta's"})", "beta", "eval-u1"})
            .ok());
  }
  void TearDown() override {
    api_.reset();
    reads_.reset();
    leader_.reset();
    PgTest::TearDown();
  }

  void Submit(const std::string& name, const std::string& tenant) {
    store::WorkloadRecord r;
    r.name = name;
    r.tenant = tenant;
    r.source = "api";
    r.spec_text = "kind: Workload";
    const Duration at = Duration::FromMillis(1'700'000'000'000);
    r.submitted = at;
    Result<store::WorkloadRecord> stored = leader_->SubmitNumbered(std::move(r), at);
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  }

  // A standby's listener whose reads go through `reads`.
  void StartStandby(std::unique_ptr<StandbyReads> reads,
                    const std::function<void(server::StandbyOptions&)>& adjust = nullptr) {
    reads_ = std::move(reads);
    server::StandbyOptions o;
    o.tokens = server::TokenTable{{kAdmin, Caller::Admin("ops")},
                                  {kAlpha, Caller::OfTenant("alpha", "alpha-ci")},
                                  {kBeta, Caller::OfTenant("beta", "beta-ci")},
                                  {kMetrics, Caller::Metrics("prom")}};
    o.status = [] { return nlohmann::json{{"role", "standby"}}; };
    o.leader_url = [] { return std::optional<std::string>(kLeader); };
    o.metrics = [] { return std::string(); };
    o.reads = reads_.get();
    if (adjust) adjust(o);
    Result<std::unique_ptr<server::StandbyServer>> started = server::StandbyServer::Start(std::move(o));
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    api_ = std::move(started).value();
  }
  void StartStandby(const StandbyReadsOptions& options = {}) {
    StartStandby(StandbyReads::OnPostgres(SocketPolicy(), clock_, options));
  }

  httplib::Result Get(const std::string& path, const std::string& token) {
    httplib::Client client("127.0.0.1", api_->port());
    client.set_read_timeout(20, 0);
    return client.Get(path, {{"Authorization", std::string("Bearer ") + token}});
  }
  nlohmann::json Body(const httplib::Result& res) { return nlohmann::json::parse(res->body, nullptr, false); }
  // The leader's answer for a workload: the same function on the row the leader reads.
  nlohmann::json LeaderJson(const std::string& tenant, const std::string& name) {
    Result<std::optional<store::WorkloadRecord>> r = leader_->Get(tenant, name);
    EXPECT_TRUE(r.ok() && r->has_value());
    return r.ok() && r->has_value() ? server::WorkloadJson(**r) : nlohmann::json();
  }

  SystemClock clock_;
  std::unique_ptr<store::Store> leader_;
  std::unique_ptr<StandbyReads> reads_;
  std::unique_ptr<server::StandbyServer> api_;
};

TEST_F(StandbyReadsTest, AnswersWorkloadReadsWithTheLeadersJsonAndSaysItIsAStandby) {
  StartStandby();
  for (const std::string path : {"/v1/tenants/alpha/workloads/train", "/v1/workloads/train"}) {
    httplib::Result res = Get(path, kAlpha);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value(server::kServedByHeader), "standby");
    EXPECT_EQ(Body(res), LeaderJson("alpha", "train")) << path;
  }
  httplib::Result list = Get("/v1/workloads", kAlpha);
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200);
  EXPECT_EQ(Body(list), (nlohmann::json{{"items", {LeaderJson("alpha", "train"), LeaderJson("alpha", "shared")}}}));
  EXPECT_EQ(Body(Get("/v1/tenants/alpha/workloads", kAlpha)), Body(list));
  // An admin sees every tenant's, names one by its path, and a bare name two tenants have
  // is refused as the leader refuses it.
  httplib::Result all = Get("/v1/workloads", kAdmin);
  ASSERT_TRUE(all);
  EXPECT_EQ(Body(all)["items"].size(), 4u);
  EXPECT_EQ(Body(Get("/v1/tenants/beta/workloads/shared", kAdmin)), LeaderJson("beta", "shared"));
  httplib::Result ambiguous = Get("/v1/workloads/shared", kAdmin);
  ASSERT_TRUE(ambiguous);
  EXPECT_EQ(ambiguous->status, 400) << ambiguous->body;
  // Decisions: the leader's page (newest first, each with seq and time).
  Result<std::vector<store::DecisionRow>> rows = leader_->Decisions("alpha", "train", 200);
  ASSERT_TRUE(rows.ok());
  httplib::Result decisions = Get("/v1/tenants/alpha/workloads/train/decisions", kAlpha);
  ASSERT_TRUE(decisions);
  ASSERT_EQ(decisions->status, 200) << decisions->body;
  EXPECT_EQ(Body(decisions), server::DecisionsJson(*rows));
  EXPECT_EQ(Body(decisions)["items"].size(), 1u);
  EXPECT_EQ(Body(Get("/v1/decisions?workload=train", kAlpha)), Body(decisions));
  EXPECT_EQ(Body(Get("/v1/decisions", kAdmin))["items"].size(), 2u);
}

TEST_F(StandbyReadsTest, ATenantCannotReadAnotherTenantsWorkloadThroughAStandby) {
  StartStandby();
  // beta asks for alpha's workload by every path: absent, never alpha's data.
  for (const std::string path :
       {"/v1/tenants/alpha/workloads/train", "/v1/workloads/train", "/v1/tenants/alpha/workloads",
        "/v1/tenants/alpha/workloads/train/decisions", "/v1/decisions?workload=train"}) {
    httplib::Result res = Get(path, kBeta);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path << ": " << res->body;
    EXPECT_EQ(res->body.find("train-u1"), std::string::npos) << path;
    EXPECT_EQ(res->body.find("no capacity"), std::string::npos) << path;
  }
  // A name both tenants have is the caller's own.
  EXPECT_EQ(Body(Get("/v1/workloads/shared", kBeta)), LeaderJson("beta", "shared"));
  EXPECT_EQ(Body(Get("/v1/workloads/shared", kAlpha)), LeaderJson("alpha", "shared"));
  // Lists and decisions hold the caller's only.
  httplib::Result list = Get("/v1/workloads", kBeta);
  ASSERT_TRUE(list);
  // Held in a variable: a range-for over a member of a temporary would read freed memory.
  const nlohmann::json listed = Body(list);
  for (const nlohmann::json& item : listed["items"]) EXPECT_EQ(item["tenant"], "beta");
  EXPECT_EQ(listed["items"].size(), 2u);
  httplib::Result decisions = Get("/v1/decisions", kAlpha);
  ASSERT_TRUE(decisions);
  ASSERT_EQ(Body(decisions)["items"].size(), 1u);
  EXPECT_EQ(decisions->body.find("beta"), std::string::npos) << decisions->body;
  // No token, an unknown one, a metrics token: nothing.
  httplib::Client client("127.0.0.1", api_->port());
  httplib::Result anonymous = client.Get("/v1/workloads/train");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(Get("/v1/workloads/train", "not-a-token-at-all-000")->status, 401);
  EXPECT_EQ(Get("/v1/tenants/alpha/workloads/train", kMetrics)->status, 403);
}

TEST_F(StandbyReadsTest, EverythingElseStillGoesToTheLeader) {
  StartStandby();
  httplib::Client client("127.0.0.1", api_->port());
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kAlpha}};
  httplib::Result post = client.Post("/v1/workloads", auth, "kind: Workload", "application/yaml");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 307);
  EXPECT_EQ(post->get_header_value("Location"), std::string(kLeader) + "/v1/workloads");
  httplib::Result cancel = client.Delete("/v1/tenants/alpha/workloads/train", auth);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->status, 307);
  // The leader's views, without `views` to read them from (standby_views_test.cc has them),
  // and the journal's tiles.
  for (const std::string path : {"/v1/clusters", "/v1/queue", "/v1/tenants/alpha", "/v1/tenants", "/v1/history",
                                 "/v1/audit", "/v1/audit/log/checkpoint"}) {
    httplib::Result res = Get(path, kAlpha);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 307) << path;
    EXPECT_EQ(res->get_header_value("Location"), kLeader + path);
  }
}

TEST_F(StandbyReadsTest, ExplainsAWorkloadWithTheLeadersJsonAndOnlyToItsTenant) {
  StartStandby();
  // The leader's Controller::Explain is this function on its own store.
  Result<nlohmann::json> leader = reconcile::ScopedExplanation(*leader_, {"alpha", "train"}, "alpha");
  ASSERT_TRUE(leader.ok()) << leader.status().ToString();
  EXPECT_EQ((*leader)["why"][0], "pending: no capacity");
  for (const std::string path : {"/v1/explain/train", "/v1/tenants/alpha/workloads/train/explain"}) {
    httplib::Result res = Get(path, kAlpha);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value(server::kServedByHeader), "standby");
    EXPECT_EQ(Body(res), *leader) << path;
  }
  EXPECT_EQ(Body(Get("/v1/tenants/alpha/workloads/train/explain", kAdmin)), *leader);
  // beta: alpha's workload is absent by both paths; a metrics token reads nothing.
  for (const std::string path : {"/v1/explain/train", "/v1/tenants/alpha/workloads/train/explain"}) {
    httplib::Result res = Get(path, kBeta);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path << ": " << res->body;
    EXPECT_EQ(res->body.find("no capacity"), std::string::npos) << path;
  }
  EXPECT_EQ(Get("/v1/explain/train", kMetrics)->status, 403);
  EXPECT_EQ(Get("/v1/explain/shared", kAdmin)->status, 400);  // two tenants have it, as the leader says
}

TEST_F(StandbyReadsTest, ServesTheDashboardsPageWithoutAToken) {
  StartStandby();
  httplib::Client client("127.0.0.1", api_->port());
  httplib::Result page = client.Get("/ui/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("<html"), std::string::npos);
  EXPECT_NE(page->get_header_value("Content-Security-Policy").find("default-src 'self'"), std::string::npos);
  httplib::Result script = client.Get("/ui/app.js");
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  httplib::Result root = client.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 302);
  EXPECT_EQ(root->get_header_value("Location"), "/ui/");
  // An asset the binary does not hold is not served (and, like any other path, needs the leader).
  httplib::Result unknown = client.Get("/ui/secret.txt");
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->status, 200);
}

// The leader's per-tenant limits come from the policy, which a standby does not load: it
// holds each tenant to a rate of its own, so one tenant cannot keep the read session from
// the others; admins are not limited, as on the leader.
TEST_F(StandbyReadsTest, ATenantOverItsReadRateIsRefused429AndNoOtherTenantWaits) {
  ManualClock limits_clock(Duration::FromSeconds(100));
  StartStandby(StandbyReads::OnPostgres(SocketPolicy(), clock_), [&](server::StandbyOptions& o) {
    o.tenant_reads_per_second = 1;
    o.tenant_reads_burst = 2;
    o.clock = &limits_clock;
  });
  EXPECT_EQ(Get("/v1/workloads/train", kAlpha)->status, 200);
  EXPECT_EQ(Get("/v1/workloads", kAlpha)->status, 200);
  httplib::Result over = Get("/v1/workloads/train", kAlpha);
  ASSERT_TRUE(over);
  EXPECT_EQ(over->status, 429) << over->body;
  EXPECT_EQ(over->get_header_value("Retry-After"), "1");
  EXPECT_NE(over->body.find("over its read rate"), std::string::npos) << over->body;
  EXPECT_EQ(over->body.find("train-u"), std::string::npos) << over->body;  // nothing of the workload
  EXPECT_EQ(Get("/v1/workloads/shared", kBeta)->status, 200);  // another tenant's own bucket
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Get("/v1/workloads", kAdmin)->status, 200) << i;
  limits_clock.Advance(Duration::FromSeconds(1));
  EXPECT_EQ(Get("/v1/workloads/train", kAlpha)->status, 200);
}

TEST_F(StandbyReadsTest, TheReadSessionNeverWrites) {
  // The store a standby reads through is opened read-only: every write is refused before
  // it reaches the server (and the session is default_transaction_read_only behind that,
  // pgstore_test's PgStore.AReadOnlyStoreReadsAndRefusesEveryWrite), and nothing is migrated or changed.
  Result<StandbyReads::Session> session = StandbyReads::PostgresOpener(SocketPolicy(), Duration::FromSeconds(5))();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  std::unique_ptr<store::Store>* standby = &session->store;
  EXPECT_TRUE((*standby)->read_only());
  store::WorkloadRecord r;
  r.name = "by-standby";
  r.tenant = "alpha";
  r.source = "api";
  EXPECT_FALSE((*standby)->SubmitNumbered(r, Duration::FromMillis(1)).ok());
  EXPECT_FALSE((*standby)->RequestCancel("train-u1").ok());
  Result<std::vector<store::WorkloadRecord>> rows = leader_->List();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), 4u);
  Result<std::optional<store::WorkloadRecord>> train = leader_->Get("alpha", "train");
  ASSERT_TRUE(train.ok() && train->has_value());
  EXPECT_FALSE((*train)->cancel_requested);
}

TEST_F(StandbyReadsTest, AReadThatCannotFinishIsA503WithTheReasonAndTheNextReadReconnects) {
  StandbyReadsOptions options;
  options.statement_timeout = Duration::FromMillis(300);
  StartStandby(options);
  ASSERT_EQ(Get("/v1/workloads/train", kAlpha)->status, 200);  // the session is open
  // Another session holds the workloads table: the standby's read waits for its lock
  // until the statement timeout, then answers 503 instead of hanging.
  std::unique_ptr<pg::Connection> holder = ConnectAsAdmin();
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(holder->ExecScript("lock the workloads", "BEGIN; LOCK TABLE workloads IN ACCESS EXCLUSIVE MODE").ok());
  httplib::Result blocked = Get("/v1/workloads/train", kAlpha);
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->status, 503) << blocked->body;
  EXPECT_EQ(blocked->get_header_value("Retry-After"), "2");
  EXPECT_NE(blocked->body.find("cannot read the database"), std::string::npos) << blocked->body;
  ASSERT_TRUE(holder->ExecScript("release the workloads", "ROLLBACK").ok());
  httplib::Result again = Get("/v1/workloads/train", kAlpha);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200) << again->body;
  EXPECT_EQ(Body(again), LeaderJson("alpha", "train"));
}

TEST_F(StandbyReadsTest, AnUnreachableDatabaseIsA503WithTheReason) {
  // A port nothing listens on (the socket folder is the fixture's, the port is not).
  Result<pg::ConnectionPolicy> away = SocketPolicy().With("port", "1");
  ASSERT_TRUE(away.ok());
  StartStandby(StandbyReads::OnPostgres(*away, clock_));
  httplib::Result res = Get("/v1/workloads/train", kAlpha);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  EXPECT_EQ(res->get_header_value("Retry-After"), "2");
  EXPECT_NE(res->body.find("cannot read the database"), std::string::npos) << res->body;
  EXPECT_EQ(res->body.find("password"), std::string::npos);
}

TEST(StandbyReadsBackoff, AFailedOpenIsAnsweredAgainUntilRetryAfterThenTriedAnew) {
  ManualClock clock;
  std::atomic<int> opens{0};
  StandbyReads reads(
      [&]() -> Result<StandbyReads::Session> {
        ++opens;
        return Unavailable("connection refused");
      },
      clock);
  EXPECT_EQ(reads.Get({"", "x"}, "alpha").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(reads.List("alpha", "").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(opens.load(), 1);
  clock.Advance(Duration::FromMillis(999));
  EXPECT_EQ(reads.Decisions({"", ""}, "").status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(opens.load(), 1);
  clock.Advance(Duration::FromMillis(1));
  Status again = reads.Get({"", "x"}, "alpha").status();
  EXPECT_EQ(again.code(), StatusCode::kUnavailable);
  EXPECT_NE(again.message().find("connection refused"), std::string::npos);
  EXPECT_EQ(opens.load(), 2);
}

}  // namespace
}  // namespace gpufed::runtime

// The dashboard's endpoints over real HTTP: /v1/queue, /v1/tenants, /v1/history and
// /v1/audit answer for the token's tenant only (an admin: everyone).
#include <httplib.h>

#include <gtest/gtest.h>

#include "tests/integration/controller/api_fixture.h"

namespace gpufed::testing {
namespace {

using DashboardApiTest = ApiFixture;

TEST_F(DashboardApiTest, TheQueueListsTheCallersWaitingWorkInOrderWithTheirWait) {
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a1", "alpha", 1, "1h", "  priority: low\n"),
                          "application/yaml")
                ->status,
            201);
  h_.clock.Advance(Duration::FromSeconds(10));
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a2", "alpha", 1, "1h", "  priority: normal\n"),
                          "application/yaml")
                ->status,
            201);
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("b1", "beta", 1, "1h"), "application/yaml")->status, 201);
  h_.clock.Advance(Duration::FromSeconds(30));
  auto alpha = Body(client_->Get("/v1/queue", Auth(kAlpha)));
  ASSERT_EQ(alpha["items"].size(), 2u) << alpha.dump(2);
  // Higher priority first, then by submission.
  EXPECT_EQ(alpha["items"][0]["name"], "a2");
  EXPECT_EQ(alpha["items"][0]["position"], 1);
  EXPECT_EQ(alpha["items"][0]["priority"], 500);
  EXPECT_EQ(alpha["items"][1]["name"], "a1");
  EXPECT_EQ(alpha["items"][1]["priority"], 100);
  EXPECT_EQ(alpha["items"][1]["waitedSeconds"], 40);
  for (const auto& item : alpha["items"]) EXPECT_EQ(item["tenant"], "alpha");
  EXPECT_EQ(Body(client_->Get("/v1/queue", Auth(kAdmin)))["items"].size(), 3u);
  EXPECT_EQ(client_->Get("/v1/queue")->status, 401);
  EXPECT_EQ(client_->Get("/v1/queue", Auth(kMetrics))->status, 403);

  ASSERT_TRUE(h_.controller->Pass().ok());
  // Placed work leaves the queue and its wait joins the histogram of its tenant only.
  auto after = Body(client_->Get("/v1/queue", Auth(kAlpha)));
  EXPECT_EQ(after["items"].size(), 0u) << after.dump(2);
  EXPECT_EQ(after["waitHistogram"]["count"], 2);
  EXPECT_EQ(after["waitHistogram"]["counts"].size(), after["waitHistogram"]["bounds"].size() + 1);
  EXPECT_EQ(Body(client_->Get("/v1/queue", Auth(kAdmin)))["waitHistogram"]["count"], 3);
}

TEST_F(DashboardApiTest, TenantsShowBudgetAlertLevelGpusInUseAndFairShareToTheirOwnTenantOnly) {
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a1", "alpha", 4, "1h"), "application/yaml")->status, 201);
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_TRUE(h_.controller->Pass().ok());
  auto beta = Body(client_->Get("/v1/tenants", Auth(kBeta)));
  ASSERT_EQ(beta["items"].size(), 1u) << beta.dump(2);
  EXPECT_EQ(beta["items"][0]["name"], "beta");
  EXPECT_EQ(beta["items"][0]["limit"], "5.00");
  EXPECT_EQ(beta["items"][0]["alertLevel"], "ok");
  EXPECT_EQ(beta["items"][0]["alertAt"], (nlohmann::json{0.5, 0.9}));
  auto all = Body(client_->Get("/v1/tenants", Auth(kAdmin)));
  ASSERT_EQ(all["items"].size(), 2u);
  EXPECT_EQ(all["items"][0]["name"], "alpha");
  EXPECT_EQ(all["items"][0]["gpusInUse"], 4);
  EXPECT_EQ(all["items"][0]["fairShare"]["entitled"], 0.5);
  EXPECT_EQ(all["items"][0]["currency"], "EUR");
}

TEST_F(DashboardApiTest, HistoryAndAuditStatusFollowThePasses) {
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a1", "alpha", 8, "1h"), "application/yaml")->status, 201);
  ASSERT_EQ(client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("b1", "beta", 1, "1h"), "application/yaml")->status, 201);
  ASSERT_TRUE(h_.controller->Pass().ok());
  h_.clock.Advance(Duration::FromSeconds(120));
  ASSERT_TRUE(h_.controller->Pass().ok());
  auto admin = Body(client_->Get("/v1/history", Auth(kAdmin)));
  ASSERT_EQ(admin["samples"].size(), 2u) << admin.dump(2);
  EXPECT_EQ(admin["samples"][1]["atSeconds"], 120);
  EXPECT_EQ(admin["samples"][1]["clusters"]["onprem"]["capacity"], 8);
  EXPECT_EQ(admin["samples"][1]["clusters"]["onprem"]["allocated"], 8);
  EXPECT_TRUE(admin["samples"][1]["queue"].contains("alpha"));
  EXPECT_TRUE(admin["samples"][1]["queue"].contains("beta"));
  EXPECT_EQ(admin["latestSeconds"], 120);
  // A poll asks only for what it has not seen.
  auto newer = Body(client_->Get("/v1/history?since=0", Auth(kAdmin)));
  ASSERT_EQ(newer["samples"].size(), 1u) << newer.dump(2);
  EXPECT_EQ(newer["samples"][0]["atSeconds"], 120);
  EXPECT_EQ(Body(client_->Get("/v1/history?since=120", Auth(kAdmin)))["samples"].size(), 0u);
  for (const char* bad : {"abc", "-1", "1e400", "12s"}) {
    auto r = client_->Get(std::string("/v1/history?since=") + bad, Auth(kAdmin));
    EXPECT_EQ(r->status, 400) << bad;
    EXPECT_NE(Body(r)["error"]["message"].get<std::string>().find("since"), std::string::npos) << bad;
  }
  auto beta = Body(client_->Get("/v1/history", Auth(kBeta)));
  ASSERT_EQ(beta["samples"].size(), 2u);
  EXPECT_FALSE(beta["samples"][1]["queue"].contains("alpha"));
  EXPECT_FALSE(beta["samples"][1]["spend"].contains("alpha"));

  auto audit = Body(client_->Get("/v1/audit", Auth(kBeta)));
  EXPECT_GE(audit["head"]["seq"].get<int>(), 3) << audit.dump(2);
  EXPECT_EQ(audit["head"]["hash"].get<std::string>().size(), 64u);
  EXPECT_TRUE(audit["healthy"].get<bool>());
  EXPECT_TRUE(audit["sinks"].is_array());
}

}  // namespace
}  // namespace gpufed::testing

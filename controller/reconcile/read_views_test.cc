// The one definition of how a caller sees the leader's views (read_views.h), which the
// leader's Controller and a standby both apply: a tenant sees its own tenant, its own
// waiting work numbered among its own, and its own wait histogram; an admin sees all.
#include "controller/reconcile/read_views.h"

#include <gtest/gtest.h>

#include "controller/reconcile/pass_metrics.h"

namespace gpufed::reconcile {
namespace {

const nlohmann::json kTenants = {
    {"items", {{{"name", "alpha"}, {"spent", "1.00"}}, {{"name", "beta"}, {"spent", "2.00"}}, {{"name", "gone"}}}},
    {"declared", {"alpha", "beta"}}};

TEST(ReadViews, TenantsAreScopedToTheCallersOwn) {
  EXPECT_EQ(ScopeTenants(kTenants, "")["items"].size(), 3u);
  const nlohmann::json alpha = ScopeTenants(kTenants, "alpha");
  ASSERT_EQ(alpha["items"].size(), 1u);
  EXPECT_EQ(alpha["items"][0]["name"], "alpha");
  EXPECT_TRUE(ScopeTenants(kTenants, "nobody")["items"].empty());
}

TEST(ReadViews, ATenantIsFoundOnlyByItselfOrAnAdminAndOnlyWhenDeclared) {
  Result<nlohmann::json> own = ScopeTenant(kTenants, "beta", "beta");
  ASSERT_TRUE(own.ok());
  EXPECT_EQ((*own)["spent"], "2.00");
  EXPECT_TRUE(ScopeTenant(kTenants, "beta", "").ok());
  // Another tenant looks like a missing one, before anything is read.
  EXPECT_EQ(TenantVisible("beta", "alpha").code(), StatusCode::kNotFound);
  Result<nlohmann::json> other = ScopeTenant(kTenants, "beta", "alpha");
  EXPECT_EQ(other.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(other.status().message(), "no tenant beta");
  // In the views but no longer declared by the revision: absent, as the leader said.
  EXPECT_EQ(ScopeTenant(kTenants, "gone", "").status().code(), StatusCode::kNotFound);
}

TEST(ReadViews, TheQueueShowsTheCallersWorkNumberedAmongItsOwnAndItsOwnWaits) {
  Histogram alpha_waits(PassMetrics::WaitBounds());
  alpha_waits.Observe(30);
  const nlohmann::json queue = {
      {"items",
       {{{"tenant", "beta"}, {"name", "b1"}, {"position", 1}},
        {{"tenant", "alpha"}, {"name", "a1"}, {"position", 2}},
        {{"tenant", "beta"}, {"name", "b2"}, {"position", 3}},
        {{"tenant", "alpha"}, {"name", "a2"}, {"position", 4}}}},
      {"waitHistograms", {{"", WaitHistogramJson(alpha_waits)}, {"alpha", WaitHistogramJson(alpha_waits)}}}};
  const nlohmann::json admin = ScopeQueue(queue, "");
  ASSERT_EQ(admin["items"].size(), 4u);
  EXPECT_EQ(admin["items"][3]["position"], 4);
  const nlohmann::json alpha = ScopeQueue(queue, "alpha");
  ASSERT_EQ(alpha["items"].size(), 2u);
  EXPECT_EQ(alpha["items"][0]["name"], "a1");
  EXPECT_EQ(alpha["items"][0]["position"], 1);
  EXPECT_EQ(alpha["items"][1]["position"], 2);
  EXPECT_EQ(alpha["waitHistogram"]["count"], 1);
  // beta's own histogram was not recorded: the empty one, never everyone's.
  const nlohmann::json beta = ScopeQueue(queue, "beta");
  EXPECT_EQ(beta["items"].size(), 2u);
  EXPECT_EQ(beta["waitHistogram"], WaitHistogramJson(Histogram(PassMetrics::WaitBounds())));
  EXPECT_EQ(beta.dump().find("a1"), std::string::npos);
}

}  // namespace
}  // namespace gpufed::reconcile

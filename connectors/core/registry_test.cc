#include "connectors/core/registry.h"

#include <gtest/gtest.h>

#include "connectors/core/action_json.h"
#include "connectors/core/rate_limit.h"

namespace gpufed::connectors {
namespace {

class FakeConnector : public Connector {
 public:
  Result<Observation> Observe(const CallContext&) override { return Observation{}; }
  Result<ApplyOutcome> Apply(const Action&, const CallContext&) override { return ApplyOutcome{}; }
};

Factory FakeFactory() {
  return [](const model::Cluster&, const FactoryContext&) -> Result<std::unique_ptr<Connector>> {
    return std::unique_ptr<Connector>(std::make_unique<FakeConnector>());
  };
}

TEST(ConnectorRegistry, CreatesByTheClustersConnectorType) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register("sim", FakeFactory()).ok());
  model::Cluster cluster;
  cluster.metadata.name = "c";
  EXPECT_TRUE(registry.Create(cluster, {}).ok());
  cluster.connector.type = model::ConnectorType::kSlurm;
  EXPECT_EQ(registry.Create(cluster, {}).status().code(), StatusCode::kNotFound);
}

TEST(ConnectorRegistry, AReadOnlyConnectorObservesButNeverAppliesAnAction) {
  int applied = 0;
  class Counting : public FakeConnector {
   public:
    explicit Counting(int* applied) : applied_(applied) {}
    Result<ApplyOutcome> Apply(const Action&, const CallContext&) override {
      ++*applied_;
      return ApplyOutcome{};
    }

   private:
    int* applied_;
  };
  ConnectorRegistry registry;
  bool saw_read_only = false;
  ASSERT_TRUE(
      registry
          .Register("sim",
                    [&](const model::Cluster&, const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
                      saw_read_only = ctx.read_only;
                      return std::unique_ptr<Connector>(std::make_unique<Counting>(&applied));
                    })
          .ok());
  model::Cluster cluster;
  cluster.metadata.name = "c";
  FactoryContext ctx;
  ctx.read_only = true;
  Result<std::unique_ptr<Connector>> made = registry.Create(cluster, ctx);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_TRUE(saw_read_only);
  EXPECT_EQ(ctx.ledger_access(), LedgerAccess::kReadOnly);
  EXPECT_TRUE((*made)->Observe({}).ok());
  Action submit;
  submit.key = "w-u1.a1";
  Result<ApplyOutcome> out = (*made)->Apply(submit, {});
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition) << out.status().ToString();
  EXPECT_EQ(applied, 0);
}

TEST(ConnectorRegistry, RejectsADuplicateType) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register("sim", FakeFactory()).ok());
  EXPECT_EQ(registry.Register("sim", FakeFactory()).code(), StatusCode::kAlreadyExists);
}

TEST(RateLimitedConnector, RefusesCallsBeyondTheBurstUntilTokensRefill) {
  ManualClock clock;
  RateLimitedConnector limited(std::make_unique<FakeConnector>(), 1.0, 2);
  CallContext ctx{&clock};
  EXPECT_TRUE(limited.Observe(ctx).ok());
  EXPECT_TRUE(limited.Observe(ctx).ok());
  EXPECT_EQ(limited.Observe(ctx).status().code(), StatusCode::kUnavailable);
  clock.Advance(Duration::FromSeconds(1));
  EXPECT_TRUE(limited.Observe(ctx).ok());
}

TEST(ActionJson, RoundTripsEveryField) {
  Action a;
  a.kind = ActionKind::kSubmit;
  a.key = "w-u1.a2";
  a.workload = "w";
  a.attempt = 2;
  a.nodes = {{"n-0", {1, 2}}, {"", {0}}};
  a.provision_pool = "p";
  a.duration = Duration::FromSeconds(3600);
  a.resume_from = Duration::FromSeconds(600);
  a.checkpoint_interval = Duration::FromSeconds(300);
  a.run.command = {"python", "train.py"};
  a.run.env = {{"A", "1"}};
  Result<Action> back = ActionFromJson(ActionToJson(a));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ActionToJson(*back), ActionToJson(a));
  EXPECT_EQ(ActionFromJson(nlohmann::json{{"kind", "explode"}, {"key", "k"}}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpufed::connectors

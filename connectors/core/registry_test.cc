#include "connectors/core/registry.h"

#include <gtest/gtest.h>

#include "connectors/core/action_json.h"
#include "connectors/core/connector_fields.h"
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
  cluster.connector.type = "slurm";
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

// A provider that reads one field, `url`, as the real ones read theirs.
ConnectorProvider Provider(const std::string& type, ConnectorCapabilities capabilities,
                           Factory factory = FakeFactory()) {
  ConnectorProvider p;
  p.type = type;
  p.summary = type + " clusters";
  p.capabilities = capabilities;
  p.check = [](const model::ConnectorSpec& spec) {
    ConnectorFieldReader read(spec, {"url"});
    (void)read.String("url");
    return read.problems();
  };
  p.schema_properties = {{"url", {{"description", "Where it is."}, {"type", "string"}}}};
  p.factory = std::move(factory);
  return p;
}

model::Cluster ClusterOf(const std::string& type) {
  model::Cluster c;
  c.metadata.name = "c";
  c.connector.type = type;
  c.connector.location = {"clusters.yaml", 9, 3};
  return c;
}

TEST(ConnectorRegistry, AnUnknownTypeIsOneProblemListingTheKnownTypes) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("slurm", {})).ok());
  ASSERT_TRUE(registry.Register(Provider("sim", {})).ok());
  EXPECT_EQ(registry.Types(), (std::vector<std::string>{"sim", "slurm"}));
  std::vector<model::ConnectorProblem> problems = registry.Check(ClusterOf("slrum").connector);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].ToString(),
            "clusters.yaml:9:3: spec.connector.type: unknown connector type 'slrum' (did you mean 'slurm'?); this "
            "build has sim, slurm");
  EXPECT_EQ(registry.Create(ClusterOf("ssh"), {}).status().code(), StatusCode::kNotFound);
}

TEST(ConnectorRegistry, TheProviderChecksItsBlockAndCreateRefusesABadOneWithFileAndLine) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("slurm", {})).ok());
  ASSERT_TRUE(registry.Register("bare", FakeFactory()).ok());  // no fields of its own
  model::Cluster good = ClusterOf("slurm");
  good.connector.Set("url", "https://x");
  EXPECT_TRUE(registry.Check(good.connector).empty());
  EXPECT_TRUE(registry.Create(good, {}).ok());

  model::Cluster bad = ClusterOf("slurm");
  bad.connector.fields["url"] = {8, "spec.connector.url", {"clusters.yaml", 11, 5}};
  Result<std::unique_ptr<Connector>> refused = registry.Create(bad, {});
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "cluster c: clusters.yaml:11:5: spec.connector.url: expected a string, got an integer (quote it: \"8\")");
  model::Cluster bare = ClusterOf("bare");
  bare.connector.Set("url", "https://x");
  ASSERT_EQ(registry.Check(bare.connector).size(), 1u);
  EXPECT_EQ(registry.Check(bare.connector)[0].message,
            "unknown field 'url'; a bare connector reads type, timeout, qps, burst");
}

TEST(ConnectorRegistry, ReportsEachProvidersCapabilities) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("sim", {.virtual_time = true, .mig = true, .elastic_nodes = true})).ok());
  ASSERT_TRUE(registry.Register(Provider("slurm", {.mig = true, .paces_requests = true})).ok());
  EXPECT_TRUE(registry.RunsOnVirtualTime(ClusterOf("sim")));
  EXPECT_FALSE(registry.RunsOnVirtualTime(ClusterOf("slurm")));
  EXPECT_FALSE(registry.RunsOnVirtualTime(ClusterOf("ssh")));
  EXPECT_TRUE(registry.AllRunOnVirtualTime({ClusterOf("sim"), ClusterOf("sim")}));
  EXPECT_FALSE(registry.AllRunOnVirtualTime({ClusterOf("sim"), ClusterOf("slurm")}));
  EXPECT_TRUE(registry.Find("slurm")->capabilities.mig);
  EXPECT_FALSE(registry.Find("slurm")->capabilities.elastic_nodes);
}

TEST(ConnectorRegistry, ReplaceSwapsARegisteredProviderOnly) {
  ConnectorRegistry registry;
  EXPECT_EQ(registry.Replace(Provider("sim", {})).code(), StatusCode::kNotFound);
  ASSERT_TRUE(registry.Register(Provider("sim", {})).ok());
  EXPECT_TRUE(registry.Replace(Provider("sim", {.virtual_time = true})).ok());
  EXPECT_TRUE(registry.RunsOnVirtualTime(ClusterOf("sim")));
}

// Counts the calls that reach the provider's connector.
Factory CountingFactory(int* calls) {
  class Counting : public FakeConnector {
   public:
    explicit Counting(int* calls) : calls_(calls) {}
    Result<Observation> Observe(const CallContext&) override {
      ++*calls_;
      return Observation{};
    }

   private:
    int* calls_;
  };
  return [calls](const model::Cluster&, const FactoryContext&) -> Result<std::unique_ptr<Connector>> {
    return std::unique_ptr<Connector>(std::make_unique<Counting>(calls));
  };
}

TEST(ConnectorRegistry, EnforcesTheClustersQpsOnceForAProviderThatDoesNotPaceItself) {
  int calls = 0;
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("sim", {}, CountingFactory(&calls))).ok());
  model::Cluster cluster = ClusterOf("sim");
  cluster.connector.qps = 1;
  cluster.connector.burst = 3;
  Result<std::unique_ptr<Connector>> made = registry.Create(cluster, {});
  ASSERT_TRUE(made.ok());
  ManualClock clock;
  CallContext ctx{&clock};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE((*made)->Observe(ctx).ok()) << i;  // the burst
  EXPECT_EQ((*made)->Observe(ctx).status().code(), StatusCode::kUnavailable);  // the 4th waits for a token
  EXPECT_EQ(calls, 3);
  clock.Advance(Duration::FromSeconds(1));
  EXPECT_TRUE((*made)->Observe(ctx).ok());
  EXPECT_EQ(calls, 4);
}

TEST(ConnectorRegistry, DoesNotWrapAProviderThatPacesItsOwnRequests) {
  int calls = 0;
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("slurm", {.paces_requests = true}, CountingFactory(&calls))).ok());
  model::Cluster cluster = ClusterOf("slurm");
  cluster.connector.qps = 1;
  cluster.connector.burst = 3;
  Result<std::unique_ptr<Connector>> made = registry.Create(cluster, {});
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(dynamic_cast<RateLimitedConnector*>(made->get()), nullptr);
  ManualClock clock;
  CallContext ctx{&clock};
  // Its HTTP client's bucket (one per request) is the limit; the registry adds none.
  for (int i = 0; i < 10; ++i) EXPECT_TRUE((*made)->Observe(ctx).ok()) << i;
  EXPECT_EQ(calls, 10);
}

TEST(ConnectorRegistry, AssemblesTheConnectorSchemaFromTheProvidersFragments) {
  ConnectorRegistry registry;
  ASSERT_TRUE(registry.Register(Provider("sim", {})).ok());
  ASSERT_TRUE(registry.Register(Provider("slurm", {})).ok());
  nlohmann::json defs = registry.ConnectorSchemaDefs();
  const nlohmann::json& connector = defs["connector"];
  EXPECT_EQ(connector["required"], (nlohmann::json{"type"}));
  ASSERT_EQ(connector["allOf"].size(), 3u);  // one dispatch per provider, then the unknown type
  EXPECT_EQ(connector["allOf"][1]["if"]["properties"]["type"]["const"], "slurm");
  EXPECT_EQ(connector["allOf"][1]["then"]["$ref"], "#/$defs/connector-slurm");
  const nlohmann::json& unknown = connector["allOf"][2]["else"]["properties"]["type"];
  EXPECT_EQ(unknown["enum"], (nlohmann::json{"sim", "slurm"}));
  EXPECT_EQ(unknown["description"],
            "Connector type, one of the providers of this build: sim (sim clusters), slurm (slurm clusters).");
  const nlohmann::json& slurm = defs["connector-slurm"];
  EXPECT_EQ(slurm["additionalProperties"], false);
  for (const char* key : {"type", "timeout", "qps", "burst", "url"}) {
    EXPECT_TRUE(slurm["properties"][key].contains("description")) << key;
  }
  EXPECT_EQ(slurm["properties"]["type"]["const"], "slurm");
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

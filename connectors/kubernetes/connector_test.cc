// The connector against the fake API server (tests/fake-kube): HTTPS with a generated
// CA on 127.0.0.1, the fake's scheduler and Job controller on a virtual clock.
#include <gtest/gtest.h>

#include <filesystem>

#include "connectors/kubernetes/kubernetes_connector.h"
#include "tests/fake-kube/fake_kube.h"

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;
using testing::FakeKube;
using testing::FakeNode;

model::Cluster Cluster() {
  model::Cluster c;
  c.metadata.name = "gke-eu";
  c.provider = "gcp";
  model::NodePool h100;
  h100.name = "h100";
  h100.count = 1;
  h100.gpu = {.model = "H100-80GB", .count = 8, .memory = Quantity::FromMilli(80 * kGiB * 1000)};
  model::NodePool mig;
  mig.name = "mig-a100";
  mig.count = 1;
  mig.gpu = {.model = "A100-80GB", .count = 2, .memory = Quantity::FromMilli(80 * kGiB * 1000),
             .sharing = model::GpuSharing::kMig, .mig_profiles = {"1g.10gb", "3g.40gb"}};
  c.node_pools = {h100, mig};
  c.pricing.gpu_hour["H100-80GB"] = Money(3'000'000, "EUR");
  return c;
}

class KubernetesConnectorTest : public ::testing::Test {
 protected:
  void SetUp() override { StartFake({}); }
  void TearDown() override {
    connector_.reset();
    fake_.reset();
    if (!state_dir_.empty()) std::filesystem::remove_all(state_dir_);
  }

  void StartFake(testing::FakeKubeOptions options) {
    options.clock = &clock_;
    Result<std::unique_ptr<FakeKube>> fake = FakeKube::Start(options);
    ASSERT_TRUE(fake.ok()) << fake.status().ToString();
    fake_ = std::move(fake).value();
    FakeNode h100{"h100-1",
                  {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}, {"cloud.google.com/gke-nodepool", "h100"}},
                  {{"cpu", "192"}, {"memory", "2Ti"}, {"nvidia.com/gpu", "8"}},
                  {{{"key", "nvidia.com/gpu"}, {"value", "present"}, {"effect", "NoSchedule"}}}};
    FakeNode mig{"a100-mig-1",
                 {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/mig.strategy", "mixed"},
                  {"nvidia.com/gpu.count", "2"}},
                 {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/mig-1g.10gb", "7"}, {"nvidia.com/mig-3g.40gb", "2"}},
                 {}};
    FakeNode cpu{"cpu-1", {}, {{"cpu", "32"}, {"memory", "128Gi"}}, {}};
    fake_->AddNode(h100);
    fake_->AddNode(mig);
    fake_->AddNode(cpu);
  }

  KubernetesOptions Options() {
    KubernetesOptions o;
    o.credentials.server = fake_->url();
    o.credentials.ca.pem = fake_->ca().ca_pem;
    o.credentials.token = "test-token";
    o.ns = "ml";
    o.state_dir = state_dir_;
    // Waiting for a rate-limit token moves virtual time; nothing sleeps.
    o.sleep = [this](Duration d) { clock_.Advance(d); };
    return o;
  }

  void Connect(KubernetesOptions o) {
    Result<std::unique_ptr<KubernetesConnector>> c = KubernetesConnector::Create(Cluster(), std::move(o));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    connector_ = std::move(c).value();
  }
  void Connect() { Connect(Options()); }
  void UseStateDir() {
    state_dir_ = (std::filesystem::temp_directory_path() /
                  ("gpufed-k8s-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                     .string();
    std::filesystem::remove_all(state_dir_);
  }

  CallContext Ctx() { return {&clock_, Duration::FromSeconds(5)}; }

  Action Submit(const std::string& key, const std::string& node, int gpus) {
    Action a;
    a.kind = ActionKind::kSubmit;
    a.key = key;
    a.workload = "train";
    a.tenant = "team-nlp";
    a.attempt = 1;
    std::vector<int> idx;
    for (int i = 0; i < gpus; ++i) idx.push_back(i);
    a.nodes = {{node, idx}};
    a.cpu_milli = 8000;
    a.memory_bytes = int64_t{32} << 30;
    a.duration = Duration::FromSeconds(3600);
    a.checkpoint_interval = Duration::FromSeconds(120);
    a.run.image = "registry.example/train:1";
    a.run.args = {"--epochs", "3"};
    return a;
  }

  const ObservedWorkload* Find(const Observation& obs, const std::string& key) {
    for (const ObservedWorkload& w : obs.workloads) {
      if (w.key == key) return &w;
    }
    return nullptr;
  }

  int CountRequests(const std::string& method, int status = 0) {
    int n = 0;
    for (const auto& r : fake_->Requests()) n += r.method == method && (status == 0 || r.status == status);
    return n;
  }

  ManualClock clock_;
  std::unique_ptr<FakeKube> fake_;
  std::unique_ptr<KubernetesConnector> connector_;
  std::string state_dir_;
};

TEST_F(KubernetesConnectorTest, ObservesWholeGpusAndMigSlicesNetOfOtherPods) {
  fake_->AddForeignPod("other", "inference", "h100-1", {{"nvidia.com/gpu", "2"}, {"cpu", "8"}});
  fake_->AddForeignPod("other", "notebook", "a100-mig-1", {{"nvidia.com/mig-1g.10gb", "1"}});
  Connect();
  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok()) << obs.status().ToString();
  ASSERT_EQ(obs->nodes.size(), 3u);
  const ObservedNode& mig = obs->nodes[0];   // lists are sorted by name
  const ObservedNode& cpu = obs->nodes[1];
  const ObservedNode& h100 = obs->nodes[2];
  EXPECT_EQ(h100.pool, "h100");
  EXPECT_TRUE(h100.ready);
  ASSERT_EQ(h100.gpus.size(), 8u);
  int free = 0;
  for (const ObservedGpu& g : h100.gpus) free += g.free_milli == 1000;
  EXPECT_EQ(free, 6);
  EXPECT_EQ(h100.gpus[0].free_memory, 80 * kGiB);
  EXPECT_EQ(h100.free_cpu_milli, 184000);
  EXPECT_EQ(mig.pool, "mig-a100");
  ASSERT_EQ(mig.gpus.size(), 2u);
  // 7 x 1g + 2 x 3g = 13 slices allocatable, one 1g taken: 12 free over two GPUs.
  EXPECT_EQ(mig.gpus[0].mig_slices_used, 0);
  EXPECT_EQ(mig.gpus[1].mig_slices_used, 2);
  EXPECT_EQ(cpu.pool, "");
  EXPECT_TRUE(cpu.gpus.empty());
  EXPECT_EQ(obs->gpu_hour.at("H100-80GB"), Money(3'000'000, "EUR"));
}

TEST_F(KubernetesConnectorTest, SubmitCreatesASchemaValidJobThatRunsAndCompletes) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());  // learns node labels and taints
  Result<ApplyOutcome> out = connector_->Apply(Submit("train-abc.a1", "h100-1", 4), Ctx());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(out->already_applied);
  EXPECT_TRUE(fake_->Violations().empty()) << fake_->Violations().front();
  std::optional<json> job = fake_->Job("ml", "gpufed-train-abc-a1");
  ASSERT_TRUE(job.has_value());
  const json& pod = (*job)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  for (const auto& r : fake_->Requests()) {
    if (r.method == "POST") {
      EXPECT_EQ(r.query.at("fieldValidation"), "Strict");
    }
  }

  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  const ObservedWorkload* w = Find(*obs, "train-abc.a1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->state, RunState::kRunning);
  EXPECT_EQ(w->workload, "train");
  EXPECT_EQ(w->attempt, 1);
  int free = 0;
  for (const ObservedGpu& g : obs->nodes[2].gpus) free += g.free_milli == 1000;
  EXPECT_EQ(free, 4);

  clock_.Advance(Duration::FromSeconds(300));
  obs = connector_->Observe(Ctx());
  w = Find(*obs, "train-abc.a1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->progress, Duration::FromSeconds(300));
  EXPECT_EQ(w->checkpoint, Duration::FromSeconds(240));

  clock_.Advance(Duration::FromSeconds(300));  // the fake's pods run 600s
  obs = connector_->Observe(Ctx());
  w = Find(*obs, "train-abc.a1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->state, RunState::kSucceeded);
  EXPECT_EQ(w->finished_at, Duration::FromSeconds(600));
  EXPECT_DOUBLE_EQ(w->gpu_seconds, 4 * 600.0);
  EXPECT_EQ(w->cost, Money(2'000'000, "EUR"));  // 4 GPUs x 10 min x 3 EUR/h
}

TEST_F(KubernetesConnectorTest, MigSubmitRequestsTheMixedStrategyResource) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  Action a = Submit("nb.a1", "a100-mig-1", 1);
  a.mig_profile = "3g.40gb";
  ASSERT_TRUE(connector_->Apply(a, Ctx()).ok());
  EXPECT_TRUE(fake_->Violations().empty());
  std::vector<json> pods = fake_->PodsOf("gpufed-nb-a1");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/mig-3g.40gb"], "1");
  EXPECT_EQ(pods[0]["spec"]["nodeName"], "a100-mig-1");
}

TEST_F(KubernetesConnectorTest, RetriedCreateAfterACrashIsAlreadyApplied) {
  UseStateDir();
  Connect();
  Action a = Submit("train-abc.a1", "h100-1", 2);
  ASSERT_TRUE(connector_->Apply(a, Ctx()).ok());
  connector_.reset();  // the controller crashed before recording the answer
  Connect();
  Result<ApplyOutcome> again = connector_->Apply(a, Ctx());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_applied);
  EXPECT_EQ(fake_->Jobs().size(), 1u);
  EXPECT_EQ(CountRequests("POST", 409), 1);
}

TEST_F(KubernetesConnectorTest, CancelDeletesInBackgroundAndKeepsReportingCancelled) {
  UseStateDir();
  Connect();
  Action a = Submit("train-abc.a1", "h100-1", 2);
  ASSERT_TRUE(connector_->Apply(a, Ctx()).ok());
  Action cancel{ActionKind::kCancel, "train-abc.a1", "train", "team-nlp", 1};
  cancel.reason = "cancelled by request";
  Result<ApplyOutcome> out = connector_->Apply(cancel, Ctx());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE(out->already_applied);
  EXPECT_TRUE(fake_->Jobs().empty());
  EXPECT_TRUE(fake_->PodsOf("gpufed-train-abc-a1").empty());
  for (const auto& r : fake_->Requests()) {
    if (r.method == "DELETE") {
      EXPECT_EQ(json::parse(r.body)["propagationPolicy"], "Background");
    }
  }
  EXPECT_TRUE(fake_->Violations().empty());

  connector_.reset();  // restart: the tombstone is durable
  Connect();
  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  const ObservedWorkload* w = Find(*obs, "train-abc.a1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->state, RunState::kCancelled);
  EXPECT_EQ(w->reason, "cancelled by request");
  EXPECT_TRUE(connector_->Apply(cancel, Ctx())->already_applied);
  EXPECT_TRUE(connector_->Apply(a, Ctx())->already_applied);  // never resurrected
  EXPECT_TRUE(fake_->Jobs().empty());
}

TEST_F(KubernetesConnectorTest, CancelWhoseDeleteFailedKeepsReportingTheJobUntilRetried) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  ASSERT_TRUE(connector_->Apply(Submit("c.a1", "h100-1", 1), Ctx()).ok());
  Action cancel{ActionKind::kCancel, "c.a1", "train", "team-nlp", 1};
  fake_->FailNext(1, 500);
  EXPECT_EQ(connector_->Apply(cancel, Ctx()).status().code(), StatusCode::kUnavailable);
  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(Find(*obs, "c.a1")->state, RunState::kRunning);  // so the controller cancels again
  ASSERT_TRUE(connector_->Apply(cancel, Ctx()).ok());
  obs = connector_->Observe(Ctx());
  EXPECT_EQ(Find(*obs, "c.a1")->state, RunState::kCancelled);
  EXPECT_TRUE(fake_->Jobs().empty());
}

TEST_F(KubernetesConnectorTest, ExpiredContinueTokenRelistsFromScratch) {
  KubernetesOptions o = Options();
  o.page_size = 1;
  Connect(o);
  fake_->CompactAfterPages(1);  // the first page's continue token expires
  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok()) << obs.status().ToString();
  EXPECT_EQ(obs->nodes.size(), 3u);
  EXPECT_EQ(connector_->relists(), 1);
  int gone = 0;
  for (const auto& r : fake_->Requests()) gone += r.status == 410;
  EXPECT_EQ(gone, 1);
}

TEST_F(KubernetesConnectorTest, ThrottledServerIsHonouredUntilRetryAfter) {
  Connect();
  fake_->FailNext(1, 429, "7");
  Result<Observation> obs = connector_->Observe(Ctx());
  EXPECT_EQ(obs.status().code(), StatusCode::kUnavailable);
  size_t sent = fake_->Requests().size();
  clock_.Advance(Duration::FromSeconds(3));
  EXPECT_EQ(connector_->Observe(Ctx()).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(fake_->Requests().size(), sent);  // nothing sent while Retry-After runs
  clock_.Advance(Duration::FromSeconds(5));
  EXPECT_TRUE(connector_->Observe(Ctx()).ok());
}

TEST_F(KubernetesConnectorTest, MapsApiErrorsToStatusCodes) {
  Connect();
  fake_->FailNext(1, 503);
  EXPECT_EQ(connector_->Observe(Ctx()).status().code(), StatusCode::kUnavailable);

  Action invalid = Submit("bad.a1", "h100-1", 1);
  invalid.run.env[""] = "x";  // an EnvVar without a name: 422 Invalid
  Result<ApplyOutcome> r = connector_->Apply(invalid, Ctx());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(".name: Required value"), std::string::npos) << r.status().message();

  fake_->Forbid("create", "jobs");
  EXPECT_EQ(connector_->Apply(Submit("x.a1", "h100-1", 1), Ctx()).status().code(), StatusCode::kPermissionDenied);

  KubernetesOptions o = Options();
  o.credentials.token = "wrong-token";
  Connect(o);
  Result<Observation> obs = connector_->Observe(Ctx());
  EXPECT_EQ(obs.status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(obs.status().message().find("wrong-token"), std::string::npos);
}

TEST_F(KubernetesConnectorTest, FakeRejectsAMisspeltFieldUnderStrictValidation) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  Result<json> job = BuildJob(Submit("typo.a1", "h100-1", 1), {.ns = "ml"});
  ASSERT_TRUE(job.ok());
  (*job)["spec"]["template"]["spec"]["containers"][0]["resorces"] = json::object();
  http::ClientOptions o{.base_url = fake_->url(), .ca = {fake_->ca().ca_pem, ""}, .bearer_token = "test-token"};
  auto client = http::Client::Create(o);
  ASSERT_TRUE(client.ok());
  KubeApi api(std::move(client).value(), "");
  Result<json> created = api.Create("/apis/batch/v1/namespaces/ml/jobs", *job, Ctx());
  EXPECT_EQ(created.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(created.status().message().find("spec.template.spec.containers[0].resorces"), std::string::npos);
}

TEST_F(KubernetesConnectorTest, ReportsUnschedulableAsStartingWithTheSchedulersReason) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  ASSERT_TRUE(connector_->Apply(Submit("big.a1", "h100-1", 16), Ctx()).ok());
  Result<Observation> obs = connector_->Observe(Ctx());
  const ObservedWorkload* w = Find(*obs, "big.a1");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->state, RunState::kStarting);
  EXPECT_NE(w->reason.find("Unschedulable"), std::string::npos) << w->reason;
  EXPECT_NE(w->reason.find("Insufficient nvidia.com/gpu"), std::string::npos) << w->reason;
}

TEST_F(KubernetesConnectorTest, DisruptedPodsAreReportedAsPreemptedOrLost) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  ASSERT_TRUE(connector_->Apply(Submit("p.a1", "h100-1", 1), Ctx()).ok());
  ASSERT_TRUE(connector_->Apply(Submit("d.a1", "h100-1", 1), Ctx()).ok());
  fake_->FailPod("gpufed-p-a1", "PreemptionByScheduler");
  fake_->FailPod("gpufed-d-a1", "DeletionByTaintManager");
  Result<Observation> obs = connector_->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(Find(*obs, "p.a1")->state, RunState::kPreempted);
  const ObservedWorkload* lost = Find(*obs, "d.a1");
  EXPECT_EQ(lost->state, RunState::kFailed);
  EXPECT_TRUE(lost->lost);
}

TEST_F(KubernetesConnectorTest, AuthenticatesWithAClientCertificate) {
  fake_.reset();
  StartFake({.token = "", .client_certs = true});
  KubernetesOptions o = Options();
  o.credentials.token.clear();
  o.credentials.client_cert.pem = fake_->ca().client_cert_pem;
  o.credentials.client_key.pem = fake_->ca().client_key_pem;
  Connect(o);
  Result<Observation> obs = connector_->Observe(Ctx());
  EXPECT_TRUE(obs.ok()) << obs.status().ToString();
}

TEST_F(KubernetesConnectorTest, RefusesAServerItsCaDidNotSign) {
  Result<testing::TestCa> other = testing::GenerateTestCa();
  ASSERT_TRUE(other.ok());
  KubernetesOptions o = Options();
  o.credentials.ca.pem = other->ca_pem;
  Connect(o);
  Result<Observation> obs = connector_->Observe(Ctx());
  EXPECT_EQ(obs.status().code(), StatusCode::kFailedPrecondition) << obs.status().ToString();
  EXPECT_TRUE(fake_->Requests().empty());
}

TEST_F(KubernetesConnectorTest, ClientRateLimitWaitsOnTheCallClock) {
  KubernetesOptions o = Options();
  o.qps = 2;
  o.burst = 4;
  Connect(o);
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());  // 4 lists: the burst
  EXPECT_EQ(clock_.Now(), Duration());
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());  // 4 more at 2 qps: 2 seconds of waiting
  EXPECT_EQ(clock_.Now(), Duration::FromSeconds(2));
  CallContext tight{&clock_, Duration::FromMillis(100)};
  EXPECT_EQ(connector_->Observe(tight).status().code(), StatusCode::kUnavailable);
}

TEST_F(KubernetesConnectorTest, ServerThatStopsAnsweringIsUnavailable) {
  Connect();
  ASSERT_TRUE(connector_->Observe(Ctx()).ok());
  fake_->Stop();
  Result<Observation> obs = connector_->Observe(Ctx());
  EXPECT_EQ(obs.status().code(), StatusCode::kUnavailable) << obs.status().ToString();
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes

// The reconcile loop with an on-prem Kubernetes cluster (the fake API server) and a
// simulated cloud: work runs on Kubernetes as a Job; when the API server stops
// answering, the cluster becomes unhealthy after its unhealthyAfter (nothing new goes
// there, the Job stays its attempt), and after its lostAfter the checkpointable workload
// is requeued to the cloud, resuming from its checkpoint.
// Virtual time throughout; the fake's Job controller runs on the same clock.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "connectors/kubernetes/kubeconfig.h"
#include "connectors/kubernetes/kubernetes_connector.h"
#include "connectors/sim/sim_connector.h"
#include "controller/common/base64.h"
#include "controller/runtime/app.h"
#include "tests/fake-kube/fake_kube.h"

namespace gpufed::testing {
namespace {

std::string Repo(const std::string& kubeconfig) {
  return R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: onprem-k8s}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: kubernetes, kubeconfig: ")" +
         kubeconfig + R"(", namespace: gpufed, timeout: 2s}
  nodePools:
    - {name: a100, count: 1, cpu: 64, memory: 512Gi, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
  health: {unhealthyAfter: 2m, lostAfter: 5m}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  provider: aws
  region: eu-west
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: p4d, count: 1, cpu: 96, memory: 1Ti, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "3.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: alpha}
spec:
  weight: 1
  budget: {period: monthly, limit: "10000 EUR"}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: onprem-first}
spec:
  enforcement: deny
  rules:
    - name: restricted-stays-onprem
      when: {data.sensitivity: restricted}
      require: {cluster.provider: onprem}
  scoring:
    weights: {cost: 1, onprem: 3}
  burst: {queueWait: 10m, queueDepth: 2}
---
apiVersion: gpufed/v1alpha1
kind: Workload
metadata: {name: train}
spec:
  tenant: alpha
  type: training
  resources: {gpus: 4, gpuModels: [A100-80GB], cpu: 8, memory: 64Gi}
  durationHint: 2h
  checkpoint: {enabled: true, interval: 2m, uri: "s3://ckpt/train"}
  run: {image: registry.example/train:1, command: [python, train.py]}
)";
}

TEST(KubernetesFederation, UnansweringClusterBecomesUnhealthyAndCheckpointedWorkMovesToTheCloud) {
  gpufed::ManualClock clock;
  Result<std::unique_ptr<FakeKube>> fake =
      FakeKube::Start({.clock = &clock, .job_runtime = Duration::FromSeconds(7200)});
  ASSERT_TRUE(fake.ok()) << fake.status().ToString();
  (*fake)->AddNode({"k8s-a100-1",
                    {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}},
                    {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", "8"}},
                    {}});

  std::string dir = ::testing::TempDir() + "/gpufed_it_k8s_outage";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo");
  std::filesystem::create_directories(dir + "/kube");
  std::ofstream(dir + "/kube/config") << "apiVersion: v1\nkind: Config\ncurrent-context: it\n"
                                      << "clusters: [{name: c, cluster: {server: \"" << (*fake)->url()
                                      << "\", certificate-authority-data: " << Base64Encode((*fake)->ca().ca_pem)
                                      << "}}]\n"
                                      << "users: [{name: u, user: {token: test-token}}]\n"
                                      << "contexts: [{name: it, context: {cluster: c, user: u}}]\n";
  std::ofstream(dir + "/repo/fleet.yaml") << Repo(dir + "/kube/config");

  connectors::ConnectorRegistry registry;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry).ok());
  ASSERT_TRUE(connectors::kubernetes::RegisterKubernetesConnector(registry).ok());
  runtime::AppOptions options;
  options.config_dir = dir + "/repo";
  options.state_dir = dir + "/state";
  options.clock = &clock;
  options.handle_signals = false;
  Result<std::unique_ptr<runtime::App>> opened = runtime::App::Open(options, registry, nullptr);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  reconcile::Controller& controller = (*opened)->controller();

  ASSERT_TRUE(controller.Pass().ok());
  Result<store::WorkloadRecord> r = controller.Get({"", "train"}, "");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->cluster, "onprem-k8s") << r->reason;
  ASSERT_EQ((*fake)->Jobs().size(), 1u);
  EXPECT_TRUE((*fake)->Violations().empty());

  // It runs for 10 minutes on Kubernetes: checkpoints at every 2 minutes.
  for (int i = 0; i < 10; ++i) {
    clock.Advance(Duration::FromSeconds(60));
    ASSERT_TRUE(controller.Pass().ok());
  }
  r = controller.Get({"", "train"}, "");
  EXPECT_EQ(r->state, store::WorkloadState::kRunning) << r->reason;
  EXPECT_EQ(r->checkpoint, Duration::FromSeconds(600));

  // The API server stops answering. Within the grace period nothing moves.
  (*fake)->Stop();
  clock.Advance(Duration::FromSeconds(60));
  ASSERT_TRUE(controller.Pass().ok());
  EXPECT_EQ(controller.Get({"", "train"}, "")->cluster, "onprem-k8s");

  // Past unhealthyAfter: unhealthy, but the Job may well be running: it stays its attempt.
  for (int i = 0; i < 2; ++i) {
    clock.Advance(Duration::FromSeconds(60));
    ASSERT_TRUE(controller.Pass().ok());
  }
  bool healthy = true;
  for (const auto& c : controller.Clusters()) {
    if (c.value("name", "") == "onprem-k8s") healthy = c.value("healthy", true);
  }
  EXPECT_FALSE(healthy);
  r = controller.Get({"", "train"}, "");
  EXPECT_EQ(r->cluster, "onprem-k8s") << r->reason;
  EXPECT_EQ(r->attempt, 1);

  // Past lostAfter: given up there, requeued, placed on the cloud from the checkpoint.
  for (int i = 0; i < 3; ++i) {
    clock.Advance(Duration::FromSeconds(60));
    ASSERT_TRUE(controller.Pass().ok());
  }
  r = controller.Get({"", "train"}, "");
  EXPECT_EQ(r->cluster, "cloud") << r->reason;
  EXPECT_EQ(r->attempt, 2);
  EXPECT_EQ(r->resume_from, Duration::FromSeconds(600));
  auto history = controller.store()->History(controller.Get({"", "train"}, "")->uid);
  ASSERT_TRUE(history.ok());
  bool saw_unhealthy = false;
  for (const auto& t : *history) {
    saw_unhealthy |= t.to == "Requeued" && t.reason.find("has not answered for 5m") != std::string::npos;
  }
  EXPECT_TRUE(saw_unhealthy);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpufed::testing

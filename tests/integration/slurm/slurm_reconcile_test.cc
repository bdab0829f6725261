// The reconcile loop over a real Slurm (22.05 or 24.11) and a simulated cloud: slurmctld stops, the Slurm
// cluster turns unhealthy within the grace period and the checkpointable workload is
// requeued on the cloud; slurmctld starts again and the cluster is healthy again.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "connectors/sim/sim_connector.h"
#include "connectors/slurm/slurm_connector.h"
#include "controller/runtime/app.h"
#include "tests/integration/slurm/slurm_cluster.h"

namespace gpufed {
namespace {

using gpufed::testing::SlurmCluster;
using Steady = std::chrono::steady_clock;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }

class SlurmReconcile : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(SlurmCluster::Start()) << "tests/slurm/start-slurm.sh --release " << SlurmCluster::Release()
                                       << " failed";
    setenv("SLURM_JWT", Read(SlurmCluster::TokenFile()).c_str(), 1);
    dir_ = SlurmCluster::State() + "/reconcile";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/out");
    std::filesystem::permissions(dir_ + "/out", std::filesystem::perms::all);
    std::filesystem::copy(std::string(GPUFED_SOURCE_DIR) + "/examples/slurm-burst", dir_ + "/repo",
                          std::filesystem::copy_options::recursive);
    std::string clusters = Read(dir_ + "/repo/clusters.yaml");
    clusters = std::regex_replace(clusters, std::regex("http://127\\.0\\.0\\.1:6820"), SlurmCluster::Endpoint());
    clusters = std::regex_replace(clusters, std::regex("timeout: 5s"), "timeout: 2s");
    Write(dir_ + "/repo/clusters.yaml", clusters);
    std::string policies = Read(dir_ + "/repo/policies.yaml");
    Write(dir_ + "/repo/policies.yaml",
          std::regex_replace(policies, std::regex("burst: \\{.*\\}"), "burst: {queueWait: 2s, queueDepth: 1}"));
    Write(dir_ + "/repo/workloads/lab.yaml", R"(apiVersion: gpufed/v1alpha1
kind: Workload
metadata:
  name: ckpt-train
spec:
  tenant: lab
  type: training
  resources: {gpus: 2, cpu: 1}
  durationHint: 10m
  data: {sensitivity: internal}
  checkpoint: {enabled: true, interval: 1m}
  run:
    command: [bash, -c, 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; sleep 600']
    workingDir: )" + dir_ + "/out\n");
    ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry_).ok());
    ASSERT_TRUE(connectors::slurm::RegisterSlurmConnector(registry_).ok());
  }
  void TearDown() override {
    SlurmCluster::StartController();  // leave Slurm whole for the next test
  }

  // Passes every 200 ms until `done` holds or `limit_s` passes.
  template <typename Pred>
  bool PassUntil(reconcile::Controller& c, Pred done, int limit_s) {
    auto deadline = Steady::now() + std::chrono::seconds(limit_s);
    while (Steady::now() < deadline) {
      Result<reconcile::PassStats> s = c.Pass();
      EXPECT_TRUE(s.ok() || s.status().code() == StatusCode::kUnavailable) << s.status().ToString();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  static bool Healthy(reconcile::Controller& c, const std::string& cluster) {
    for (const auto& j : c.Clusters()) {
      if (j.value("name", "") == cluster) return j.value("healthy", false);
    }
    return false;
  }

  std::string dir_;
  connectors::ConnectorRegistry registry_;
  gpufed::SystemClock clock_;
};

TEST_F(SlurmReconcile, OutageTurnsClusterUnhealthyRequeuesOnCloudAndRecovers) {
  runtime::AppOptions options;
  options.config_dir = dir_ + "/repo";
  options.state_dir = dir_ + "/state";
  options.reconcile.unhealthy_grace = Duration::FromSeconds(4);
  options.clock = &clock_;
  options.handle_signals = false;
  Result<std::unique_ptr<runtime::App>> opened = runtime::App::Open(options, registry_, nullptr);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  reconcile::Controller& c = (*opened)->controller();
  auto record = [&] { return *c.Get({"", "ckpt-train"}, ""); };

  ASSERT_TRUE(PassUntil(c, [&] { return record().state == store::WorkloadState::kRunning; }, 30)) << record().reason;
  EXPECT_EQ(record().cluster, "onprem-slurm");
  EXPECT_TRUE(Healthy(c, "onprem-slurm"));
  // The negotiated API is what `gpufed get clusters` and /metrics show.
  for (const auto& j : c.Clusters()) {
    if (j.value("name", "") != "onprem-slurm") continue;
    EXPECT_EQ(j.value("api_version", ""), SlurmCluster::NegotiatedVersion());
    EXPECT_EQ(j.value("api", "").rfind(
                  "slurmrestd API " + SlurmCluster::NegotiatedVersion() + " (Slurm " + SlurmCluster::SlurmRelease(), 0),
              0u)
        << j.dump();
  }
  EXPECT_NE(c.Metrics().find("gpufed_cluster_api_info{cluster=\"onprem-slurm\",api_version=\"" +
                             SlurmCluster::NegotiatedVersion() + "\"} 1"),
            std::string::npos);

  ASSERT_TRUE(SlurmCluster::StopController());
  auto t0 = Steady::now();
  ASSERT_TRUE(PassUntil(c, [&] { return !Healthy(c, "onprem-slurm"); }, 20));
  double unhealthy_after = std::chrono::duration<double>(Steady::now() - t0).count();
  // Grace (4 s) plus at most one backed-off observe (2 s timeout) and a pass.
  EXPECT_LT(unhealthy_after, 4 + 2 + 4.0);
  ASSERT_TRUE(PassUntil(
      c, [&] { return record().cluster == "eu-cloud" && record().attempt == 2; }, 20))
      << record().reason;

  ASSERT_TRUE(SlurmCluster::StartController());
  EXPECT_TRUE(PassUntil(c, [&] { return Healthy(c, "onprem-slurm"); }, 60));
  EXPECT_EQ(record().cluster, "eu-cloud");
  std::cerr << "unhealthy after " << unhealthy_after << " s; " << record().reason << "\n";
}

}  // namespace
}  // namespace gpufed

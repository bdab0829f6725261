// The reconcile loop over a real Slurm (22.05 or 24.11) and a simulated cloud, through
// partial outages: slurmctld stops while slurmd keeps running the job.
// - Shorter than the cluster's lostAfter: unhealthy (nothing new goes there), but the job
//   stays its attempt; Slurm answers again and the job ends once, as attempt 1.
// - Longer: the checkpointable workload is requeued on the cloud; when Slurm answers
//   again the attempt-1 job is cancelled at once, journalled, and metered by the run time
//   Slurm records for it (the whole outage), not by when gpufed stopped hearing of it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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
    ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry_).ok());
    ASSERT_TRUE(connectors::slurm::RegisterSlurmConnector(registry_).ok());
  }
  // The cluster's spec.health, and the one workload the repository holds.
  void Health(const std::string& unhealthy_after, const std::string& lost_after) {
    std::string clusters = Read(dir_ + "/repo/clusters.yaml");
    clusters = std::regex_replace(clusters, std::regex("unhealthyAfter: 2m"), "unhealthyAfter: " + unhealthy_after);
    clusters = std::regex_replace(clusters, std::regex("lostAfter: 10m"), "lostAfter: " + lost_after);
    Write(dir_ + "/repo/clusters.yaml", clusters);
  }
  void Workload(const std::string& name, const std::string& checkpoint, int seconds) {
    Write(dir_ + "/repo/workloads/lab.yaml", R"(apiVersion: gpufed/v1alpha1
kind: Workload
metadata:
  name: )" + name + R"(
spec:
  tenant: lab
  type: training
  resources: {gpus: 2, cpu: 1}
  durationHint: 10m
  data: {sensitivity: internal}
)" + checkpoint + R"(  run:
    command: [bash, -c, 'echo "CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; sleep )" +
                                                 std::to_string(seconds) + R"(']
    workingDir: )" + dir_ + "/out\n");
  }
  // Until the node has nothing on it (an earlier test's cancelled job may still be
  // completing): otherwise the burst policy sends the work to the cloud.
  static bool WaitNodeIdle() {
    const std::string cmd = "'" + SlurmCluster::State() + "/bin/slurm' sinfo -h -N -o %T 2>/dev/null";
    auto deadline = Steady::now() + std::chrono::seconds(30);
    while (Steady::now() < deadline) {
      std::string out;
      if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[256];
        while (fgets(buf, sizeof(buf), p)) out += buf;
        pclose(p);
      }
      if (out == "idle\n") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }
  Result<std::unique_ptr<runtime::App>> Open() {
    EXPECT_TRUE(WaitNodeIdle()) << "gpunode1 is not idle";
    runtime::AppOptions options;
    options.config_dir = dir_ + "/repo";
    options.state_dir = dir_ + "/state";
    options.clock = &clock_;
    options.handle_signals = false;
    return runtime::App::Open(options, registry_, nullptr);
  }
  // The Slurm jobs whose name carries `workload`, any state (slurmctld keeps ended ones a
  // few minutes, from earlier runs too): "<id> <name> <state>" lines.
  static std::vector<std::string> SlurmJobs(const std::string& workload) {
    std::string cmd = "'" + SlurmCluster::State() + "/bin/slurm' squeue -h -t all -o '%i %j %T' 2>/dev/null";
    std::vector<std::string> out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[512];
      while (fgets(buf, sizeof(buf), p)) {
        std::string line(buf);
        while (!line.empty() && line.back() == '\n') line.pop_back();
        if (line.find(workload) != std::string::npos) out.push_back(line);
      }
      pclose(p);
    }
    return out;
  }
  static std::vector<store::AttemptRow> AttemptsOf(reconcile::Controller& c, const std::string& uid) {
    std::vector<store::AttemptRow> out;
    Result<std::vector<store::AttemptRow>> all = c.store()->Attempts();
    if (all.ok()) {
      for (const store::AttemptRow& a : *all) {
        if (a.uid == uid) out.push_back(a);
      }
    }
    return out;
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

TEST_F(SlurmReconcile, OutagePastLostAfterRequeuesOnTheCloudAndCancelsTheOldJobWhenSlurmAnswers) {
  Health("4s", "8s");
  Workload("ckpt-train", "  checkpoint: {enabled: true, interval: 1m}\n", 600);
  Result<std::unique_ptr<runtime::App>> opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  reconcile::Controller& c = (*opened)->controller();
  auto record = [&] { return *c.Get({"", "ckpt-train"}, ""); };

  ASSERT_TRUE(PassUntil(c, [&] { return record().state == store::WorkloadState::kRunning; }, 30)) << record().reason;
  EXPECT_EQ(record().cluster, "onprem-slurm");
  EXPECT_TRUE(Healthy(c, "onprem-slurm"));
  const std::string uid = record().uid;
  const std::string first_key = record().ActionKey();
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
  auto stopped = Steady::now();
  ASSERT_TRUE(PassUntil(c, [&] { return !Healthy(c, "onprem-slurm"); }, 20));
  double unhealthy_after = std::chrono::duration<double>(Steady::now() - stopped).count();
  // unhealthyAfter (4 s) counts from the first failed observe: a pass and a timeout (2 s) late at most.
  EXPECT_LT(unhealthy_after, 4 + 2 + 4.0);
  EXPECT_EQ(record().attempt, 1) << "unhealthy is not lost: " << record().reason;
  ASSERT_TRUE(PassUntil(
      c, [&] { return record().cluster == "eu-cloud" && record().attempt == 2; }, 30))
      << record().reason;
  Result<std::vector<store::Transition>> history = c.store()->History(uid);
  ASSERT_TRUE(history.ok());
  bool said_why = false;
  for (const store::Transition& t : *history) {
    said_why |= t.to == "Requeued" && t.reason.find("has not answered for") != std::string::npos;
  }
  EXPECT_TRUE(said_why) << "the requeue says the cluster has not answered for its lostAfter";
  EXPECT_TRUE(AttemptsOf(c, uid).empty()) << "attempt 1 is booked when Slurm reports its end, not before";

  ASSERT_TRUE(SlurmCluster::StartController());
  const double outage_s = std::chrono::duration<double>(Steady::now() - stopped).count();
  // Within a few passes of Slurm answering: attempt 1's job is cancelled and booked.
  ASSERT_TRUE(PassUntil(c, [&] { return !AttemptsOf(c, uid).empty(); }, 40));
  std::vector<store::AttemptRow> attempts = AttemptsOf(c, uid);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].attempt, 1);
  EXPECT_EQ(attempts[0].outcome, "lost");
  EXPECT_EQ(attempts[0].cluster, "onprem-slurm");
  // Slurm's own run time: the job ran through the whole outage on slurmd (2 GPUs), well
  // past the seconds gpufed had seen before slurmctld stopped.
  EXPECT_GE(attempts[0].gpu_seconds, 2 * (outage_s - 2)) << "outage " << outage_s << " s";
  EXPECT_LE(attempts[0].gpu_seconds, 2 * (outage_s + 60)) << "outage " << outage_s << " s";
  Result<std::optional<store::ActionRow>> cancel = c.store()->GetAction("cancel", first_key);
  ASSERT_TRUE(cancel.ok() && cancel->has_value()) << "the cancel is in the action ledger";
  EXPECT_EQ((*cancel)->state, store::ActionState::kApplied);
  for (const std::string& job : SlurmJobs("ckpt-train")) {
    EXPECT_EQ(job.find("RUNNING"), std::string::npos) << job;
  }
  EXPECT_TRUE(Healthy(c, "onprem-slurm"));
  EXPECT_EQ(record().cluster, "eu-cloud");
  EXPECT_EQ(record().attempt, 2);
  std::cerr << "unhealthy after " << unhealthy_after << " s; outage " << outage_s << " s; attempt 1 metered "
            << attempts[0].gpu_seconds << " GPU-s; " << record().reason << "\n";
}

TEST_F(SlurmReconcile, OutageShorterThanLostAfterKeepsTheJobAndRunsItOnce) {
  Health("2s", "10m");
  Workload("once", "", 20);
  const std::vector<std::string> earlier = SlurmJobs("once");
  Result<std::unique_ptr<runtime::App>> opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  reconcile::Controller& c = (*opened)->controller();
  auto record = [&] { return *c.Get({"", "once"}, ""); };

  ASSERT_TRUE(PassUntil(c, [&] { return record().state == store::WorkloadState::kRunning; }, 30)) << record().reason;
  ASSERT_EQ(record().cluster, "onprem-slurm") << c.Explain({"", "once"}, "")->dump() << c.Clusters().dump();
  ASSERT_TRUE(SlurmCluster::StopController());
  ASSERT_TRUE(PassUntil(c, [&] { return !Healthy(c, "onprem-slurm"); }, 20));
  // Unhealthy for a while: the job is still attempt 1 on Slurm, nothing else runs it.
  auto unhealthy = Steady::now();
  PassUntil(c, [&] { return Steady::now() - unhealthy > std::chrono::seconds(4); }, 10);
  EXPECT_EQ(record().cluster, "onprem-slurm") << record().reason;
  EXPECT_EQ(record().attempt, 1);
  ASSERT_TRUE(SlurmCluster::StartController());
  // Seen healthy at the next pass: no error backoff to wait out.
  ASSERT_TRUE(PassUntil(c, [&] { return Healthy(c, "onprem-slurm"); }, 10));
  ASSERT_TRUE(PassUntil(c, [&] { return record().state == store::WorkloadState::kSucceeded; }, 60)) << record().reason;
  EXPECT_EQ(record().attempt, 1);
  std::vector<store::AttemptRow> attempts = AttemptsOf(c, record().uid);
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].outcome, "succeeded");
  EXPECT_GE(attempts[0].gpu_seconds, 2 * 19.0);  // sleep 20 on 2 GPUs, by Slurm's clock
  std::vector<std::string> jobs = SlurmJobs("once");
  auto id = [](const std::string& line) { return line.substr(0, line.find(' ')); };
  std::erase_if(jobs, [&](const std::string& j) {
    return std::any_of(earlier.begin(), earlier.end(), [&](const std::string& e) { return id(e) == id(j); });
  });
  EXPECT_EQ(jobs.size(), 1u) << "one Slurm job for the workload";
}

}  // namespace
}  // namespace gpufed

// Clusters added, changed and removed by a change to the watched repository while the
// runtime of `gpufed run` runs: no restart, each change journalled.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>

#include "connectors/local/local_connector.h"
#include "controller/audit/env.h"
#include "controller/audit/reader.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

using store::WorkloadState;

const char* kOslo = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: oslo-onprem}
spec:
  provider: onprem
  region: eu-north
  zone: eu
  connector: {type: sim, qps: QPS}
  nodePools:
    - {name: l40s, count: 2, gpu: {model: L40S, count: 4, memory: 48Gi}}
  pricing: {currency: EUR, gpuHour: {L40S: "0.80"}}
)";

std::string Oslo(int qps) {
  std::string text = kOslo;
  text.replace(text.find("QPS"), 3, std::to_string(qps));
  return text;
}

std::string L40sWorkload(const std::string& name, const std::string& duration) {
  return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
         "}\nspec:\n  tenant: alpha\n  type: inference\n  resources: {gpus: 1, gpuModels: [L40S]}\n  durationHint: " +
         duration + "\n";
}

// Every journal record of `kind`, in order.
std::vector<nlohmann::json> Records(const std::string& state_dir, const std::string& kind) {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  std::vector<nlohmann::json> out;
  Status read = audit::ForEachJournalLine(*env, state_dir + "/audit", [&](std::string_view line) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("kind", "") == kind) out.push_back(std::move(j));
    return Status::Ok();
  });
  EXPECT_TRUE(read.ok()) << read.ToString();
  return out;
}

std::vector<std::string> Changes(const std::string& state_dir) {
  std::vector<std::string> out;
  for (const nlohmann::json& r : Records(state_dir, "cluster-connector")) {
    out.push_back(r.value("cluster", "") + ":" + r.value("change", ""));
  }
  return out;
}

// Steps the runtime until `done` holds (at most `passes` passes).
template <typename Pred>
bool StepUntil(Harness& h, int passes, Pred done) {
  for (int i = 0; i < passes; ++i) {
    Result<reconcile::PassStats> s = h.app->Step();
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    if (done()) return true;
    h.Step();
  }
  return false;
}

TEST(FleetChange, ASimClusterAddedChangedAndRemovedInGitWorksWithoutARestart) {
  std::string dir = FreshDir("fleet_change_sim");
  Harness h;
  ASSERT_TRUE(h.OpenRuntime(dir + "/repo", dir + "/state", "").ok());
  reconcile::Controller& c = h.Ctl();
  ASSERT_TRUE(h.app->Step().ok());

  // Added: the next pass has a connector; the workload is placed there within two passes.
  std::ofstream(dir + "/repo/oslo.yaml") << Oslo(50);
  ASSERT_TRUE(c.Submit(L40sWorkload("render", "2h"), "render.yaml", By("")).ok());
  int passes = 0;
  EXPECT_TRUE(StepUntil(h, 2, [&] { return ++passes, h.Get("render").cluster == "oslo-onprem"; }))
      << h.Get("render").reason;
  EXPECT_EQ(Changes(h.state_dir()), (std::vector<std::string>{"oslo-onprem:added"}));
  nlohmann::json clusters = c.Clusters();
  EXPECT_NE(clusters.dump().find("oslo-onprem"), std::string::npos);

  // Changed while the render runs: the new connector takes over and still sees it.
  ASSERT_TRUE(StepUntil(h, 5, [&] { return h.Get("render").state == WorkloadState::kRunning; }));
  std::ofstream(dir + "/repo/oslo.yaml") << Oslo(20);
  ASSERT_TRUE(h.app->Step().ok());
  EXPECT_EQ(Changes(h.state_dir()), (std::vector<std::string>{"oslo-onprem:added", "oslo-onprem:replaced"}));
  EXPECT_EQ(h.Get("render").state, WorkloadState::kRunning) << h.Get("render").reason;
  EXPECT_EQ(h.Get("render").attempt, 1);

  // Removed while it runs: no new work goes there, the running attempt is observed to its end.
  std::filesystem::remove(dir + "/repo/oslo.yaml");
  ASSERT_TRUE(h.app->Step().ok());
  std::vector<nlohmann::json> activated = Records(h.state_dir(), "policy-activated");
  ASSERT_FALSE(activated.empty());
  EXPECT_EQ(activated.back()["removedClustersWithWork"].dump(), R"([{"activeAttempts":1,"cluster":"oslo-onprem"}])");
  std::vector<nlohmann::json> removed = Records(h.state_dir(), "cluster-connector");
  ASSERT_EQ(removed.size(), 3u);
  EXPECT_EQ(removed[2]["change"], "removed");
  EXPECT_EQ(removed[2]["activeAttempts"], 1);
  ASSERT_TRUE(c.Submit(L40sWorkload("late", "1h"), "late.yaml", By("")).ok());
  ASSERT_TRUE(StepUntil(h, 200, [&] { return h.Get("render").state == WorkloadState::kSucceeded; }))
      << h.Get("render").reason;
  EXPECT_EQ(h.Get("render").attempt, 1) << "never requeued: it ran once, to its end";
  EXPECT_EQ(h.Get("render").cluster, "oslo-onprem");
  EXPECT_TRUE(h.Get("late").cluster.empty()) << "placed on a removed cluster: " << h.Get("late").cluster;
  EXPECT_EQ(Changes(h.state_dir()), (std::vector<std::string>{"oslo-onprem:added", "oslo-onprem:replaced",
                                                              "oslo-onprem:removed", "oslo-onprem:retired"}));
  std::vector<nlohmann::json> metered = Records(h.state_dir(), "attempt-metered");
  ASSERT_FALSE(metered.empty());
  EXPECT_EQ(metered.back()["outcome"], "succeeded");
}

TEST(FleetChange, ARevisionWhoseNewClusterHasNoWorkingConnectorIsRejectedWhole) {
  std::string dir = FreshDir("fleet_change_bad");
  Harness h;
  ASSERT_TRUE(h.OpenRuntime(dir + "/repo", dir + "/state", "").ok());
  const std::string before = h.Ctl().active_revision();
  // A kind of connector this build does not have.
  std::string bad = Oslo(50);
  bad.replace(bad.find("type: sim"), 9, "type: kubernetes, kubeconfig: /etc/gpufed/kubeconfig");
  std::ofstream(dir + "/repo/oslo.yaml") << bad;
  Status s = h.Ctl().Reload();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("oslo-onprem"), std::string::npos) << s.ToString();
  EXPECT_EQ(h.Ctl().active_revision(), before);
  EXPECT_TRUE(Changes(h.state_dir()).empty());
  std::vector<nlohmann::json> rejected = Records(h.state_dir(), "policy-rejected");
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0]["problems"].dump().find("connector"), std::string::npos) << rejected[0].dump();
}

// A local cluster (real processes) added, changed while its job runs, then removed.
TEST(FleetChange, ALocalClusterFollowsTheRepositoryAndItsRunningJobIsSeenToTheEnd) {
  std::string dir = FreshDir("fleet_change_local");
  ::chmod(dir.c_str(), 0755);
  const std::string gate = dir + "/gate";
  Harness h;
  ASSERT_TRUE(connectors::local::RegisterLocalConnector(h.registry).ok());
  ASSERT_TRUE(h.OpenRuntime(dir + "/repo", dir + "/state", "").ok());
  reconcile::Controller& c = h.Ctl();
  const std::string user =
      ::geteuid() == 0 ? "local.gpufed.io/run-as-user: nobody" : "local.gpufed.io/allow-controller-user: \"true\"";
  auto laptop = [&](const std::string& grace) {
    return "apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata:\n  name: laptop\n  annotations:\n    " + user +
           "\n    local.gpufed.io/job-root: " + dir +
           "/jobs\n    local.gpufed.io/gpu-env: FAKE_GPUS\n"
           "    local.gpufed.io/grace: " +
           grace +
           "\nspec:\n  provider: onprem\n  region: eu-central\n  zone: eu\n"
           "  connector: {type: local, qps: 1000}\n  nodePools:\n    - {name: box, count: 1, gpu: {model: fake, count: "
           "2, memory: 8Gi}}\n"
           "  pricing: {currency: EUR, gpuHour: {fake: \"0.10\"}}\n";
  };
  std::ofstream(dir + "/repo/laptop.yaml") << laptop("200ms");
  const std::string job =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: waits}\nspec:\n  tenant: alpha\n"
      "  type: inference\n  resources: {gpus: 1, gpuModels: [fake]}\n  durationHint: 1h\n"
      "  run: {command: [sh, -c, 'while [ ! -e " +
      gate + " ]; do sleep 0.02; done']}\n";
  ASSERT_TRUE(c.Submit(job, "waits.yaml", By("")).ok());
  // Real processes: a bounded wait for the job to run.
  auto poll = [&](WorkloadState want) {
    for (int i = 0; i < 500; ++i) {
      Result<reconcile::PassStats> s = h.app->Step();
      EXPECT_TRUE(s.ok()) << s.status().ToString();
      if (h.Get("waits").state == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  ASSERT_TRUE(poll(WorkloadState::kRunning)) << h.Get("waits").reason;
  EXPECT_EQ(h.Get("waits").cluster, "laptop");

  std::ofstream(dir + "/repo/laptop.yaml") << laptop("300ms");  // changed: a new connector
  ASSERT_TRUE(h.app->Step().ok());
  std::filesystem::remove(dir + "/repo/laptop.yaml");  // then removed while the job runs
  ASSERT_TRUE(h.app->Step().ok());
  EXPECT_EQ(h.Get("waits").state, WorkloadState::kRunning) << h.Get("waits").reason;
  std::ofstream(gate) << "go";
  ASSERT_TRUE(poll(WorkloadState::kSucceeded)) << h.Get("waits").reason;
  EXPECT_EQ(h.Get("waits").attempt, 1);
  // The replacing connector reaped the wrapper its predecessor started.
  int status = 0;
  EXPECT_LE(::waitpid(-1, &status, WNOHANG), 0) << "a job's wrapper was left a zombie";
  ASSERT_TRUE(h.app->Step().ok());
  EXPECT_EQ(Changes(h.state_dir()),
            (std::vector<std::string>{"laptop:added", "laptop:replaced", "laptop:removed", "laptop:retired"}));
}

}  // namespace
}  // namespace gpufed::testing

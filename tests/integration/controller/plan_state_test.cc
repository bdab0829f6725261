// `gpufed plan --state` is the controller opened read-only: on a copy of a stopped
// controller's state folder (simulated clusters and a local one with a job still
// running) it prints what the next pass would decide and leaves every file as it was,
// byte for byte, mode for mode, with no file added or removed; a torn ledger line stays
// torn (a read-write open would cut it off).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "connectors/local/local_connector.h"
#include "controller/cli/cli.h"
#include "tests/integration/controller/fleet.h"
#include "tests/testutil/folder_print.h"

namespace gpufed::testing {
namespace {

namespace fs = std::filesystem;

// A local cluster beside the fleet's two simulated ones: real processes, two fake GPUs.
std::string LabCluster(const std::string& job_root) {
  const std::string user =
      ::geteuid() == 0 ? "local.gpufed.io/run-as-user: nobody" : "local.gpufed.io/allow-controller-user: \"true\"";
  return "apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata:\n  name: lab\n  annotations:\n    " + user +
         "\n    local.gpufed.io/job-root: " + job_root +
         "\n    local.gpufed.io/gpu-env: FAKE_GPUS\nspec:\n  provider: onprem\n  region: eu-central\n  zone: eu\n"
         "  connector: {type: local, qps: 1000}\n  nodePools:\n"
         "    - {name: box, count: 1, gpu: {model: fake, count: 2, memory: 8Gi}}\n"
         "  pricing: {currency: EUR, gpuHour: {fake: \"0.10\"}}\n";
}

// A job on the lab that runs until `gate` exists, so it is running whenever it is looked at.
std::string GatedLabJob(const std::string& gate) {
  return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: lab-job}\nspec:\n  tenant: alpha\n"
         "  type: inference\n  resources: {gpus: 1, gpuModels: [fake]}\n  durationHint: 1h\n"
         "  run: {command: [sh, -c, 'while [ ! -e " +
         gate + " ]; do sleep 0.05; done']}\n";
}

// Opens the gate of the lab's job and reaps its wrapper (this process's child: the
// controller launched it), waiting for its exit rather than for time. Runs even when an
// assertion ended the test early.
struct GatedJob {
  std::string gate;
  int wrapper = 0;
  ~GatedJob() {
    std::ofstream(gate) << "go";
    if (wrapper > 0) ::waitpid(wrapper, nullptr, 0);
  }
};

// Runs `gpufed ARGS...` in process with the connectors main registers for these clusters;
// returns the exit code, stdout in *out.
int RunCli(std::vector<std::string> args, const connectors::ConnectorRegistry& registry, std::string* out) {
  args.insert(args.begin(), "gpufed");
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  int rc = cli::Main(static_cast<int>(argv.size()), argv.data(), &registry);
  std::cout.rdbuf(old);
  *out = captured.str();
  return rc;
}

class PlanState : public ::testing::Test {
 protected:
  // Runs a controller on a repository with simulated and local clusters until work has
  // finished on one, runs on the others and more waits; stops it; copies its state folder.
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = FreshDir(std::string("plan_state_") + info->name());
    ::chmod(dir_.c_str(), 0755);  // the job user passes through it to the job root
    job_.gate = dir_ + "/gate";
    repo_ = dir_ + "/repo";
    std::ofstream(repo_ + "/lab.yaml") << LabCluster(dir_ + "/jobs");
    std::ofstream(repo_ + "/work.yaml") << WorkloadYaml("short", "alpha", 2, "10m") << "---\n"
                                        << WorkloadYaml("long", "alpha", 4, "8h") << "---\n"
                                        << WorkloadYaml("wide", "alpha", 8, "4h") << "---\n"
                                        << GatedLabJob(job_.gate);
    ASSERT_TRUE(connectors::local::RegisterLocalConnector(registry_).ok());
    ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry_).ok());
    {
      Harness h;
      ASSERT_TRUE(connectors::local::RegisterLocalConnector(h.registry).ok());
      Status opened = h.Open(dir_);
      ASSERT_TRUE(opened.ok()) << opened.ToString();
      // Virtual time, one event at a time: deterministic but for the lab's job, which is
      // running from its launch until the gate opens.
      for (int i = 0; i < 50 && !(h.Get("short").state == store::WorkloadState::kSucceeded &&
                                  h.Get("wide").state == store::WorkloadState::kRunning &&
                                  h.Get("lab-job").state == store::WorkloadState::kRunning);
           ++i) {
        Result<reconcile::PassStats> pass = h.controller->Pass();
        ASSERT_TRUE(pass.ok()) << pass.status().ToString();
        h.Step();
      }
      ASSERT_EQ(h.Get("short").state, store::WorkloadState::kSucceeded) << h.Get("short").reason;
      ASSERT_EQ(h.Get("long").state, store::WorkloadState::kRunning) << h.Get("long").reason;
      ASSERT_EQ(h.Get("wide").state, store::WorkloadState::kRunning) << h.Get("wide").reason;
      ASSERT_EQ(h.Get("lab-job").state, store::WorkloadState::kRunning) << h.Get("lab-job").reason;
      // Submitted after the last pass: the next pass plans them.
      for (const char* name : {"next-1", "next-2"}) {
        Result<store::WorkloadRecord> submitted =
            h.Ctl().Submit(WorkloadYaml(name, "alpha", 4, "1h"), std::string(name) + ".yaml", By(""));
        ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
      }
    }
    // The controller stopped cleanly: its store is checkpointed and has no -wal.
    const std::string books = dir_ + "/state/connectors/lab/jobs";
    ASSERT_EQ(std::distance(fs::directory_iterator(books), fs::directory_iterator()), 1);
    std::ifstream pid(fs::directory_iterator(books)->path() / "pid");
    pid >> job_.wrapper;
    ASSERT_GT(job_.wrapper, 0);
    copy_ = dir_ + "/copy";
    fs::copy(dir_ + "/state", copy_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    ::chmod(copy_.c_str(), 0700);  // the job user must not enter a state folder
    ASSERT_TRUE(fs::exists(copy_ + "/gpufed.db"));
    ASSERT_FALSE(fs::exists(copy_ + "/gpufed.db-wal"));
    ASSERT_TRUE(fs::exists(copy_ + "/connectors/onprem/ledger.log"));
    ASSERT_TRUE(fs::exists(copy_ + "/connectors/lab/ledger.log"));
  }

  // `gpufed plan --config REPO --state COPY --output json`: its decisions, by workload.
  std::map<std::string, nlohmann::json> Plan() {
    std::string out;
    const int rc = RunCli({"plan", "--config", repo_, "--state", copy_, "--output", "json"}, registry_, &out);
    EXPECT_EQ(rc, 0) << out;
    std::map<std::string, nlohmann::json> by_workload;
    nlohmann::json plan = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(plan.is_object()) << out;
    if (!plan.is_object()) return by_workload;
    for (const nlohmann::json& d : plan["decisions"]) by_workload[d.value("workload", "")] = d;
    return by_workload;
  }

  // The plan of the next pass: the two new submissions, and none of the running or
  // finished work (the next pass plans waiting work only).
  static void ExpectSensible(const std::map<std::string, nlohmann::json>& plan) {
    ASSERT_EQ(plan.size(), 2u) << nlohmann::json(plan).dump(2);
    for (const char* name : {"next-1", "next-2"}) {
      ASSERT_TRUE(plan.count(name)) << name;
      const std::string outcome = plan.at(name).value("outcome", "");
      EXPECT_TRUE(outcome == "placed" || outcome == "queued") << plan.at(name).dump();
    }
  }

  std::string dir_, repo_, copy_;
  GatedJob job_;
  connectors::ConnectorRegistry registry_;
};

TEST_F(PlanState, LeavesEveryFileOfACopiedStateFolderByteIdentical) {
  const testutil::FolderPrint before = testutil::PrintFolder(copy_);
  ExpectSensible(Plan());
  EXPECT_EQ(testutil::DescribeChanges(before, testutil::PrintFolder(copy_)), "");
  // And again: a second look at the same folder sees the same and changes nothing either.
  ExpectSensible(Plan());
  EXPECT_EQ(testutil::DescribeChanges(before, testutil::PrintFolder(copy_)), "");
}

TEST_F(PlanState, LeavesATornLedgerLineInPlace) {
  // A crash in the middle of an append: a last line without its '\n'. The controller's
  // read-write open cuts it off; plan --state must not.
  const std::string torn = "submit\tnext-9-u9.a1\t{\"workload\":\"nex";
  for (const char* cluster : {"onprem", "lab"}) {
    std::ofstream(copy_ + "/connectors/" + cluster + "/ledger.log", std::ios::app) << torn;
  }
  const testutil::FolderPrint before = testutil::PrintFolder(copy_);
  ExpectSensible(Plan());
  EXPECT_EQ(testutil::DescribeChanges(before, testutil::PrintFolder(copy_)), "");
  for (const char* cluster : {"onprem", "lab"}) {
    std::ifstream in(copy_ + "/connectors/" + cluster + "/ledger.log", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    ASSERT_GE(text.size(), torn.size());
    EXPECT_EQ(text.substr(text.size() - torn.size()), torn) << cluster;
  }
}

}  // namespace
}  // namespace gpufed::testing

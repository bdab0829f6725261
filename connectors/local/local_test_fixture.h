#pragma once
// What the local connector's tests share: a controller state folder laid out as
// `gpufed run` lays it out (<state>/connectors/<cluster>, the state folder private), a
// job root outside it, and a Cluster whose jobs run as `nobody` (as root) or, for a
// non-root test run, as the test's own user with the explicit allow.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "connectors/local/local_connector.h"

namespace gpufed::connectors::local::testing {

struct Fixture {
  std::string dir;        // the test's folder, 0755
  std::string state;      // the controller's state folder, 0700
  std::string connector;  // the connector's folder, <state>/connectors/laptop
  std::string job_root;   // <dir>/jobs, outside the state folder
  model::Cluster cluster;
  ConnectorRegistry registry;
  SystemClock clock;

  explicit Fixture(const std::string& name) {
    dir = (std::filesystem::path(::testing::TempDir()) / ("local_connector_" + name)).lexically_normal().string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    ::chmod(dir.c_str(), 0755);
    state = dir + "/state";
    std::filesystem::create_directories(state);
    ::chmod(state.c_str(), 0700);
    connector = state + "/connectors/laptop";
    job_root = dir + "/jobs";
    cluster.metadata.name = "laptop";
    cluster.connector.type = "local";
    cluster.connector.qps = 0;  // the tests poll faster than the default limit
    cluster.metadata.annotations["local.gpufed.io/gpu-env"] = "FAKE_GPUS";
    cluster.metadata.annotations["local.gpufed.io/grace"] = "200ms";
    cluster.metadata.annotations["local.gpufed.io/job-root"] = job_root;
    if (::geteuid() == 0) {
      cluster.metadata.annotations["local.gpufed.io/run-as-user"] = "nobody";
    } else {
      cluster.metadata.annotations["local.gpufed.io/allow-controller-user"] = "true";
    }
    model::NodePool pool;
    pool.name = "box";
    pool.count = 1;
    pool.gpu.model = "fake";
    pool.gpu.count = 2;
    cluster.node_pools.push_back(pool);
    EXPECT_TRUE(RegisterLocalConnector(registry).ok());
  }
  Result<std::unique_ptr<Connector>> TryMake() { return registry.Create(cluster, {&clock, connector, {}}); }
  std::unique_ptr<Connector> Make() {
    auto c = TryMake();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  Action Job(const std::string& key, std::vector<std::string> command) {
    Action a;
    a.key = key;
    a.workload = key;
    a.nodes = {{"box-0", {1}}};
    a.run.command = std::move(command);
    return a;
  }
  std::string JobDir(const std::string& key) const { return job_root + "/" + key; }
  std::string Book(const std::string& key) const { return connector + "/jobs/" + key; }
  std::string Output(const std::string& key) const { return Slurp(JobDir(key) + "/gpufed-output.log"); }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // Polls the connector until the job reaches a finished state (bounded: ~10 s).
  ObservedWorkload WaitFinished(Connector& c, const std::string& key) {
    for (int i = 0; i < 1000; ++i) {
      Result<Observation> o = c.Observe({&clock});
      if (o.ok()) {
        for (const auto& w : o->workloads) {
          if (w.key == key && IsFinished(w.state)) return w;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << key << " never finished";
    return {};
  }
  // Polls until `path` exists (bounded: ~10 s): a job says it got somewhere.
  static bool WaitForFile(const std::string& path) {
    for (int i = 0; i < 1000; ++i) {
      if (std::filesystem::exists(path)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

}  // namespace gpufed::connectors::local::testing

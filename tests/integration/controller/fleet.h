#pragma once
// A small federation for the controller's integration tests, written into a temp
// folder: an on-prem cluster with one 8-GPU node and an elastic cloud, two tenants,
// a burst policy. Helpers run the App of `gpufed run` in virtual time.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "connectors/sim/sim_connector.h"
#include "controller/common/clock.h"
#include "controller/reconcile/controller.h"
#include "controller/runtime/app.h"

namespace gpufed::testing {

inline constexpr const char* kFleet = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: onprem}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: dgx, count: 1, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
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
    - {name: p4d, count: 1, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  elasticity: {maxNodes: 3, provisionDelay: 5m, idleTimeout: 10m}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "3.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: alpha}
spec:
  weight: 1
  budget: {period: monthly, limit: "10000 EUR"}
  maxPriority: normal
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: beta}
spec:
  weight: 1
  budget: {period: monthly, limit: "5 EUR", alertAt: [0.5, 0.9]}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: burst}
spec:
  enforcement: deny
  rules:
    - name: restricted-stays-onprem
      when: {data.sensitivity: restricted}
      require: {cluster.provider: onprem}
  burst: {queueWait: 10m, queueDepth: 2}
  priorityClasses: {low: 100, normal: 500, urgent: 5000}
)";

inline std::string WorkloadYaml(const std::string& name, const std::string& tenant, int gpus,
                                const std::string& duration, const std::string& extra = "") {
  return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name + "}\nspec:\n  tenant: " + tenant +
         "\n  type: training\n  resources: {gpus: " + std::to_string(gpus) +
         ", gpuModels: [A100-80GB]}\n  durationHint: " + duration + "\n" + extra;
}

// Whom the tests' in-process submissions come from: a tenant ("" for an admin) and the
// principal the journal records (an API token's name in a real run).
inline reconcile::Controller::Requester By(const std::string& tenant) {
  return {tenant, tenant.empty() ? "test-admin" : tenant + "-test"};
}

inline std::string FreshDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/gpufed_it_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo");
  std::ofstream(dir + "/repo/fleet.yaml") << kFleet;
  return dir;
}

struct Harness {
  gpufed::ManualClock clock;
  connectors::ConnectorRegistry registry;
  // The App `gpufed run` is, stepped on `clock`. Opened without a scenario, tests drive
  // its loop pass by pass (`controller->Pass()`); with one, `app->Step()` plays it.
  std::unique_ptr<runtime::App> app;
  reconcile::Controller* controller = nullptr;  // app's loop
  const std::string& state_dir() const { return state_dir_; }
  std::string state_dir_;
  bool stepped_by_app = false;

  reconcile::Controller& Ctl() { return *controller; }

  // Opens a controller on <dir>/repo with state in <dir>/state.
  Status Open(const std::string& dir, const std::string& scenario = "") {
    if (!scenario.empty()) return OpenRuntime(dir + "/repo", dir + "/state", scenario);
    runtime::AppOptions o;
    o.config_dir = dir + "/repo";
    o.state_dir = dir + "/state";
    return OpenApp(o);
  }
  // The App of `gpufed run` (scenario included) on `clock`, stepped by App::Step.
  Status OpenRuntime(const std::string& config_dir, const std::string& state_dir, const std::string& scenario) {
    runtime::AppOptions o;
    o.config_dir = config_dir;
    o.state_dir = state_dir;
    o.scenario = scenario;
    stepped_by_app = true;
    return OpenApp(o);
  }
  // Any App on `clock`, without signal handlers (tests set the rest of `o`).
  Status OpenApp(runtime::AppOptions o) {
    Status s = connectors::sim::RegisterSimConnector(registry);
    if (!s.ok() && s.code() != StatusCode::kAlreadyExists) return s;
    o.clock = &clock;
    o.handle_signals = false;
    state_dir_ = o.state_dir;
    Result<std::unique_ptr<runtime::App>> opened = runtime::App::Open(o, registry, nullptr);
    if (!opened.ok()) return opened.status();
    app = std::move(opened).value();
    controller = &app->controller();
    return Status::Ok();
  }
  // Stops the App as `gpufed run` does (controller-stop, the final checkpoint).
  Status Stop(const std::string& reason) { return app->Stop(reason); }
  // Releases the App without a closing record (as a crash would leave the journal).
  void Close() {
    controller = nullptr;
    app.reset();
  }
  // Passes in virtual time until idle, stuck, or `limit` of virtual time.
  Status RunUntilIdle(Duration limit = Duration::FromSeconds(int64_t{48} * 3600)) {
    Duration end = clock.Now() + limit;
    while (clock.Now() < end) {
      Result<reconcile::PassStats> stats = stepped_by_app ? app->Step() : controller->Pass();
      if (!stats.ok()) return stats.status();
      if (stepped_by_app ? app->Idle() || app->Stuck() : controller->Idle() || controller->Stuck()) return Status::Ok();
      Step();
    }
    return Status(StatusCode::kDeadlineExceeded, "not idle in time");
  }
  // Advances to the next event, or at most 5 virtual minutes.
  void Step() {
    Duration next = stepped_by_app ? app->NextEvent() : controller->NextEvent();
    Duration cap = clock.Now() + Duration::FromSeconds(300);
    clock.AdvanceTo(next.millis() == 0 || next > cap ? cap : next);
  }
  store::WorkloadRecord Get(const std::string& name) {
    Result<store::WorkloadRecord> r = Ctl().Get({"", name}, "");
    return r.ok() ? *r : store::WorkloadRecord{};
  }
};

}  // namespace gpufed::testing

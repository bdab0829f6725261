#pragma once
// A leader's App on the shared store (issue 38), for tests of the leader's wiring on a
// real PostgreSQL 15 (controller/ha's fixture: a database per test with the lease table):
// a simulated federation's repository (the quickstart's, say) on a test clock, opened as
// `gpufed run --store` opens it and fenced by a real lease.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "connectors/sim/sim_connector.h"
#include "controller/ha/fence.h"
#include "controller/ha/ha_test_fixture.h"
#include "controller/ha/lease.h"
#include "controller/runtime/app.h"

namespace gpufed::runtime {

class SharedLeaderTest : public ha::HaTest {
 protected:
  void TearDown() override {
    if (app_ != nullptr) (void)app_->Stop("test");
    app_.reset();
    HaTest::TearDown();
  }

  // `holder` takes the lease `lease` (released by whoever held it first).
  ha::FenceToken Take(const std::string& lease, const std::string& holder) {
    Result<ha::LeaseAttempt> taken = ha::TryAcquireOrRenew(*setup_, lease, holder, 0, Duration::FromSeconds(60));
    EXPECT_TRUE(taken.ok() && taken->held) << (taken.ok() ? taken->lease.holder : taken.status().ToString());
    return {lease, holder, taken.ok() ? taken->lease.epoch : 0};
  }
  static std::function<Status(pg::Transaction&)> FenceOf(const ha::FenceToken& token) {
    return [token](pg::Transaction& tx) { return ha::DeferFenceCheck(tx, token); };  // as replica.cc
  }
  std::string Conninfo() const {
    return "host=" + server().socket_dir + " port=" + server().port + " user=gpufed dbname=" + database() +
           " passfile=" + server().passfile;
  }

  // The leader for `token`: `repo`'s App on the shared store, stepped on clock_ through
  // `until` (its repository's workloads and the scenario's queue up and place).
  void StartLeader(const ha::FenceToken& token, const std::string& repo, Duration until) {
    ASSERT_NO_FATAL_FAILURE(OpenLeader(token, repo));
    ASSERT_NO_FATAL_FAILURE(StepThrough(until));
  }
  void OpenLeader(const ha::FenceToken& token, const std::string& repo) {
    Status sim = connectors::sim::RegisterSimConnector(registry_);
    ASSERT_TRUE(sim.ok() || sim.code() == StatusCode::kAlreadyExists) << sim.ToString();
    state_ = ::testing::TempDir() + "/gpufed_shared_leader_" + database();
    std::filesystem::remove_all(state_);
    AppOptions o;
    o.config_dir = repo;
    o.state_dir = state_;
    o.clock = &clock_;
    o.handle_signals = false;
    SharedStore shared;
    shared.uri = Conninfo();
    shared.epoch = token.epoch;
    shared.replica = token.holder;
    shared.fence = FenceOf(token);
    shared.still_leading = [] { return Status::Ok(); };
    shared.status = [] { return nlohmann::json{{"role", "leader"}}; };
    shared.metrics = [] { return std::string(); };
    o.shared = std::move(shared);
    Result<std::unique_ptr<App>> opened = App::Open(o, registry_, nullptr);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    app_ = std::move(opened).value();
  }
  void StepThrough(Duration until) {
    while (clock_.Now() < until) {
      ASSERT_TRUE(app_->Step().ok());
      const Duration next = app_->NextEvent();
      clock_.AdvanceTo(next.millis() == 0 || next > until ? until : next);
    }
    ASSERT_TRUE(app_->Step().ok());
  }

  ManualClock clock_;  // the leader's controller time
  connectors::ConnectorRegistry registry_;
  std::string state_;
  std::unique_ptr<App> app_;
};

}  // namespace gpufed::runtime

// A submission does not wait for a pass: the pass holds the controller's lock from planning
// to the last connector call, and Submit must not need it (issue 19: with 16 clients a
// submission's p99 was one pass, ~0.9 s).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

// The sim connector, except that its first Apply blocks until the test lets it go: the
// pass that calls it is then stopped in the middle, holding the controller's lock.
class GatedConnector : public connectors::Connector {
 public:
  GatedConnector(std::unique_ptr<connectors::Connector> inner, std::promise<void>* entered,
                 std::shared_future<void> release, std::atomic<bool>* armed)
      : inner_(std::move(inner)), entered_(entered), release_(std::move(release)), armed_(armed) {}
  Result<connectors::Observation> Observe(const connectors::CallContext& ctx) override { return inner_->Observe(ctx); }
  Result<connectors::ApplyOutcome> Apply(const connectors::Action& action,
                                         const connectors::CallContext& ctx) override {
    if (armed_->exchange(false)) {
      entered_->set_value();
      release_.wait();
    }
    return inner_->Apply(action, ctx);
  }

 private:
  std::unique_ptr<connectors::Connector> inner_;
  std::promise<void>* entered_;
  std::shared_future<void> release_;
  std::atomic<bool>* armed_;
};

TEST(SubmitDuringPass, ASubmissionIsAcceptedWhileAPassHoldsTheController) {
  connectors::ConnectorRegistry sim;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(sim).ok());
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> armed{true};
  Harness h;
  ASSERT_TRUE(h.registry
                  .Register("sim",
                            [&](const model::Cluster& cluster, const connectors::FactoryContext& ctx)
                                -> Result<std::unique_ptr<connectors::Connector>> {
                              Result<std::unique_ptr<connectors::Connector>> inner = sim.Create(cluster, ctx);
                              if (!inner.ok()) return inner.status();
                              return std::unique_ptr<connectors::Connector>(
                                  std::make_unique<GatedConnector>(std::move(*inner), &entered, released, &armed));
                            })
                  .ok());
  ASSERT_TRUE(h.Open(FreshDir("submit_during_pass")).ok());
  ASSERT_TRUE(h.Ctl().Submit(WorkloadYaml("first", "alpha", 1, "1h"), "first.yaml", By("")).ok());
  ASSERT_FALSE(h.Ctl().Metrics().empty());  // a scrape before the pass renders the text served during it

  std::thread pass([&] { (void)h.Ctl().Pass(); });
  entered.get_future().wait();  // the pass is inside Apply, holding the controller's lock
  std::future<Result<store::WorkloadRecord>> second = std::async(std::launch::async, [&] {
    return h.Ctl().Submit(WorkloadYaml("second", "alpha", 1, "1h"), "second.yaml", By("alpha"));
  });
  // Not a timing assertion: the submission either completes while the pass is held, or
  // it waits for the pass forever (what it did before); a minute tells the two apart.
  const bool accepted_during_pass = second.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  // A scrape does not wait for the pass either: it gets the text rendered last.
  std::future<std::string> scrape = std::async(std::launch::async, [&] { return h.Ctl().Metrics(); });
  const bool scraped_during_pass = scrape.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  // Nor do /readyz and /v1/status (a new leader's first pass over a long queue takes
  // seconds: a probe would call it unready, and gpufed-load found no leader meanwhile).
  std::future<std::string> health = std::async(std::launch::async, [&] {
    return std::string(h.Ctl().ready() ? "ready" : "unready") + " " + h.Ctl().active_revision() + " " +
           h.Ctl().audit_health().ToString();
  });
  const bool health_during_pass = health.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  release.set_value();
  pass.join();
  ASSERT_TRUE(accepted_during_pass) << "the submission waited for the pass";
  ASSERT_TRUE(scraped_during_pass) << "the scrape waited for the pass";
  ASSERT_TRUE(health_during_pass) << "readiness waited for the pass";
  // Unready: no pass had observed a cluster yet. The revision is the active one.
  EXPECT_EQ(health.get(), "unready " + h.Ctl().active_revision() + " OK");
  EXPECT_FALSE(h.Ctl().active_revision().empty());
  EXPECT_TRUE(h.Ctl().ready());  // the pass observed its cluster
  EXPECT_NE(scrape.get().find("gpufed_workloads{state=\"Pending\"} 1"), std::string::npos);  // before the pass
  Result<store::WorkloadRecord> r = second.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->tenant, "alpha");
  EXPECT_EQ(r->state, store::WorkloadState::kPending);
  // The next pass plans it like any other.
  ASSERT_TRUE(h.Ctl().Pass().ok());
  Result<store::WorkloadRecord> planned = h.Ctl().Get({"alpha", "second"}, "");
  ASSERT_TRUE(planned.ok());
  EXPECT_NE(planned->state, store::WorkloadState::kPending);
}

}  // namespace
}  // namespace gpufed::testing

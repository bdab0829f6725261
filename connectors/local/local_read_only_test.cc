// A read-only local connector (`gpufed plan --state`, FactoryContext::read_only): it
// reports what the ledger, the bookkeeping folders and the processes say, and launches,
// signals, reaps and writes nothing.
#include <sys/wait.h>

#include "connectors/core/action_json.h"
#include "connectors/local/local_test_fixture.h"
#include "tests/testutil/folder_print.h"

namespace gpufed::connectors::local::testing {
namespace {

Result<std::unique_ptr<Connector>> MakeReadOnly(Fixture& f) {
  FactoryContext ctx{&f.clock, f.connector, {}};
  ctx.read_only = true;
  return f.registry.Create(f.cluster, ctx);
}

const ObservedWorkload* Find(const Observation& o, const std::string& key) {
  for (const ObservedWorkload& w : o.workloads) {
    if (w.key == key) return &w;
  }
  return nullptr;
}

TEST(LocalConnectorReadOnly, ReportsTheFoldersJobsAndLaunchesSignalsOrWritesNothing) {
  Fixture f("read_only");
  const std::string gate = f.dir + "/gate";
  CallContext ctx{&f.clock};
  {
    auto c = f.Make();
    ASSERT_NE(c, nullptr);
    // Runs until the gate exists: it is running whenever the read-only connector looks.
    ASSERT_TRUE(
        c->Apply(f.Job("gated.a1", {"sh", "-c", "while [ ! -e " + gate + " ]; do sleep 0.02; done"}), ctx).ok());
  }
  const int wrapper = std::atoi(Fixture::Slurp(f.Book("gated.a1") + "/pid").c_str());
  ASSERT_GT(wrapper, 0);
  // A submit the controller recorded but never launched (it stopped in between).
  {
    auto ledger = ActionLedger::Open(f.connector + "/ledger.log");
    ASSERT_TRUE(ledger.ok());
    ASSERT_TRUE((*ledger)->Append({"submit", "never.a1", ActionToJson(f.Job("never.a1", {"true"})).dump()}).ok());
  }
  const testutil::FolderPrint state_before = testutil::PrintFolder(f.state);
  const testutil::FolderPrint jobs_before = testutil::PrintFolder(f.job_root);
  {
    auto c = MakeReadOnly(f);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Result<Observation> o = (*c)->Observe(ctx);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    ASSERT_NE(Find(*o, "gated.a1"), nullptr);
    EXPECT_EQ(Find(*o, "gated.a1")->state, RunState::kRunning);
    ASSERT_NE(Find(*o, "never.a1"), nullptr);
    EXPECT_EQ(Find(*o, "never.a1")->state, RunState::kStarting);  // reported, not launched
    Result<ApplyOutcome> applied = (*c)->Apply(f.Job("more.a1", {"true"}), ctx);
    EXPECT_EQ(applied.status().code(), StatusCode::kFailedPrecondition) << applied.status().ToString();
  }
  EXPECT_EQ(testutil::DescribeChanges(state_before, testutil::PrintFolder(f.state)), "");
  EXPECT_EQ(testutil::DescribeChanges(jobs_before, testutil::PrintFolder(f.job_root)), "");
  // The job ran on, untouched; end it and reap its wrapper (our child: the first connector
  // launched it), waiting for its exit rather than for time.
  std::ofstream(gate) << "go";
  int status = 0;
  ASSERT_EQ(::waitpid(wrapper, &status, 0), wrapper);
}

TEST(LocalConnectorReadOnly, MakesNoFolderForAClusterThatNeverRan) {
  Fixture f("read_only_fresh");
  auto c = MakeReadOnly(f);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Result<Observation> o = (*c)->Observe({&f.clock});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->nodes.size(), 1u);
  EXPECT_TRUE(o->workloads.empty());
  EXPECT_FALSE(std::filesystem::exists(f.connector));
  EXPECT_FALSE(std::filesystem::exists(f.job_root));
}

}  // namespace
}  // namespace gpufed::connectors::local::testing

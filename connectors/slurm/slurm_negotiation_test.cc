// Version negotiation and Slurm 24.11's traps, against the fake slurmrestd: which version
// the connector speaks, what it does when the server changes under it, and why a submit
// answered with warnings or without a job id is never reported as done.
#include "connectors/slurm/connector_test_base_for_test.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;
using testing::FakeSlurmrestd;

class SlurmNegotiation : public testing::ConnectorTestBase, public ::testing::Test {
 protected:
  SlurmNegotiation() : ConnectorTestBase(testing::Offer2411()) {}

  int Requests(const std::string& prefix) {
    int n = 0;
    for (const std::string& p : fake_.paths()) n += p.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
};

TEST_F(SlurmNegotiation, PinnedVersionIsSpokenWhenOffered) {
  auto c = Make(true, Cluster("v0.0.41"));
  Result<Observation> obs = c->Observe(Ctx());
  ASSERT_TRUE(obs.ok()) << obs.status().ToString();
  EXPECT_EQ(obs->api_version, "v0.0.41");
  EXPECT_EQ(Requests("GET /slurm/v0.0.41/nodes"), 1);
  EXPECT_EQ(Requests("GET /slurm/v0.0.42/"), 0);
}

TEST_F(SlurmNegotiation, PinnedVersionTheServerDoesNotOfferNamesTheOffer) {
  auto c = Make(true, Cluster("v0.0.38"));
  Result<Observation> obs = c->Observe(Ctx());
  ASSERT_EQ(obs.status().code(), StatusCode::kFailedPrecondition) << obs.status().ToString();
  EXPECT_NE(obs.status().message().find("offers v0.0.40, v0.0.41, v0.0.42"), std::string::npos) << obs.status().message();
  EXPECT_NE(obs.status().message().find(fake_.url()), std::string::npos);
  EXPECT_EQ(Requests("GET /slurm/"), 0);  // nothing sent to a version it does not serve
}

TEST_F(SlurmNegotiation, NoVersionInCommonIsAClearError) {
  fake_.Offer({"v0.0.43", "v0.0.44", "v0.0.45"});
  Result<Observation> obs = Make()->Observe(Ctx());
  ASSERT_EQ(obs.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(obs.status().message().find("offers v0.0.43, v0.0.44, v0.0.45"), std::string::npos) << obs.status().message();
  fake_.Offer({"v0.0.41", "v0.0.42", "v0.0.43"});  // 25.05: v0.0.42 still
  Result<Observation> newer = Make()->Observe(Ctx());
  ASSERT_TRUE(newer.ok()) << newer.status().ToString();
  EXPECT_EQ(newer->api_version, "v0.0.42");
}

TEST_F(SlurmNegotiation, UpgradeUnderARunningConnectorIsNegotiatedAgain) {
  fake_.Offer(testing::Offer2205());
  auto c = Make();
  ASSERT_TRUE(c->Apply(SubmitAction("u1.a1"), Ctx()).ok());
  Result<Observation> before = c->Observe(Ctx());
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->api_version, "v0.0.38");
  // slurmctld down is Slurm's own error: the version stays, nothing is negotiated again.
  fake_.set_mode(FakeSlurmrestd::Mode::kCtldDown);
  EXPECT_EQ(c->Observe(Ctx()).status().code(), StatusCode::kUnavailable);
  fake_.set_mode(FakeSlurmrestd::Mode::kOk);
  ASSERT_TRUE(c->Observe(Ctx()).ok());
  EXPECT_EQ(fake_.openapi_reads(), 1);
  // Slurm upgraded to 24.11: the old path answers 404, the next call negotiates again.
  fake_.Offer(testing::Offer2411());
  Result<Observation> gone = c->Observe(Ctx());
  ASSERT_EQ(gone.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(gone.status().message().find("negotiated again"), std::string::npos) << gone.status().message();
  Result<Observation> after = c->Observe(Ctx());
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->api_version, "v0.0.42");
  EXPECT_EQ(after->api_summary, "slurmrestd API v0.0.42 (Slurm 24.11.5)");
  ASSERT_EQ(after->workloads.size(), 1u);  // the job submitted through v0.0.38 is still found
  EXPECT_EQ(after->workloads[0].key, "u1.a1");
  // A reply that does not read as the negotiated version also starts a new negotiation.
  fake_.set_mode(FakeSlurmrestd::Mode::kMalformed);
  EXPECT_EQ(c->Observe(Ctx()).status().code(), StatusCode::kUnavailable);
  fake_.set_mode(FakeSlurmrestd::Mode::kOk);
  fake_.Offer(testing::Offer2205());  // and back (a downgrade)
  Result<Observation> back = c->Observe(Ctx());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->api_version, "v0.0.38");
  EXPECT_EQ(fake_.openapi_reads(), 3);
}

TEST_F(SlurmNegotiation, SubmitAnsweredWithWarningsIsCancelledAndNotDone) {
  auto c = Make();
  fake_.set_submit(FakeSlurmrestd::Submit::kWarnWithJobId);
  Result<ApplyOutcome> warned = c->Apply(SubmitAction("u1.a1"), Ctx());
  ASSERT_EQ(warned.status().code(), StatusCode::kInvalidArgument) << warned.status().ToString();
  EXPECT_NE(warned.status().message().find("with warnings"), std::string::npos) << warned.status().message();
  EXPECT_NE(warned.status().message().find("gpufed cancelled it"), std::string::npos) << warned.status().message();
  EXPECT_EQ(fake_.job_state(100), "CANCELLED");
  Result<Observation> obs = c->Observe(Ctx());
  ASSERT_TRUE(obs.ok());
  EXPECT_TRUE(obs->workloads.empty());  // the cancelled job is not the key's attempt
  // Planned again (same key): a new job, reported done.
  fake_.set_submit(FakeSlurmrestd::Submit::kOk);
  Result<ApplyOutcome> again = c->Apply(SubmitAction("u1.a1"), Ctx());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->already_applied);
  EXPECT_EQ(fake_.submits(), 2);
  // A restarted controller still knows which job is the rejected one (ledger).
  Result<Observation> later = Make()->Observe(Ctx());
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->workloads.size(), 1u);
  EXPECT_EQ(later->workloads[0].state, RunState::kRunning);
}

TEST_F(SlurmNegotiation, SubmitWithoutJobIdIsNeverDone) {
  auto c = Make();
  fake_.set_submit(FakeSlurmrestd::Submit::kWarnNoJobId);
  for (int i = 0; i < 2; ++i) {
    Result<ApplyOutcome> r = c->Apply(SubmitAction("u1.a1"), Ctx());
    ASSERT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    EXPECT_NE(r.status().message().find("submitted nothing"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("#/job/tasks/"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(fake_.submits(), 2);  // each try really asked: nothing was recorded as done
  EXPECT_EQ(fake_.job_count(), 0u);
}

TEST_F(SlurmNegotiation, SilentCancelVersionsAreReadBack) {
  auto c = Make(true, Cluster("v0.0.40"));
  ASSERT_TRUE(c->Apply(SubmitAction("u1.a1"), Ctx()).ok());
  fake_.set_ignore_cancels(true);  // 200 and no error, but the job keeps running
  Action cancel{ActionKind::kCancel, "u1.a1", "train", "t", 1};
  Result<ApplyOutcome> ignored = c->Apply(cancel, Ctx());
  ASSERT_EQ(ignored.status().code(), StatusCode::kUnavailable) << ignored.status().ToString();
  EXPECT_NE(ignored.status().message().find("still RUNNING"), std::string::npos) << ignored.status().message();
  fake_.set_ignore_cancels(false);
  ASSERT_TRUE(c->Apply(cancel, Ctx()).ok());
  EXPECT_EQ(fake_.job_state(100), "CANCELLED");
  EXPECT_EQ(c->client().Cancel(999999, Ctx()).code(), StatusCode::kNotFound);
  EXPECT_EQ(Requests("GET /slurm/v0.0.40/job/999999"), 1);  // learnt by reading back
}

TEST_F(SlurmNegotiation, V0042ReportsCancelFailuresWithoutReadBack) {
  auto c = Make();
  ASSERT_TRUE(c->Observe(Ctx()).ok());
  EXPECT_EQ(c->client().Cancel(999999, Ctx()).code(), StatusCode::kNotFound);
  EXPECT_EQ(Requests("GET /slurm/v0.0.42/job/"), 0);
}

}  // namespace
}  // namespace gpufed::connectors::slurm

// The v0.0.40, v0.0.41 and v0.0.42 adapters against replies recorded from Slurm 24.11.5
// (tests/fixtures/slurm/v0.0.4x/): the same cases for each, and what differs between them.
#include <gtest/gtest.h>

#include "connectors/slurm/api.h"
#include "connectors/slurm/fixtures_for_test.h"
#include "connectors/slurm/job_request.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

class SlurmApiV004x : public ::testing::TestWithParam<std::string> {
 protected:
  const ApiMapping& Api() const { return *FindApiMapping(GetParam()); }
  json Rec(const std::string& name) const { return testing::Fixture(GetParam(), name); }
  int Http(const std::string& name) const { return testing::FixtureHttpStatus(GetParam(), name); }

  // The newest job of a recording carrying gpufed's tag for fixture `name` (the 24.11
  // lists also hold the jobs recorded for the other versions).
  static const SlurmJob* ByKey(const std::vector<SlurmJob>& jobs, const std::string& name) {
    const SlurmJob* found = nullptr;
    for (const SlurmJob& j : jobs) {
      std::optional<JobTag> tag = DecodeJobTag(j.comment);
      if (tag && tag->key == "fixture-" + name + ".a1" && (found == nullptr || j.job_id > found->job_id)) found = &j;
    }
    return found;
  }
};

TEST_P(SlurmApiV004x, PathsCarryTheVersion) {
  EXPECT_EQ(Api().version(), GetParam());
  EXPECT_EQ(Api().NodesPath(), "/slurm/" + GetParam() + "/nodes");
  EXPECT_EQ(Api().JobPath(7), "/slurm/" + GetParam() + "/job/7");
}

TEST_P(SlurmApiV004x, PingSaysReleaseAndIsNoTokenCheck) {
  Result<PingReply> ping = Api().ParsePing(Rec("ping.json"));
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  EXPECT_TRUE(ping->controller_up);
  EXPECT_EQ(ping->release, "24.11.5");
  // A rejected token: still HTTP 200, the controller shows as DOWN.
  EXPECT_EQ(Http("ping_bad_token.json"), 200);
  Result<PingReply> bad = Api().ParsePing(Rec("ping_bad_token.json"));
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_FALSE(bad->controller_up);
}

TEST_P(SlurmApiV004x, NodesWithStateListsAndGres) {
  Result<std::vector<SlurmNode>> idle = Api().ParseNodes(Rec("nodes_idle.json"));
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  ASSERT_EQ(idle->size(), 1u);
  const SlurmNode& n = (*idle)[0];
  EXPECT_EQ(n.name, "gpunode1");
  EXPECT_EQ(n.state, "idle");  // ["IDLE"]
  EXPECT_TRUE(n.state_flags.empty());
  EXPECT_EQ(n.cpus, 2);
  EXPECT_EQ(n.real_memory_mb, 2000);
  ASSERT_EQ(n.gres.size(), 2u);
  EXPECT_EQ(n.gres[0].type, "a100");
  EXPECT_EQ(n.gres[0].count, 2);
  EXPECT_EQ(n.gres[1].type, "a100_1g.5gb");
  EXPECT_EQ(n.gres[1].count, 4);
  EXPECT_EQ(n.partitions, (std::vector<std::string>{"gpu"}));

  Result<std::vector<SlurmNode>> busy = Api().ParseNodes(Rec("nodes_busy.json"));
  ASSERT_TRUE(busy.ok());
  const SlurmNode& b = (*busy)[0];
  EXPECT_EQ(b.state, "allocated");
  EXPECT_EQ(b.alloc_cpus, 2);
  ASSERT_EQ(b.gres_used.size(), 2u);
  EXPECT_EQ(b.gres_used[0].indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(b.gres_used[1].indices, (std::vector<int>{2}));

  json drained = Rec("nodes_idle.json");
  drained["nodes"][0]["state"] = {"IDLE", "DRAIN"};
  Result<std::vector<SlurmNode>> d = Api().ParseNodes(drained);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)[0].state, "idle");
  EXPECT_EQ((*d)[0].state_flags, (std::vector<std::string>{"DRAIN"}));
}

TEST_P(SlurmApiV004x, Partitions) {
  Result<std::vector<SlurmPartition>> parts = Api().ParsePartitions(Rec("partitions.json"));
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "gpu");
  EXPECT_EQ((*parts)[0].nodes, "gpunode1");
  EXPECT_EQ((*parts)[0].state, "UP");
  EXPECT_EQ((*parts)[0].total_nodes, 1);
}

TEST_P(SlurmApiV004x, JobsWhileRunning) {
  Result<std::vector<SlurmJob>> jobs = Api().ParseJobs(Rec("jobs_running.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  const SlurmJob* a100 = ByKey(*jobs, "a100");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->state, "RUNNING");
  EXPECT_EQ(a100->base_state, "RUNNING");
  EXPECT_EQ(a100->required_nodes, "gpunode1");
  ASSERT_EQ(a100->gres.size(), 1u);  // from gres_detail
  EXPECT_EQ(a100->gres[0].indices, (std::vector<int>{0, 1}));
  ASSERT_EQ(a100->gres_per_node.size(), 1u);  // "gres/gpu:a100:2"
  EXPECT_EQ(a100->gres_per_node[0].type, "a100");
  EXPECT_EQ(a100->gres_per_node[0].count, 2);
  EXPECT_EQ(a100->time_limit_minutes, 5);  // a number object
  EXPECT_GT(a100->start_time, 1700000000);
  EXPECT_EQ(a100->cpus, 1);
  const SlurmJob* mig = ByKey(*jobs, "mig");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->gres[0].type, "a100_1g.5gb");
  const SlurmJob* pending = ByKey(*jobs, "pending");
  ASSERT_NE(pending, nullptr);
  EXPECT_EQ(pending->state, "PENDING");
  EXPECT_EQ(pending->gres[0].count, 1);  // per node x nodes: no gres_detail while pending

  Result<std::vector<SlurmJob>> one = Api().ParseJobList(Rec("job_running.json"), Api().JobPath(a100->job_id));
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].job_id, a100->job_id);
}

TEST_P(SlurmApiV004x, CancellingJobReadsCompletingAsIn2205) {
  Result<std::vector<SlurmJob>> jobs = Api().ParseJobList(Rec("job_cancelling.json"), Api().JobPath(1));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 1u);
  const SlurmJob& j = (*jobs)[0];
  EXPECT_EQ(j.base_state, "CANCELLED");
  // ["CANCELLED","COMPLETING"] right after the DELETE (["CANCELLED"] once settled).
  if (!j.state_flags.empty()) {
    EXPECT_EQ(j.state, "COMPLETING");
  } else {
    EXPECT_EQ(j.state, "CANCELLED");
  }
  json both = Rec("job_cancelling.json");
  both["jobs"][0]["job_state"] = {"CANCELLED", "COMPLETING"};
  EXPECT_EQ((*Api().ParseJobs(both))[0].state, "COMPLETING");
}

TEST_P(SlurmApiV004x, FinishedJobsWithExitCodesAsWaitStatus) {
  Result<std::vector<SlurmJob>> jobs = Api().ParseJobs(Rec("jobs_finished.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  const SlurmJob* cancelled = ByKey(*jobs, "a100");
  ASSERT_NE(cancelled, nullptr);
  EXPECT_EQ(cancelled->state, "CANCELLED");
  EXPECT_EQ(cancelled->exit_code, 15);  // signal 15
  ASSERT_EQ(cancelled->gres.size(), 1u);  // gres_detail is [] once ended: from the request
  EXPECT_EQ(cancelled->gres[0].count, 2);
  const SlurmJob* failed = ByKey(*jobs, "fails");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->state, "FAILED");
  EXPECT_EQ(failed->exit_code, 768);  // exit 3
  const SlurmJob* done = ByKey(*jobs, "mig");
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->state, "COMPLETED");
  EXPECT_GE(done->end_time, done->start_time);
}

TEST_P(SlurmApiV004x, SubmitRepliesAndTheirTraps) {
  Result<SubmitReply> ok = Api().ParseSubmit(Rec("submit.json"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_GT(ok->job_id, 0);
  EXPECT_TRUE(ok->warnings.empty());
  // 22.05's "gres": accepted with a job id and only a warning (no GPU for the job).
  Result<SubmitReply> unknown = Api().ParseSubmit(Rec("submit_unknown_field.json"));
  ASSERT_TRUE(unknown.ok());
  EXPECT_GT(unknown->job_id, 0);
  ASSERT_FALSE(unknown->warnings.empty());
  EXPECT_NE(unknown->warnings[0].Text().find("gres"), std::string::npos);
  // A value of the wrong type: HTTP 200, a warning, and no job id.
  EXPECT_EQ(Http("submit_wrong_type.json"), 200);
  Result<SubmitReply> wrong = Api().ParseSubmit(Rec("submit_wrong_type.json"));
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->job_id, 0);
  EXPECT_EQ(wrong->warnings.size(), 1u);
  // Refusals come as HTTP 500 with errors.
  for (const char* file : {"submit_invalid_partition.json", "submit_bad_gres.json"}) {
    EXPECT_EQ(Http(file), 500) << file;
    Status s = StatusFromSlurmErrors(Api().ParseErrors(Rec(file)), Http(file), "submit");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << file << ": " << s.ToString();
  }
}

TEST_P(SlurmApiV004x, ResultAndJobIdMustAgree) {
  json reply = Rec("submit.json");
  if (!reply.contains("result")) {
    EXPECT_EQ(GetParam(), "v0.0.42");  // v0.0.42 dropped "result"
    return;
  }
  reply["result"]["job_id"] = reply["job_id"].get<int64_t>() + 1;
  Result<SubmitReply> r = Api().ParseSubmit(reply);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("result.job_id"), std::string::npos) << r.status().message();
}

TEST_P(SlurmApiV004x, CancelRepliesByVersion) {
  EXPECT_TRUE(Api().ParseCancel(Rec("cancel.json"), 1).ok());
  EXPECT_TRUE(Api().ParseCancel(Rec("cancel_finished.json"), 1).ok());
  Status unknown = Api().ParseCancel(Rec("cancel_unknown.json"), 999999);
  if (GetParam() == "v0.0.42") {
    EXPECT_TRUE(Api().CancelReportsFailures());
    EXPECT_EQ(unknown.code(), StatusCode::kNotFound) << unknown.ToString();
  } else {
    // v0.0.40/41: a silent success; the client reads the job back.
    EXPECT_FALSE(Api().CancelReportsFailures());
    EXPECT_TRUE(unknown.ok());
  }
}

TEST_P(SlurmApiV004x, RecordedErrorReplies) {
  EXPECT_EQ(Http("job_not_found.json"), 404);
  EXPECT_EQ(StatusFromSlurmErrors(Api().ParseErrors(Rec("job_not_found.json")), 404, "get").code(), StatusCode::kNotFound);
  EXPECT_EQ(Http("nodes_bad_token.json"), 511);
  ASSERT_EQ(Api().ParseErrors(Rec("nodes_bad_token.json")).size(), 1u);
  EXPECT_EQ(Api().ParseErrors(Rec("nodes_bad_token.json"))[0].number, 1007);
}

TEST_P(SlurmApiV004x, BuildsSubmitBodyInThisVersionsSpelling) {
  JobRequest r;
  r.name = "gpufed-train-a1";
  r.comment = "gpufed/v1 key=k.a1";
  r.partition = "gpu";
  r.account = "proj_nlp";
  r.qos = "high";
  r.script = "#!/bin/bash\nexec 'true'\n";
  r.working_dir = "/scratch";
  r.standard_output = "/scratch/x-%j.out";
  r.environment = {{"PATH", "/bin"}, {"A", "x=y"}};
  r.gres = "gpu:a100:2";
  r.nodelist = "gpunode1,gpunode2";
  r.cpus_per_task = 4;
  r.memory_per_node_mb = 1024;
  r.time_limit_minutes = 10;
  json body = Api().BuildSubmit(r);
  EXPECT_FALSE(body.contains("script"));  // inside "job" from v0.0.40 on
  const json& job = body["job"];
  EXPECT_EQ(job["script"], r.script);
  EXPECT_EQ(job["tres_per_node"], "gres/gpu:a100:2");
  EXPECT_FALSE(job.contains("gres"));  // ignored with a warning by 24.11
  EXPECT_EQ(job["required_nodes"], json::array({"gpunode1", "gpunode2"}));
  EXPECT_EQ(job["environment"], json::array({"A=x=y", "PATH=/bin"}));
  EXPECT_EQ(job["time_limit"], json({{"set", true}, {"number", 10}}));
  EXPECT_EQ(job["memory_per_node"], json({{"set", true}, {"number", 1024}}));
  EXPECT_EQ(job["cpus_per_task"], 4);
  EXPECT_EQ(job["tasks"], 1);
  EXPECT_EQ(job["requeue"], false);
  EXPECT_EQ(job["comment"], r.comment);
  EXPECT_EQ(job["account"], "proj_nlp");
  EXPECT_EQ(job["qos"], "high");
  r.account.clear();
  r.qos.clear();
  EXPECT_FALSE(Api().BuildSubmit(r)["job"].contains("account"));  // the user's default account
  r.nodes = 2;
  json multi = Api().BuildSubmit(r)["job"];
  EXPECT_EQ(multi["minimum_nodes"], 2);
  EXPECT_EQ(multi["maximum_nodes"], 2);
  EXPECT_EQ(multi["tasks_per_node"], 1);
}

INSTANTIATE_TEST_SUITE_P(Recorded2411, SlurmApiV004x, ::testing::Values("v0.0.40", "v0.0.41", "v0.0.42"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace gpufed::connectors::slurm

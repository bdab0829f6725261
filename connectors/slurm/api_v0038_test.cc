// The v0.0.38 adapter against replies recorded from Slurm 22.05.8
// (tests/fixtures/slurm/v0.0.38/).
#include <gtest/gtest.h>

#include "connectors/slurm/api.h"
#include "connectors/slurm/fixtures_for_test.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;
using testing::Fixture;

const ApiMapping& Api() { return *FindApiMapping("v0.0.38"); }
json Rec(const std::string& name) { return Fixture("v0.0.38", name); }

TEST(SlurmApiV0038, PathsAndRegistry) {
  EXPECT_EQ(FindApiMapping(""), nullptr);  // "" means auto: negotiated, not a version
  EXPECT_EQ(FindApiMapping("v0.0.39"), nullptr);
  EXPECT_EQ(Api().version(), "v0.0.38");
  EXPECT_EQ(Api().NodesPath(), "/slurm/v0.0.38/nodes");
  EXPECT_EQ(Api().JobPath(42), "/slurm/v0.0.38/job/42");
  EXPECT_EQ(Api().SubmitPath(), "/slurm/v0.0.38/job/submit");
  EXPECT_EQ(SupportedApiVersions(), (std::vector<std::string>{"v0.0.38", "v0.0.40", "v0.0.41", "v0.0.42"}));
  EXPECT_EQ(ApiVersionSettings().front(), "auto");
  EXPECT_LT(ApiVersionOrder("v0.0.38"), ApiVersionOrder("v0.0.40"));
  EXPECT_LT(ApiVersionOrder("v0.0.42"), ApiVersionOrder("v0.0.100"));
  EXPECT_EQ(ApiVersionOrder("0.0.38"), -1);
  EXPECT_EQ(ApiVersionOrder("v0.0"), -1);
  EXPECT_EQ(ApiVersionOrder("v0.0.4x"), -1);
}

TEST(SlurmApiV0038, ParsesPingWithRelease) {
  Result<PingReply> ping = Api().ParsePing(Rec("ping.json"));
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  EXPECT_TRUE(ping->controller_up);
  EXPECT_EQ(ping->release, "22.05.8");
}

TEST(SlurmApiV0038, ParsesIdleAndBusyNodes) {
  Result<std::vector<SlurmNode>> idle = Api().ParseNodes(Rec("nodes_idle.json"));
  ASSERT_TRUE(idle.ok()) << idle.status().ToString();
  ASSERT_EQ(idle->size(), 1u);
  const SlurmNode& n = (*idle)[0];
  EXPECT_EQ(n.name, "gpunode1");
  EXPECT_EQ(n.state, "idle");
  EXPECT_EQ(n.cpus, 2);
  EXPECT_EQ(n.alloc_cpus, 0);
  EXPECT_EQ(n.real_memory_mb, 2000);
  ASSERT_EQ(n.gres.size(), 2u);
  EXPECT_EQ(n.gres[0].type, "a100");
  EXPECT_EQ(n.gres[0].count, 2);
  EXPECT_EQ(n.gres[1].type, "a100_1g.5gb");
  EXPECT_EQ(n.gres[1].count, 4);
  EXPECT_EQ(n.gres_used[0].count, 0);
  EXPECT_EQ(n.partitions, (std::vector<std::string>{"gpu"}));

  Result<std::vector<SlurmNode>> busy = Api().ParseNodes(Rec("nodes_busy.json"));
  ASSERT_TRUE(busy.ok());
  const SlurmNode& b = (*busy)[0];
  EXPECT_EQ(b.state, "allocated");
  EXPECT_EQ(b.alloc_cpus, 2);
  ASSERT_EQ(b.gres_used.size(), 2u);
  EXPECT_EQ(b.gres_used[0].indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(b.gres_used[1].indices, (std::vector<int>{2}));
}

TEST(SlurmApiV0038, ParsesPartitions) {
  Result<std::vector<SlurmPartition>> parts = Api().ParsePartitions(Rec("partitions.json"));
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "gpu");
  EXPECT_EQ((*parts)[0].nodes, "gpunode1");
  EXPECT_EQ((*parts)[0].state, "UP");
  EXPECT_TRUE((*parts)[0].is_default);
}

TEST(SlurmApiV0038, ParsesRunningPendingAndFinishedJobs) {
  Result<std::vector<SlurmJob>> running = Api().ParseJobs(Rec("jobs_running.json"));
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  ASSERT_EQ(running->size(), 4u);
  const SlurmJob& a100 = (*running)[0];
  EXPECT_EQ(a100.state, "RUNNING");
  EXPECT_EQ(a100.comment.rfind("gpufed/v1 key=fixture-a100.a1", 0), 0u);
  EXPECT_EQ(a100.user_name, "root");  // who the job runs as: what adoption by comment checks
  ASSERT_EQ(a100.gres.size(), 1u);
  EXPECT_EQ(a100.gres[0].type, "a100");
  EXPECT_EQ(a100.gres[0].indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(a100.required_nodes, "gpunode1");
  EXPECT_GT(a100.start_time, 0);
  EXPECT_EQ(a100.time_limit_minutes, 5);
  const SlurmJob& pending = (*running)[2];
  EXPECT_EQ(pending.state, "PENDING");
  ASSERT_EQ(pending.gres_per_node.size(), 1u);  // "gres:gpu:a100:1"
  EXPECT_EQ(pending.gres_per_node[0].type, "a100");

  Result<std::vector<SlurmJob>> cancelling = Api().ParseJobList(Rec("job_cancelling.json"), Api().JobPath(1));
  ASSERT_TRUE(cancelling.ok());
  EXPECT_EQ((*cancelling)[0].state, "COMPLETING");  // 22.05 prints the flag

  Result<std::vector<SlurmJob>> done = Api().ParseJobs(Rec("jobs_finished.json"));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ((*done)[0].state, "CANCELLED");
  EXPECT_EQ((*done)[0].exit_code, 15);  // SIGTERM
  EXPECT_EQ((*done)[1].state, "COMPLETED");
  EXPECT_EQ((*done)[3].state, "FAILED");
  EXPECT_EQ((*done)[3].exit_code, 768);  // exit 3
  // gres_detail is gone once a job ends; the per-node request still says what it held.
  ASSERT_EQ((*done)[1].gres.size(), 1u);
  EXPECT_EQ((*done)[1].gres[0].type, "a100_1g.5gb");
  EXPECT_EQ((*done)[1].gres[0].count, 1);
}

TEST(SlurmApiV0038, SubmitRepliesKeepTheirJobIdAndErrors) {
  Result<SubmitReply> ok = Api().ParseSubmit(Rec("submit.json"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->job_id, 1);
  EXPECT_TRUE(ok->warnings.empty());
  Result<SubmitReply> held = Api().ParseSubmit(Rec("submit_held.json"));
  ASSERT_TRUE(held.ok());
  EXPECT_GT(held->job_id, 0);
  ASSERT_EQ(held->errors.size(), 1u);  // informational: "Job is in held state"
  EXPECT_EQ(held->errors[0].number, 2042);
  Result<SubmitReply> refused = Api().ParseSubmit(Rec("submit_invalid_partition.json"));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->job_id, 0);
}

TEST(SlurmApiV0038, RecordedFailuresMapToStatusCodes) {
  struct Case {
    const char* file;
    StatusCode code;
  } cases[] = {
      {"submit_invalid_partition.json", StatusCode::kInvalidArgument},
      {"submit_bad_gres.json", StatusCode::kInvalidArgument},
      {"submit_disabled_key.json", StatusCode::kInvalidArgument},
      {"job_not_found.json", StatusCode::kNotFound},
      {"cancel_unknown.json", StatusCode::kNotFound},
      {"nodes_bad_token.json", StatusCode::kUnavailable},  // 22.05: errno -1, like slurmctld down
      {"nodes_slurmctld_down.json", StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    int http = testing::FixtureHttpStatus("v0.0.38", c.file);
    EXPECT_GE(http, 400) << c.file;
    Status s = StatusFromSlurmErrors(Api().ParseErrors(Rec(c.file)), http, "test");
    EXPECT_EQ(s.code(), c.code) << c.file << ": " << s.ToString();
  }
  Status invalid = StatusFromSlurmErrors(Api().ParseErrors(Rec("submit_invalid_partition.json")), 500, "submit");
  EXPECT_NE(invalid.message().find("Invalid partition name specified"), std::string::npos);
  EXPECT_TRUE(Api().ParseCancel(Rec("cancel.json"), 1).ok());
  EXPECT_TRUE(Api().ParseCancel(Rec("cancel_finished.json"), 1).ok());
  EXPECT_TRUE(Api().CancelReportsFailures());
}

TEST(SlurmApiV0038, BuildsSubmitBody) {
  JobRequest r;
  r.name = "gpufed-train-a1";
  r.comment = "gpufed/v1 key=k.a1";
  r.partition = "gpu";
  r.account = "proj_nlp";
  r.qos = "high";
  r.script = "#!/bin/bash\nexec 'true'\n";
  r.working_dir = "/scratch";
  r.standard_output = "/scratch/x-%j.out";
  r.environment = {{"PATH", "/bin"}};
  r.gres = "gpu:a100:2";
  r.nodelist = "gpunode1";
  r.cpus_per_task = 4;
  r.memory_per_node_mb = 1024;
  r.time_limit_minutes = 10;
  json body = Api().BuildSubmit(r);
  EXPECT_EQ(body["script"], r.script);
  const json& job = body["job"];
  EXPECT_EQ(job["name"], "gpufed-train-a1");
  EXPECT_EQ(job["comment"], "gpufed/v1 key=k.a1");
  EXPECT_EQ(job["partition"], "gpu");
  EXPECT_EQ(job["account"], "proj_nlp");
  EXPECT_EQ(job["qos"], "high");
  EXPECT_EQ(job["gres"], "gpu:a100:2");
  EXPECT_EQ(job["nodelist"], "gpunode1");
  EXPECT_EQ(job["current_working_directory"], "/scratch");
  EXPECT_EQ(job["environment"]["PATH"], "/bin");
  EXPECT_EQ(job["cpus_per_task"], 4);
  EXPECT_EQ(job["memory_per_node"], 1024);
  EXPECT_EQ(job["time_limit"], 10);
  EXPECT_EQ(job["tasks"], 1);
  EXPECT_EQ(job["requeue"], false);
  EXPECT_FALSE(job.contains("required_nodes"));  // a disabled key in v0.0.38 (submit_disabled_key.json)
  r.nodes = 2;
  EXPECT_EQ(Api().BuildSubmit(r)["job"]["nodes"], json::array({2, 2}));
}

TEST(SlurmApiV0038, WrongShapesNameVersionEndpointAndField) {
  for (const char* text : {"[]", "null", "42", "\"x\"", "{}", "{\"nodes\": {}}", "{\"nodes\": null}"}) {
    json j = json::parse(text);
    Status nodes = Api().ParseNodes(j).status();
    EXPECT_EQ(nodes.code(), StatusCode::kUnavailable) << text;
    EXPECT_NE(nodes.message().find("slurmrestd v0.0.38 GET /slurm/v0.0.38/nodes: "), std::string::npos) << nodes.message();
    EXPECT_EQ(Api().ParseJobs(j).status().code(), StatusCode::kUnavailable) << text;
    EXPECT_EQ(Api().ParsePartitions(j).status().code(), StatusCode::kUnavailable) << text;
    Result<SubmitReply> submit = Api().ParseSubmit(j);
    EXPECT_TRUE(!submit.ok() || submit->job_id == 0) << text;
    (void)Api().ParseErrors(j);
  }
  // Required fields: missing or mistyped is an error naming the entry and field.
  json missing = Rec("jobs_running.json");
  missing["jobs"][2].erase("comment");
  EXPECT_EQ(Api().ParseJobs(missing).status().message(),
            "slurmrestd v0.0.38 GET /slurm/v0.0.38/jobs: jobs[2].comment: missing (expected a string)");
  json mistyped = Rec("nodes_busy.json");
  mistyped["nodes"][0]["gres_used"] = 5;
  EXPECT_EQ(Api().ParseNodes(mistyped).status().message(),
            "slurmrestd v0.0.38 GET /slurm/v0.0.38/nodes: nodes[0].gres_used: expected a string, got number");
  // Optional fields of the wrong type read as empty; unknown fields are ignored.
  json odd = Rec("jobs_running.json");
  odd["jobs"][0]["start_time"] = "soon";
  odd["jobs"][0]["exit_code"] = json::object();
  odd["jobs"][0]["added_in_a_later_release"] = {{"x", 1}};
  Result<std::vector<SlurmJob>> jobs = Api().ParseJobs(odd);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  EXPECT_EQ((*jobs)[0].start_time, 0);
  EXPECT_EQ((*jobs)[0].exit_code, 0);
}

}  // namespace
}  // namespace gpufed::connectors::slurm

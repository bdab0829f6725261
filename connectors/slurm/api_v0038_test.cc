// The v0.0.38 JSON mapping against replies recorded from Slurm 22.05.8 (testdata/).
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "connectors/slurm/api.h"
#include "connectors/slurm/slurm_client.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(GPUFED_SOURCE_DIR) + "/connectors/slurm/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json Fixture(const std::string& name) {
  json j = json::parse(ReadFixture(name), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name;
  return j;
}

const ApiMapping& Api() { return *FindApiMapping("v0.0.38"); }

TEST(ApiV0038, DefaultAndExplicitVersionsResolve) {
  EXPECT_EQ(FindApiMapping(""), FindApiMapping("v0.0.38"));
  EXPECT_EQ(FindApiMapping("v0.0.40"), nullptr);
  EXPECT_EQ(Api().NodesPath(), "/slurm/v0.0.38/nodes");
  EXPECT_EQ(Api().JobPath(42), "/slurm/v0.0.38/job/42");
  EXPECT_EQ(Api().SubmitPath(), "/slurm/v0.0.38/job/submit");
}

TEST(ApiV0038, ParsesIdleNodeWithGres) {
  Result<std::vector<SlurmNode>> nodes = Api().ParseNodes(Fixture("nodes_idle.json"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  const SlurmNode& n = (*nodes)[0];
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
}

TEST(ApiV0038, ParsesBusyNodeUsage) {
  Result<std::vector<SlurmNode>> nodes = Api().ParseNodes(Fixture("nodes_busy.json"));
  ASSERT_TRUE(nodes.ok());
  const SlurmNode& n = (*nodes)[0];
  EXPECT_EQ(n.state, "allocated");
  EXPECT_EQ(n.alloc_cpus, 2);
  ASSERT_EQ(n.gres_used.size(), 2u);
  EXPECT_EQ(n.gres_used[0].count, 2);
  EXPECT_EQ(n.gres_used[0].indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(n.gres_used[1].indices, (std::vector<int>{2}));
}

TEST(ApiV0038, ParsesPartitions) {
  Result<std::vector<SlurmPartition>> parts = Api().ParsePartitions(Fixture("partitions.json"));
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].name, "gpu");
  EXPECT_EQ((*parts)[0].nodes, "gpunode1");
  EXPECT_EQ((*parts)[0].state, "UP");
  EXPECT_TRUE((*parts)[0].is_default);
}

TEST(ApiV0038, ParsesRunningAndFinishedJobs) {
  Result<std::vector<SlurmJob>> running = Api().ParseJobs(Fixture("jobs_running.json"));
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 8u);
  const SlurmJob& j4 = (*running)[3];
  EXPECT_EQ(j4.job_id, 4);
  EXPECT_EQ(j4.state, "RUNNING");
  EXPECT_EQ(j4.nodes, "gpunode1");
  ASSERT_EQ(j4.gres.size(), 1u);
  EXPECT_EQ(j4.gres[0].type, "a100");
  EXPECT_EQ(j4.gres[0].indices, (std::vector<int>{0, 1}));
  EXPECT_GT(j4.start_time, 0);
  EXPECT_EQ(j4.time_limit_minutes, 5);
  EXPECT_EQ((*running)[5].state_reason, "Resources");

  Result<std::vector<SlurmJob>> done = Api().ParseJobs(Fixture("jobs_finished.json"));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ((*done)[5].state, "FAILED");
  EXPECT_EQ((*done)[5].exit_code, 768);  // exit 3
  EXPECT_EQ((*done)[4].state, "CANCELLED");
  EXPECT_EQ((*done)[6].state, "COMPLETED");
  // gres_detail is gone once a job ends; the per-node request still says what it held.
  ASSERT_EQ((*done)[4].gres.size(), 1u);
  EXPECT_EQ((*done)[4].gres[0].type, "a100_1g.5gb");
  EXPECT_EQ((*done)[4].gres[0].count, 1);
}

TEST(ApiV0038, SubmitOfHeldJobHasIdAndInformationalError) {
  json reply = Fixture("submit_held.json");
  Result<int64_t> id = Api().ParseSubmit(reply);
  ASSERT_TRUE(id.ok());
  EXPECT_GT(*id, 0);
  EXPECT_EQ(Api().ParseErrors(reply).size(), 1u);
}

TEST(ApiV0038, RecordedFailuresMapToStatusCodes) {
  struct Case {
    const char* file;
    StatusCode code;
  } cases[] = {
      {"submit_invalid_partition.json", StatusCode::kInvalidArgument},
      {"submit_disabled_key.json", StatusCode::kInvalidArgument},
      {"job_not_found.json", StatusCode::kNotFound},
      {"nodes_rejected_token.json", StatusCode::kUnavailable},
      {"nodes_slurmctld_down.json", StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    json reply = Fixture(c.file);
    Status s = StatusFromSlurmErrors(Api().ParseErrors(reply), 500, "test");
    EXPECT_EQ(s.code(), c.code) << c.file << ": " << s.ToString();
  }
  Status invalid = StatusFromSlurmErrors(Api().ParseErrors(Fixture("submit_invalid_partition.json")), 500, "submit");
  EXPECT_NE(invalid.message().find("Invalid partition name specified"), std::string::npos);
  EXPECT_FALSE(Api().ParseSubmit(Fixture("submit_invalid_partition.json")).ok());
}

TEST(ApiV0038, BuildsSubmitBody) {
  JobRequest r;
  r.name = "gpufed-train-a1";
  r.comment = "gpufed/v1 key=k.a1";
  r.partition = "gpu";
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
  EXPECT_EQ(job["gres"], "gpu:a100:2");
  EXPECT_EQ(job["nodelist"], "gpunode1");
  EXPECT_EQ(job["current_working_directory"], "/scratch");
  EXPECT_EQ(job["environment"]["PATH"], "/bin");
  EXPECT_EQ(job["cpus_per_task"], 4);
  EXPECT_EQ(job["memory_per_node"], 1024);
  EXPECT_EQ(job["time_limit"], 10);
  EXPECT_EQ(job["tasks"], 1);
  EXPECT_EQ(job["requeue"], false);
  EXPECT_FALSE(job.contains("required_nodes"));  // a disabled key in v0.0.38
  r.nodes = 2;
  EXPECT_EQ(Api().BuildSubmit(r)["job"]["nodes"], json::array({2, 2}));
}

TEST(ApiV0038, WrongShapesAreUnavailableNotCrashes) {
  for (const char* text : {"[]", "null", "42", "\"x\"", "{}", "{\"nodes\": {}}", "{\"nodes\": null}"}) {
    json j = json::parse(text);
    EXPECT_EQ(Api().ParseNodes(j).status().code(), StatusCode::kUnavailable) << text;
    EXPECT_EQ(Api().ParseJobs(j).status().code(), StatusCode::kUnavailable) << text;
    EXPECT_EQ(Api().ParsePartitions(j).status().code(), StatusCode::kUnavailable) << text;
    EXPECT_FALSE(Api().ParseSubmit(j).ok()) << text;
    Api().ParseErrors(j);
  }
  // Entries and fields of the wrong type are skipped or read as empty.
  json odd = json::parse(R"json({"nodes": [1, "x", null, {"name": 7}, {"name": "n1", "cpus": "many", "gres": 5,
      "state": ["idle"], "partitions": "gpu", "real_memory": 1e300, "alloc_cpus": -4}],
      "jobs": [{"job_id": "1"}, {"job_id": 2, "exit_code": "x", "gres_detail": [1, "gpu:a:1(IDX:0)"],
      "start_time": -5, "comment": {}}], "errors": [3, {"error_number": "x"}]})json");
  Result<std::vector<SlurmNode>> nodes = Api().ParseNodes(odd);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ((*nodes)[0].cpus, 0);
  EXPECT_EQ((*nodes)[0].alloc_cpus, 0);
  EXPECT_TRUE((*nodes)[0].gres.empty());
  Result<std::vector<SlurmJob>> jobs = Api().ParseJobs(odd);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].start_time, 0);
  EXPECT_EQ((*jobs)[0].gres.size(), 1u);
  EXPECT_EQ(Api().ParseErrors(odd).size(), 1u);
}

TEST(ApiV0038, TruncatedAndMutatedRecordingsNeverCrash) {
  std::mt19937 rng(7);
  for (const char* file : {"nodes_busy.json", "jobs_running.json", "jobs_finished.json", "partitions.json"}) {
    std::string text = ReadFixture(file);
    for (int i = 0; i < 300; ++i) {
      std::string t = text;
      if (i % 3 == 0) t = t.substr(0, rng() % t.size());
      else for (int k = 0; k < 8; ++k) t[rng() % t.size()] = static_cast<char>(rng() % 128);
      json j = json::parse(t, nullptr, false);
      (void)Api().ParseNodes(j);
      (void)Api().ParseJobs(j);
      (void)Api().ParsePartitions(j);
      (void)Api().ParseErrors(j);
      (void)Api().ParseSubmit(j);
    }
  }
}

TEST(Jwt, ReadsExpiryAndUserWithoutCheckingTheSignature) {
  // {"exp":1795307406,"iat":1795307405,"sun":"root"} as `scontrol token` makes it.
  std::string token = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE3OTUzMDc0MDYsImlhdCI6MTc5NTMwNzQwNSwic3VuIjoicm9vdCJ9.sig";
  Result<JwtClaims> claims = ParseJwt(token);
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->exp, 1795307406);
  EXPECT_EQ(claims->user, "root");
  EXPECT_EQ(ParseJwt("bogus").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(ParseJwt("a.!!!.c").status().code(), StatusCode::kUnauthenticated);
  EXPECT_EQ(ParseJwt("a.bm90anNvbg.c").status().code(), StatusCode::kUnauthenticated);  // "notjson"
}

}  // namespace
}  // namespace gpufed::connectors::slurm

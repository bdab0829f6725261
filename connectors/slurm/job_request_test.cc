#include "connectors/slurm/job_request.h"

#include <gtest/gtest.h>

namespace gpufed::connectors::slurm {
namespace {

Action Submit() {
  Action a;
  a.kind = ActionKind::kSubmit;
  a.key = "0f3c.a2";
  a.workload = "train-bert";
  a.tenant = "team-nlp";
  a.attempt = 2;
  a.nodes = {{"gpunode1", {0, 1}}};
  a.duration = Duration::FromSeconds(3600);
  a.resume_from = Duration::FromSeconds(600);
  a.checkpoint_interval = Duration::FromSeconds(300);
  a.cpu_milli = 1500;
  a.memory_bytes = int64_t{3} << 30;
  a.run.command = {"python3", "train.py"};
  a.run.args = {"--name", "it's"};
  a.run.env = {{"EPOCHS", "3"}};
  a.run.working_dir = "/scratch/nlp";
  return a;
}

TEST(JobTag, RoundTripsAndIgnoresOtherComments) {
  JobTag tag{"0f3c.a2", "train-bert", "team-nlp", 2};
  std::optional<JobTag> back = DecodeJobTag(EncodeJobTag(tag));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, "0f3c.a2");
  EXPECT_EQ(back->workload, "train-bert");
  EXPECT_EQ(back->tenant, "team-nlp");
  EXPECT_EQ(back->attempt, 2);
  EXPECT_FALSE(DecodeJobTag(""));
  EXPECT_FALSE(DecodeJobTag("my own job"));
  EXPECT_FALSE(DecodeJobTag("gpufed/v1 workload=x"));  // no key
  EXPECT_TRUE(DecodeJobTag("gpufed/v1 key=k attempt=notanumber"));
}

TEST(JobTag, SeparatorsInValuesCannotForgeFields) {
  std::optional<JobTag> back = DecodeJobTag(EncodeJobTag({"k.a1", "w key=evil", "t", 1}));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, "k.a1");
}

// A replica's term (gpufed run --store) marks the jobs it submits with its lease epoch; a
// controller alone writes none.
TEST(BuildJobRequest, CarriesTheLeadersEpochBesideTheKey) {
  Action a = Submit();
  Result<JobRequest> alone = BuildJobRequest(a, {{"gpunode1"}, "gpu:a100:2"}, {"gpu", {}, "/home/gpufed"});
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(alone->comment.find("epoch="), std::string::npos);
  EXPECT_EQ(alone->environment.count("GPUFED_LEADER_EPOCH"), 0u);
  a.leader_epoch = 7;
  Result<JobRequest> r = BuildJobRequest(a, {{"gpunode1"}, "gpu:a100:2"}, {"gpu", {}, "/home/gpufed"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->environment.at("GPUFED_LEADER_EPOCH"), "7");
  std::optional<JobTag> tag = DecodeJobTag(r->comment);
  ASSERT_TRUE(tag);
  EXPECT_EQ(tag->key, "0f3c.a2");
  EXPECT_EQ(tag->leader_epoch, 7);
  EXPECT_EQ(DecodeJobTag("gpufed/v1 key=k epoch=-3")->leader_epoch, 0);
  EXPECT_EQ(DecodeJobTag("gpufed/v1 key=k epoch=9x")->leader_epoch, 0);
}

TEST(BuildJobRequest, MapsRunSpecPlacementAndLimits) {
  Result<JobRequest> r = BuildJobRequest(Submit(), {{"gpunode1"}, "gpu:a100:2"}, {"gpu", {}, "/home/gpufed"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->name, "gpufed-train-bert-a2");
  EXPECT_EQ(r->name, JobNameFor("train-bert", 2));
  EXPECT_EQ(DecodeJobTag(r->comment)->key, "0f3c.a2");
  EXPECT_EQ(r->partition, "gpu");
  EXPECT_EQ(r->account, "");  // no mapping: the Slurm user's default account
  EXPECT_EQ(r->qos, "");
  EXPECT_EQ(r->gres, "gpu:a100:2");
  EXPECT_EQ(r->nodelist, "gpunode1");
  EXPECT_EQ(r->working_dir, "/scratch/nlp");
  EXPECT_EQ(r->standard_output, "/scratch/nlp/gpufed-train-bert-a2-%j.out");
  EXPECT_NE(r->script.find("exec 'python3' 'train.py' '--name' 'it'\\''s'\n"), std::string::npos) << r->script;
  EXPECT_EQ(r->script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_EQ(r->environment.at("EPOCHS"), "3");
  EXPECT_EQ(r->environment.at("GPUFED_KEY"), "0f3c.a2");
  EXPECT_EQ(r->environment.at("GPUFED_ATTEMPT"), "2");
  EXPECT_EQ(r->environment.at("GPUFED_RESUME_FROM_SECONDS"), "600");
  EXPECT_EQ(r->environment.at("GPUFED_CHECKPOINT_INTERVAL_SECONDS"), "300");
  EXPECT_FALSE(r->environment.at("PATH").empty());
  EXPECT_EQ(r->cpus_per_task, 2);
  EXPECT_EQ(r->memory_per_node_mb, 3072);
  // 50 minutes left, plus a quarter: 63 minutes (rounded up).
  EXPECT_EQ(r->time_limit_minutes, 63);
}

TEST(BuildJobRequest, RefusesRunSpecWithoutCommand) {
  Action a = Submit();
  a.run.command.clear();
  a.run.image = "nvcr.io/nvidia/pytorch:24.01";
  Result<JobRequest> r = BuildJobRequest(a, {}, {"", {}, "/home/gpufed"});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("run.command"), std::string::npos);
}

TEST(BuildJobRequest, ChargesTheTenantsAccountAndRunsInTheSiteWorkDirNeverTmp) {
  Action a = Submit();
  a.run.working_dir.clear();
  Result<JobRequest> r = BuildJobRequest(a, {}, {"gpu", {"proj_nlp", "high"}, "/srv/gpufed/"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->account, "proj_nlp");
  EXPECT_EQ(r->qos, "high");
  EXPECT_EQ(r->working_dir, "/srv/gpufed/");
  EXPECT_EQ(r->standard_output, "/srv/gpufed/gpufed-train-bert-a2-%j.out");
  // Without a site folder: the Slurm user's home, by convention.
  EXPECT_EQ(DefaultWorkDir("gpufed"), "/home/gpufed");
  EXPECT_EQ(DefaultWorkDir("root"), "/root");
  r = BuildJobRequest(a, {}, {"gpu", {}, DefaultWorkDir("gpufed")});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->working_dir, "/home/gpufed");
  EXPECT_EQ(r->standard_output.rfind("/home/gpufed/gpufed-train-bert-a2-", 0), 0u);
  // Nothing known at all (no user, no site folder, no run.workingDir): refused rather
  // than left to slurmrestd's own working directory.
  r = BuildJobRequest(a, {}, {"gpu", {}, DefaultWorkDir("")});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(kWorkDirAnnotation), std::string::npos);
}

TEST(BuildJobRequest, GangMembersOnOneNodeListItOnce) {
  Action a = Submit();
  a.nodes = {{"n1", {0}}, {"n1", {1}}, {"n2", {0}}};
  Result<JobRequest> r = BuildJobRequest(a, {{"n1", "n1", "n2"}, "gpu:a100:1"}, {"", {}, "/home/gpufed"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodelist, "n1,n2");
  EXPECT_EQ(r->nodes, 3);
}

TEST(TimeLimit, AddsSlackAndRoundsUp) {
  EXPECT_EQ(TimeLimitMinutes(Duration()), 0);
  EXPECT_EQ(TimeLimitMinutes(Duration::FromSeconds(30)), 6);     // 30 s + 5 min
  EXPECT_EQ(TimeLimitMinutes(Duration::FromSeconds(3600)), 75);  // 60 + 15
}

TEST(ShellQuote, QuotesEverything) {
  EXPECT_EQ(ShellQuote("a b"), "'a b'");
  EXPECT_EQ(ShellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
  EXPECT_EQ(ShellQuote("'"), "''\\'''");
}

}  // namespace
}  // namespace gpufed::connectors::slurm

#include "connectors/kubernetes/job_builder.h"

#include <gtest/gtest.h>

namespace gpufed::connectors::kubernetes {
namespace {

using nlohmann::json;

Action Submit() {
  Action a;
  a.kind = ActionKind::kSubmit;
  a.key = "train-llm-3f2a9c1d.a2";
  a.workload = "train-llm";
  a.tenant = "team-nlp";
  a.attempt = 2;
  a.nodes = {{"gpu-node-1", {0, 1, 2, 3}}};
  a.cpu_milli = 16000;
  a.memory_bytes = int64_t{64} << 30;
  a.duration = Duration::FromSeconds(3600);
  a.resume_from = Duration::FromSeconds(600);
  a.checkpoint_interval = Duration::FromSeconds(300);
  a.run.image = "registry.example/llm:1.2";
  a.run.command = {"python", "train.py"};
  a.run.env = {{"EPOCHS", "3"}};
  return a;
}

JobContext Context() {
  JobContext c;
  c.ns = "ml";
  c.nodes["gpu-node-1"] = {{{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}},
                           {{"nvidia.com/gpu", "present", "NoSchedule"}, {"dedicated", "x", "NoSchedule"}}};
  return c;
}

TEST(JobName, IsDeterministicAndDns) {
  EXPECT_EQ(JobName("train-llm-3f2a9c1d.a2"), "gpufed-train-llm-3f2a9c1d-a2");
  EXPECT_EQ(JobName("train-llm-3f2a9c1d.a2"), JobName("train-llm-3f2a9c1d.a2"));
  std::string odd = JobName("Team_X/Workload.With.Dots-and-a-very-long-name-that-goes-on-and-on-forever.a13");
  EXPECT_LE(odd.size(), 63u);
  EXPECT_EQ(odd.substr(odd.size() - 4), "-a13");
  EXPECT_NE(JobName("a_b.a1"), JobName("a-b.a1"));  // lossy sanitising is disambiguated
}

TEST(JobBuilder, RequestsWholeGpusPinsTheNodeAndToleratesGpuTaints) {
  Result<json> job = BuildJob(Submit(), Context());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  const json& pod = (*job)["spec"]["template"]["spec"];
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(c["resources"]["requests"]["nvidia.com/gpu"], "4");
  EXPECT_EQ(c["resources"]["requests"]["cpu"], "16000m");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
               ["matchExpressions"][0]["values"][0],
            "gpu-node-1");
  EXPECT_EQ(pod["tolerations"].size(), 1u);  // nvidia.com/gpu only: "dedicated" is not a GPU taint
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_EQ((*job)["spec"]["backoffLimit"], 0);
  EXPECT_EQ((*job)["spec"]["activeDeadlineSeconds"], (3600 - 600) * 3 / 2);
  EXPECT_EQ((*job)["metadata"]["labels"]["gpufed.io/workload-uid"], "train-llm-3f2a9c1d");
  EXPECT_EQ((*job)["metadata"]["labels"]["gpufed.io/attempt"], "2");
  EXPECT_EQ((*job)["metadata"]["annotations"]["gpufed.io/action-key"], "train-llm-3f2a9c1d.a2");
  EXPECT_EQ((*job)["metadata"]["annotations"]["gpufed.io/resume-from-seconds"], "600");
  EXPECT_FALSE(pod.contains("priorityClassName"));  // numeric priorities have no class
}

TEST(JobBuilder, CarriesPriorityClassAndPolicyRevision) {
  Action a = Submit();
  a.priority_class = "high";
  a.policy_revision = "sha256:abc";
  Result<json> job = BuildJob(a, Context());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ((*job)["spec"]["template"]["spec"]["priorityClassName"], "high");
  EXPECT_EQ((*job)["metadata"]["annotations"]["gpufed.io/policy-revision"], "sha256:abc");
}

// A replica's term marks the Jobs it creates with its lease epoch; a controller alone
// writes none.
TEST(JobBuilder, CarriesTheLeadersEpochBesideTheKey) {
  Action a = Submit();
  Result<json> alone = BuildJob(a, Context());
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_FALSE((*alone)["metadata"]["annotations"].contains("gpufed.io/leader-epoch"));
  a.leader_epoch = 12;
  Result<json> job = BuildJob(a, Context());
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ((*job)["metadata"]["annotations"]["gpufed.io/leader-epoch"], "12");
  EXPECT_EQ((*job)["metadata"]["annotations"]["gpufed.io/action-key"], a.key);
}

TEST(JobBuilder, MapsMigProfileToMixedResourceByDefaultAndSingleOnSingleStrategyNodes) {
  Action a = Submit();
  a.nodes = {{"mig-node", {0}}};
  a.mig_profile = "1g.10gb";
  JobContext ctx = Context();
  Result<json> mixed = BuildJob(a, ctx);
  ASSERT_TRUE(mixed.ok());
  const json& limits = (*mixed)["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  EXPECT_EQ(limits["nvidia.com/mig-1g.10gb"], "1");
  EXPECT_FALSE(limits.contains("nvidia.com/gpu"));

  ctx.nodes["mig-node"] = {
      {{"nvidia.com/mig.strategy", "single"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"}}, {}};
  Result<json> single = BuildJob(a, ctx);
  ASSERT_TRUE(single.ok());
  const json& pod = (*single)["spec"]["template"]["spec"];
  EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
  EXPECT_EQ(pod["nodeSelector"]["nvidia.com/gpu.product"], "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb");
}

TEST(JobBuilder, GangBecomesIndexedJobWithOnePodPerNode) {
  Action a = Submit();
  a.nodes = {{"n1", {0, 1}}, {"n2", {0, 1}}};
  Result<json> job = BuildJob(a, Context());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["spec"]["parallelism"], 2);
  EXPECT_EQ((*job)["spec"]["completionMode"], "Indexed");
  EXPECT_TRUE((*job)["spec"]["template"]["spec"]["affinity"].contains("podAntiAffinity"));
}

TEST(JobBuilder, ProvisionedPoolUsesThePoolSelector) {
  Action a = Submit();
  a.nodes = {{"", {0, 1}}};
  a.provision_pool = "h100";
  JobContext ctx = Context();
  ctx.pool_selector = {{"cloud.google.com/gke-nodepool", "h100"}};
  Result<json> job = BuildJob(a, ctx);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-nodepool"], "h100");
  EXPECT_FALSE((*job)["spec"]["template"]["spec"].contains("affinity"));
}

TEST(JobBuilder, PodsRunRestrictedAndWithoutTheServiceAccountToken) {
  for (const auto& nodes : {std::vector<NodeAssignment>{{"gpu-node-1", {0}}},
                            std::vector<NodeAssignment>{{"n1", {0, 1}}, {"n2", {0, 1}}}}) {
    Action a = Submit();
    a.nodes = nodes;
    Result<json> job = BuildJob(a, Context());
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    const json& pod = (*job)["spec"]["template"]["spec"];
    EXPECT_EQ(pod["automountServiceAccountToken"], false);
    EXPECT_EQ(pod["securityContext"]["runAsNonRoot"], true);
    EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    ASSERT_EQ(pod["containers"].size(), 1u);
    const json& sc = pod["containers"][0]["securityContext"];
    EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
    EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"}));
    EXPECT_FALSE(sc["capabilities"].contains("add"));
    EXPECT_FALSE(sc.value("privileged", false));
    // Left writable on purpose: GPU images write caches into their root file system.
    EXPECT_FALSE(sc.contains("readOnlyRootFilesystem"));
  }
}

TEST(JobBuilder, RefusesAWorkloadWithoutImage) {
  Action a = Submit();
  a.run.image.clear();
  EXPECT_EQ(BuildJob(a, Context()).status().code(), StatusCode::kInvalidArgument);
}

TEST(LabelValue, KeepsValidValuesAndHashesOthers) {
  EXPECT_EQ(LabelValue("team-nlp"), "team-nlp");
  std::string v = LabelValue("team nlp/with spaces");
  EXPECT_LE(v.size(), 63u);
  EXPECT_NE(v, "team-nlp-with-spaces");
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes

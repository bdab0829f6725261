#include "connectors/slurm/observe.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>

namespace gpufed::connectors::slurm {
namespace {

model::Cluster OnPrem() {
  model::Cluster c;
  c.metadata.name = "hpc";
  model::NodePool whole;
  whole.name = "a100";
  whole.count = 1;
  whole.gpu.model = "A100-40GB";
  whole.gpu.count = 2;
  whole.gpu.memory = Quantity::FromUnits(int64_t{40} << 30);
  model::NodePool mig;
  mig.name = "a100-mig";
  mig.count = 1;
  mig.gpu.model = "A100-40GB";
  mig.gpu.count = 1;
  mig.gpu.memory = Quantity::FromUnits(int64_t{40} << 30);
  mig.gpu.sharing = model::GpuSharing::kMig;
  mig.gpu.mig_profiles = {"1g.5gb"};
  c.node_pools = {whole, mig};
  c.pricing.currency = "EUR";
  c.pricing.gpu_hour["A100-40GB"] = *Money::Parse("0.70", "EUR");
  return c;
}

SlurmNode Node(const std::string& used) {
  SlurmNode n;
  n.name = "gpunode1";
  n.state = "mixed";
  n.cpus = 2;
  n.alloc_cpus = 1;
  n.real_memory_mb = 2000;
  n.gres = ParseGres("gpu:a100:2,gpu:a100_1g.5gb:4");
  n.gres_used = ParseGres(used);
  n.partitions = {"gpu"};
  return n;
}

TEST(ObserveNodes, AbsurdCpuAndMemoryFiguresSaturateInsteadOfOverflowing) {
  // Found by fuzzing slurm_response: a node reporting 20,004,294,967,294 MB of memory.
  SlurmNode n = Node("gpu:a100:0(IDX:N/A),gpu:a100_1g.5gb:0(IDX:N/A)");
  n.real_memory_mb = 20004294967294;
  n.alloc_memory_mb = -9000000000000000000;
  n.alloc_cpus = std::numeric_limits<int>::min();
  std::map<std::string, NodeGroup> groups;
  std::vector<ObservedNode> seen = ObserveNodes({n}, OnPrem(), "gpu", &groups);
  ASSERT_FALSE(seen.empty());
  for (const ObservedNode& o : seen) {
    EXPECT_EQ(o.free_memory, std::numeric_limits<int64_t>::max());
    EXPECT_EQ(o.free_cpu_milli, (int64_t{2} - std::numeric_limits<int>::min()) * 1000);
  }
  n.real_memory_mb = 100;
  n.alloc_memory_mb = 400;  // more allocated than present: nothing free, not negative
  for (const ObservedNode& o : ObserveNodes({n}, OnPrem(), "gpu", &groups)) EXPECT_EQ(o.free_memory, 0);
}

TEST(ObserveNodes, SplitsWholeGpusAndMigSlicesIntoPools) {
  std::map<std::string, NodeGroup> groups;
  std::vector<ObservedNode> out =
      ObserveNodes({Node("gpu:a100:0(IDX:N/A),gpu:a100_1g.5gb:0(IDX:N/A)")}, OnPrem(), "gpu", &groups);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "gpunode1");
  EXPECT_EQ(out[0].pool, "a100");
  ASSERT_EQ(out[0].gpus.size(), 2u);
  EXPECT_EQ(out[0].gpus[0].free_milli, 1000);
  EXPECT_EQ(out[0].gpus[0].free_memory, int64_t{40} << 30);
  EXPECT_EQ(out[0].free_cpu_milli, 1000);
  EXPECT_EQ(out[0].free_memory, int64_t{2000} << 20);
  EXPECT_EQ(out[1].name, "gpunode1:a100+mig");
  EXPECT_EQ(out[1].pool, "a100-mig");
  ASSERT_EQ(out[1].gpus.size(), 1u);
  EXPECT_EQ(out[1].gpus[0].mig_slices_used, 3);  // 4 of 7 slices configured, all free
  EXPECT_EQ(out[1].gpus[0].free_memory, int64_t{20} << 30);
  EXPECT_EQ(groups.at("gpunode1").gres_type, "a100");
  EXPECT_EQ(groups.at("gpunode1:a100+mig").mig_base, "a100");
  EXPECT_EQ(groups.at("gpunode1:a100+mig").mig_types, (std::vector<std::string>{"a100_1g.5gb"}));
}

TEST(ObserveNodes, UsedIndicesFollowGresConfOrderAcrossTypes) {
  std::vector<ObservedNode> out =
      ObserveNodes({Node("gpu:a100:1(IDX:1),gpu:a100_1g.5gb:2(IDX:2-3)")}, OnPrem(), "", nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gpus[0].free_milli, 1000);
  EXPECT_EQ(out[0].gpus[1].free_milli, 0);
  EXPECT_EQ(out[1].gpus[0].mig_slices_used, 5);
  EXPECT_EQ(out[1].gpus[0].free_memory, int64_t{10} << 30);
}

// Slurm 22.05 after a slurmctld restart: a cancelled job's GPUs stay in gres_used of a
// node that is idle again. Idle means nothing is allocated: every GPU is free.
TEST(ObserveNodes, AnIdleNodeHasEveryGpuFreeWhateverGresUsedStillSays) {
  SlurmNode stale = Node("gpu:a100:2(IDX:0-1),gpu:a100_1g.5gb:0(IDX:N/A)");
  stale.state = "idle";
  stale.alloc_cpus = 0;
  std::vector<ObservedNode> out = ObserveNodes({stale}, OnPrem(), "", nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gpus[0].free_milli, 1000);
  EXPECT_EQ(out[0].gpus[1].free_milli, 1000);
  // The same report from a node that runs something is believed.
  stale.state = "mixed";
  out = ObserveNodes({stale}, OnPrem(), "", nullptr);
  EXPECT_EQ(out[0].gpus[0].free_milli, 0);
}

TEST(ObserveNodes, PendingJobsPinnedToTheNodeHoldTheirGpus) {
  SlurmJob pending;
  pending.state = "PENDING";
  pending.required_nodes = "gpunode1";
  pending.cpus = 1;
  pending.gres_per_node = ParseGres("gpu:a100:2");
  SlurmJob slice = pending;
  slice.gres_per_node = ParseGres("gpu:a100_1g.5gb:1");
  SlurmJob elsewhere = pending;
  elsewhere.required_nodes = "gpunode2";
  std::vector<ObservedNode> out = ObserveNodes({Node("gpu:a100:0(IDX:N/A),gpu:a100_1g.5gb:0(IDX:N/A)")}, OnPrem(), "",
                                               nullptr, {pending, slice, elsewhere});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gpus[0].free_milli, 0);
  EXPECT_EQ(out[0].gpus[1].free_milli, 0);
  EXPECT_EQ(out[0].free_cpu_milli, 0);  // 1 allocated + 2 pending jobs of 1 CPU, clamped at zero
  EXPECT_EQ(out[1].gpus[0].mig_slices_used, 4);
}

TEST(ObserveNodes, OtherPartitionsAndUnhealthyNodes) {
  SlurmNode other = Node("");
  other.partitions = {"cpu"};
  EXPECT_TRUE(ObserveNodes({other}, OnPrem(), "gpu", nullptr).empty());
  SlurmNode drained = Node("");
  drained.state_flags = {"DRAIN"};
  std::vector<ObservedNode> out = ObserveNodes({drained}, OnPrem(), "gpu", nullptr);
  ASSERT_FALSE(out.empty());
  EXPECT_FALSE(out[0].ready);
  SlurmNode down = Node("");
  down.state = "down";
  EXPECT_FALSE(ObserveNodes({down}, OnPrem(), "", nullptr)[0].ready);
}

TEST(ObserveNodes, NodeWithoutGpusKeepsItsName) {
  SlurmNode cpu = Node("");
  cpu.gres.clear();
  std::vector<ObservedNode> out = ObserveNodes({cpu}, OnPrem(), "", nullptr);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].name, "gpunode1");
  EXPECT_TRUE(out[0].gpus.empty());
}

TEST(MapJobState, CoversSlurmStates) {
  bool lost = false;
  EXPECT_EQ(MapJobState("PENDING", false, &lost), RunState::kStarting);
  EXPECT_EQ(MapJobState("CONFIGURING", false, &lost), RunState::kStarting);
  EXPECT_EQ(MapJobState("RUNNING", false, &lost), RunState::kRunning);
  EXPECT_EQ(MapJobState("COMPLETING", false, &lost), RunState::kRunning);
  EXPECT_EQ(MapJobState("SUSPENDED", false, &lost), RunState::kRunning);
  EXPECT_EQ(MapJobState("COMPLETED", false, &lost), RunState::kSucceeded);
  EXPECT_EQ(MapJobState("FAILED", false, &lost), RunState::kFailed);
  EXPECT_EQ(MapJobState("TIMEOUT", false, &lost), RunState::kFailed);
  EXPECT_EQ(MapJobState("OUT_OF_MEMORY", false, &lost), RunState::kFailed);
  EXPECT_FALSE(lost);
  EXPECT_EQ(MapJobState("CANCELLED", false, &lost), RunState::kCancelled);
  EXPECT_EQ(MapJobState("CANCELLED", true, &lost), RunState::kPreempted);
  EXPECT_EQ(MapJobState("PREEMPTED", false, &lost), RunState::kPreempted);
  EXPECT_EQ(MapJobState("NODE_FAIL", false, &lost), RunState::kFailed);
  EXPECT_TRUE(lost);
  EXPECT_EQ(MapJobState("BOOT_FAIL", false, &lost), RunState::kFailed);
  EXPECT_TRUE(lost);
  EXPECT_EQ(MapJobState("SOMETHING_NEW", false, &lost), RunState::kStarting);
}

TEST(ObserveJob, ReportsTimesReasonsAndMeteredCost) {
  SlurmJob job;
  job.job_id = 6;
  job.state = "FAILED";
  job.exit_code = 768;
  job.start_time = 1000;
  job.end_time = 4600;
  job.gres = ParseGres("gpu:a100:2(IDX:0-1)");
  TimeFrame frame{5000, Duration::FromSeconds(100)};
  ObservedWorkload w = ObserveJob(job, {"k.a1", "w", "t", 1}, OnPrem(), false, frame);
  EXPECT_EQ(w.key, "k.a1");
  EXPECT_EQ(w.state, RunState::kFailed);
  EXPECT_NE(w.reason.find("exit code 3"), std::string::npos) << w.reason;
  EXPECT_EQ(w.started_at.millis(), (100 - 4000) * 1000);
  EXPECT_EQ(w.finished_at.millis(), (100 - 400) * 1000);
  EXPECT_DOUBLE_EQ(w.gpu_seconds, 7200);
  EXPECT_EQ(w.cost.ToString(), Money::Parse("1.40", "EUR")->ToString());  // 2 GPU-hours at 0.70

  job.state = "RUNNING";
  job.gres = ParseGres("gpu:a100_1g.5gb:7(IDX:2-8)");
  w = ObserveJob(job, {"k.a1", "w", "t", 1}, OnPrem(), false, frame);
  EXPECT_EQ(w.state, RunState::kRunning);
  EXPECT_DOUBLE_EQ(w.gpu_seconds, 4000);  // seven 1g slices = one GPU, 4000 s so far
  EXPECT_EQ(w.progress.millis(), 4000 * 1000);

  job.state = "PENDING";
  job.start_time = 0;
  job.state_reason = "Resources";
  w = ObserveJob(job, {"k.a1", "w", "t", 1}, OnPrem(), false, frame);
  EXPECT_EQ(w.state, RunState::kStarting);
  EXPECT_NE(w.reason.find("Resources"), std::string::npos);
  EXPECT_DOUBLE_EQ(w.gpu_seconds, 0);
}

}  // namespace
}  // namespace gpufed::connectors::slurm

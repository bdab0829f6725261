// Snapshot documents: what the journal records of a pass's placer inputs reads back as
// the same inputs, and a malformed document is refused naming the field.
#include "controller/audit/inputs.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "controller/audit/record.h"

namespace gpufed::audit {
namespace {

placement::Snapshot Sample() {
  placement::Snapshot s;
  s.now = Duration::FromSeconds(5400);
  s.onprem_queue_depth = 3;
  placement::ObservedCluster observed;
  observed.nodes.push_back({"a100-0", "a100", true, 64000, -1, {{500, 1 << 30, 2}}});
  s.observed["hamburg"] = observed;
  placement::ObservedCluster down;
  down.healthy = false;
  down.down_reason = "cluster unhealthy since +01:00:00: last error: connection refused";
  s.observed["oslo"] = down;
  model::ResourceRequest share;
  share.gpus = 1;
  share.gpu_memory = Quantity::FromUnits(int64_t{12} << 30);
  share.cpu = Quantity::FromUnits(4);
  model::ResourceRequest gang;
  gang.gpus = 8;
  gang.topology = model::Topology::kSameNode;
  gang.gpu_models = {"H100-80GB"};
  s.pod_mix = {{share, 30}, {gang, 2}};
  return s;
}

TEST(SnapshotDocument, ThePodMixAndObservedInventoryReadBackAsRecorded) {
  const placement::Snapshot s = Sample();
  const nlohmann::json doc = SnapshotDocument(s, "/repo");
  EXPECT_EQ(doc["format"], kSnapshotFormat);
  Result<SnapshotInputs> back = ParseSnapshotDocument(nlohmann::json::parse(doc.dump()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  const placement::Snapshot& r = back->snapshot;
  EXPECT_EQ(r.now, s.now);
  EXPECT_EQ(r.onprem_queue_depth, 3);
  ASSERT_EQ(r.observed.at("hamburg").nodes.size(), 1u);
  EXPECT_EQ(r.observed.at("hamburg").nodes[0].gpus[0].free_milli, 500);
  EXPECT_TRUE(r.observed.at("hamburg").down_reason.empty());
  EXPECT_FALSE(r.observed.at("oslo").healthy);
  EXPECT_EQ(r.observed.at("oslo").down_reason, s.observed.at("oslo").down_reason);
  ASSERT_EQ(r.pod_mix.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const model::ResourceRequest& a = s.pod_mix[i].first;
    const model::ResourceRequest& b = r.pod_mix[i].first;
    EXPECT_EQ(r.pod_mix[i].second, s.pod_mix[i].second);
    EXPECT_EQ(b.gpus, a.gpus);
    EXPECT_EQ(b.gpu_memory.milli(), a.gpu_memory.milli());
    EXPECT_EQ(b.cpu.milli(), a.cpu.milli());
    EXPECT_EQ(b.topology, a.topology);
    EXPECT_EQ(b.gpu_models, a.gpu_models);
  }
}

TEST(SnapshotDocument, WithoutAFixedMixNoPodMixIsRecorded) {
  placement::Snapshot s = Sample();
  s.pod_mix.clear();
  EXPECT_FALSE(SnapshotDocument(s, "").contains("podMix"));
}

TEST(SnapshotDocument, AMalformedPodMixIsRefusedNamingTheField) {
  nlohmann::json doc = SnapshotDocument(Sample(), "/repo");
  doc["podMix"][1]["count"] = "many";
  Result<SnapshotInputs> bad = ParseSnapshotDocument(doc);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("snapshot.podMix[1]"), std::string::npos) << bad.status().ToString();
  doc = SnapshotDocument(Sample(), "/repo");
  doc["podMix"][0]["request"]["gpuModels"] = {1, 2};
  bad = ParseSnapshotDocument(doc);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("snapshot.podMix[0].request.gpuModels"), std::string::npos);
  doc = SnapshotDocument(Sample(), "/repo");
  doc["podMix"][0]["count"] = -4;
  EXPECT_FALSE(ParseSnapshotDocument(doc).ok());
}

}  // namespace
}  // namespace gpufed::audit

namespace gpufed::audit {
namespace {

// The direct writer of a cluster's report is the canonical text of its document, byte for
// byte (object names are hashes of these bytes), on random reports: names with quotes,
// control and non-ASCII bytes, unreported (-1) and extreme values, empty GPU lists.
TEST(ObservedClusterText, IsTheCanonicalTextOfTheDocumentOnRandomReports) {
  std::mt19937_64 rng(20261124);
  const std::vector<std::string> names = {"dgx-0", "n\"q", "tab\there",    "caf\xc3\xa9",
                                          "\x01",  "",     "bad\xff utf8", std::string(40, 'x')};
  auto pick = [&](const std::vector<std::string>& from) { return from[rng() % from.size()]; };
  const std::vector<int64_t> values = {
      -1, 0, 1, 1000, int64_t{80} << 30, std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (int round = 0; round < 500; ++round) {
    placement::ObservedCluster c;
    c.healthy = rng() % 2 == 0;
    if (rng() % 3 == 0) c.down_reason = pick(names);
    c.nodes.resize(rng() % 5);
    for (placement::ObservedNode& n : c.nodes) {
      n.name = pick(names);
      n.pool = pick(names);
      n.ready = rng() % 3 != 0;
      n.free_cpu_milli = values[rng() % values.size()];
      n.free_memory = values[rng() % values.size()];
      n.gpus.resize(rng() % 9);
      for (placement::ObservedGpu& g : n.gpus) {
        g.free_milli = static_cast<int>(rng() % 1001) - (rng() % 7 == 0 ? 2000 : 0);
        g.free_memory = values[rng() % values.size()];
        g.mig_slices_used = static_cast<int>(rng() % 8);
      }
    }
    ASSERT_EQ(ObservedClusterText(c), DumpPayload(ObservedClusterDocument(c))) << "round " << round;
  }
}

}  // namespace
}  // namespace gpufed::audit

// WorkloadDocumentText must write exactly the bytes of the nlohmann document it replaced:
// spec hashes already in journals (and snapshot addresses) depend on them.
#include "controller/audit/workload_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "controller/audit/inputs.h"
#include "controller/audit/record.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

// Random workloads: every field set or left at its default, values from a small
// alphabet that includes what escaping must handle (quotes, control bytes, non-ASCII,
// invalid UTF-8) and keys that sort unlike their declaration order.
class RandomWorkload {
 public:
  explicit RandomWorkload(uint32_t seed) : rng_(seed) {}

  model::Workload Next() {
    model::Workload w;
    w.metadata.name = Text();
    if (Chance()) w.metadata.labels = Map();
    if (Chance()) w.metadata.annotations = Map();
    w.tenant = Text();
    if (Chance()) {
      w.priority_class = Text();
    }
    w.has_priority = Chance();
    w.priority = Int(-5, 1000);
    w.type = static_cast<model::WorkloadType>(Int(0, 5));
    model::ResourceRequest& r = w.resources;
    r.nodes = Chance() ? Int(0, 4) : 1;
    r.gpus_per_node = Chance() ? Int(0, 8) : 0;
    r.gpus = Chance() && r.nodes > 1 ? r.nodes * r.gpus_per_node : Int(0, 16);
    if (Chance()) r.gpu_memory = Quantity::FromMilli(Int(0, 1) * int64_t{1000} * Int(1, 1 << 30));
    if (Chance()) r.gpu_share = Quantity::FromMilli(Int(0, 1000));
    if (Chance()) r.gpu_models = List();
    if (Chance()) r.mig_profile = Text();
    r.topology = Chance() ? model::Topology::kSameNode : model::Topology::kAny;
    if (Chance()) r.cpu = Quantity::FromMilli(Int(0, 64000));
    if (Chance()) r.memory = Quantity::FromMilli(int64_t{1000} * Int(0, 1 << 30));
    w.has_duration_hint = Chance();
    w.duration_hint = Duration::FromMillis(Int(0, 1 << 30));
    if (Chance()) w.data.dataset = Text();
    if (Chance()) w.data.size = Quantity::FromMilli(int64_t{1000} * Int(0, 1 << 30));
    w.data.sensitivity = static_cast<model::Sensitivity>(Int(0, 3));
    w.data.pii = Chance();
    if (Chance()) w.data.residency = List();
    w.checkpoint.enabled = Chance();
    if (Chance()) w.checkpoint.interval = Duration::FromMillis(Int(0, 1 << 20));
    if (Chance()) w.checkpoint.uri = Text();
    w.preemptible = Chance();
    w.spot = Chance();
    if (Chance()) {
      Result<Money> cap = Money::Parse(std::to_string(Int(0, 100000)) + "." + std::to_string(Int(10, 99)) +
                                       (Chance() ? " EUR" : " USD"));
      if (cap.ok()) w.max_cost = *cap;
    }
    if (Chance()) w.submitted_at = Duration::FromMillis(Int(0, 1 << 30));
    if (Chance()) w.run.image = Text();
    if (Chance()) w.run.command = List();
    if (Chance()) w.run.args = List();
    if (Chance()) w.run.env = Map();
    if (Chance()) w.run.working_dir = Text();
    return w;
  }

 private:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance() { return Int(0, 2) == 0; }
  std::string Text() {
    static constexpr std::string_view kPieces[] = {"a", "Z",    "job-7", "\"",   "\\",   "\n", "\x01", "\x1f", "\x7f",
                                                   "é", "日本", "😀",    "\xff", "\xc3", "/",  "",     " "};
    std::string s;
    for (int i = Int(0, 5); i > 0; --i) s += kPieces[Int(0, std::size(kPieces) - 1)];
    return s;
  }
  std::vector<std::string> List() {
    std::vector<std::string> v;
    for (int i = Int(0, 4); i > 0; --i) v.push_back(Text());
    return v;
  }
  std::map<std::string, std::string> Map() {
    std::map<std::string, std::string> m;
    for (int i = Int(0, 4); i > 0; --i) m[Text()] = Text();
    return m;
  }
  std::mt19937 rng_;
};

TEST(WorkloadDocumentText, ByteIdenticalToTheDocumentsCanonicalText) {
  RandomWorkload gen(20261201);
  for (int i = 0; i < 20000; ++i) {
    model::Workload w = gen.Next();
    const std::string expected = DumpPayload(WorkloadDocument(w));
    ASSERT_EQ(WorkloadDocumentText(w), expected) << "workload " << i;
  }
}

TEST(WorkloadDocumentText, TheSpecHashIsTheHashOfTheText) {
  RandomWorkload gen(7);
  for (int i = 0; i < 200; ++i) {
    model::Workload w = gen.Next();
    EXPECT_EQ(WorkloadSpecHash(w), "sha256:" + Sha256Hex(DumpPayload(WorkloadDocument(w))));
  }
}

TEST(WorkloadDocumentText, AppendsAfterWhatTheBufferHolds) {
  model::Workload w;
  w.metadata.name = "train-1";
  w.tenant = "ml";
  std::string out = "prefix";
  AppendWorkloadDocumentText(w, &out);
  EXPECT_EQ(
      out,
      "prefix{\"apiVersion\":\"gpufed/v1alpha1\",\"kind\":\"Workload\",\"metadata\":{\"name\":\"train-1\"},"
      "\"spec\":{\"data\":{\"sensitivity\":\"internal\"},\"resources\":{},\"tenant\":\"ml\",\"type\":\"batch\"}}");
}

}  // namespace
}  // namespace gpufed::audit

#include "controller/model/view_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>

#include "controller/model/views.h"

namespace gpufed::model {
namespace {

// Every leaf of a view (arrays are leaves) with its value.
void Leaves(const nlohmann::json& view, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  for (auto it = view.begin(); it != view.end(); ++it) {
    const std::string path = prefix + it.key();
    if (it->is_object() && !it->empty()) {
      Leaves(*it, path + ".", out);
    } else {
      out[path] = *it;
    }
  }
}

bool TypeMatches(FieldType type, const nlohmann::json& v) {
  switch (type) {
    case FieldType::kString: return v.is_string();
    case FieldType::kBoolean: return v.is_boolean();
    case FieldType::kInteger: return v.is_number_integer();
    case FieldType::kStringList:
    case FieldType::kPoolList: return v.is_array();
    default: return v.is_number();
  }
}

// The view builds exactly the fields of the table, with the table's types.
void ExpectViewMatchesTable(const nlohmann::json& view, std::span<const ViewField> table) {
  std::map<std::string, nlohmann::json> leaves;
  Leaves(view, "", leaves);
  for (const auto& [path, value] : leaves) {
    const ViewField* f = FindViewField(table, path);
    ASSERT_NE(f, nullptr) << "the view has " << path << ", the table does not (add it to view_fields.cc)";
    EXPECT_TRUE(TypeMatches(f->type, value))
        << path << " is " << value.dump() << ", the table says " << FieldTypeName(f->type);
  }
  for (const ViewField& f : table) {
    bool built = false;
    for (const auto& [path, value] : leaves) built = built || FindViewField(table, path) == &f;
    EXPECT_TRUE(built) << "the table has " << f.path << ", the view does not build it";
    EXPECT_FALSE(f.description.empty()) << f.path;
    EXPECT_EQ(f.path.ends_with(".*"), !f.key.empty()) << f.path << ": a map field names an example key";
    if (f.domain == FieldDomain::kEnum) {
      EXPECT_FALSE(f.values.empty()) << f.path;
    }
  }
}

TEST(ViewFields, WorkloadViewBuildsExactlyTheTable) {
  Workload w;
  w.metadata.name = "w";
  w.metadata.labels = {{"team", "a"}};
  w.max_cost = *Money::Parse("10 EUR");
  ExpectViewMatchesTable(WorkloadView(w), WorkloadViewFields());
}

// The placer looks classes up on a view of some members: each member it builds is the
// whole view's, and it builds no other.
TEST(ViewFields, AViewOfSomeMembersHasExactlyThoseOfTheWholeView) {
  Workload w;
  w.metadata.name = "w";
  w.metadata.labels = {{"team", "a"}};
  w.max_cost = *Money::Parse("10 EUR");
  w.data.residency = {"eu"};
  const nlohmann::json whole = WorkloadView(w);
  ViewMembers all;
  for (auto it = whole.begin(); it != whole.end(); ++it) {
    EXPECT_EQ(WorkloadView(w, ViewMembers{it.key()}), nlohmann::json({{it.key(), *it}})) << it.key();
    all.insert(it.key());
  }
  EXPECT_EQ(WorkloadView(w, all), whole);
  EXPECT_EQ(WorkloadView(w, ViewMembers{"data", "tenant", "node"}),
            nlohmann::json({{"data", whole["data"]}, {"tenant", whole["tenant"]}}));
  EXPECT_EQ(WorkloadView(w, ViewMembers{}), nlohmann::json::object());
}

// A cache may keep a workload's view under WorkloadViewKey: every field the view shows
// must move the key. Each mutator changes one field; together they must change every
// leaf of the view (so a field added to the view needs a mutator here, and then the key).
TEST(ViewFields, WorkloadViewKeyChangesWithEveryFieldOfTheView) {
  Workload base;
  base.metadata.name = "w";
  base.metadata.labels = {{"team", "a"}};
  base.tenant = "t";
  base.priority = 5;
  base.priority_class = "normal";
  base.resources.gpus = 2;
  base.resources.gpu_models = {"A100"};
  base.data.dataset = "d";
  base.data.residency = {"EU"};
  base.max_cost = *Money::Parse("10 EUR");
  using Mutator = std::function<void(Workload&)>;
  const std::vector<std::pair<std::string, Mutator>> mutators = {
      {"name", [](Workload& w) { w.metadata.name = "x"; }},
      {"label value", [](Workload& w) { w.metadata.labels["team"] = "b"; }},
      {"tenant", [](Workload& w) { w.tenant = "u"; }},
      {"priority", [](Workload& w) { w.priority = 6; }},
      {"priorityClass", [](Workload& w) { w.priority_class = "high"; }},
      {"type", [](Workload& w) { w.type = WorkloadType::kInference; }},
      {"gpus", [](Workload& w) { w.resources.gpus = 3; }},
      {"gpuMemory", [](Workload& w) { w.resources.gpu_memory = Quantity::FromMilli(int64_t{1} << 40); }},
      {"gpuShare", [](Workload& w) { w.resources.gpu_share = Quantity::FromMilli(500); }},
      {"gpuModels", [](Workload& w) { w.resources.gpu_models = {"H100"}; }},
      {"migProfile", [](Workload& w) { w.resources.mig_profile = "1g.10gb"; }},
      {"topology", [](Workload& w) { w.resources.topology = Topology::kSameNode; }},
      {"gang", [](Workload& w) { w.resources.nodes = 2, w.resources.gpus_per_node = 8; }},
      {"cpu", [](Workload& w) { w.resources.cpu = Quantity::FromMilli(4000); }},
      {"memory", [](Workload& w) { w.resources.memory = Quantity::FromMilli(int64_t{1} << 40); }},
      {"durationHint", [](Workload& w) { w.duration_hint = Duration::FromSeconds(60); }},
      {"dataset", [](Workload& w) { w.data.dataset = "e"; }},
      {"size", [](Workload& w) { w.data.size = Quantity::FromMilli(int64_t{1} << 30); }},
      {"sensitivity", [](Workload& w) { w.data.sensitivity = Sensitivity::kRestricted; }},
      {"pii", [](Workload& w) { w.data.pii = true; }},
      {"residency", [](Workload& w) { w.data.residency = {"US"}; }},
      {"checkpoint", [](Workload& w) { w.checkpoint.enabled = true; }},
      {"checkpoint interval", [](Workload& w) { w.checkpoint.interval = Duration::FromSeconds(600); }},
      {"preemptible", [](Workload& w) { w.preemptible = true; }},
      {"spot", [](Workload& w) { w.spot = true; }},
      {"submittedAt", [](Workload& w) { w.submitted_at = Duration::FromSeconds(7); }},
      {"maxCost", [](Workload& w) { w.max_cost = *Money::Parse("11 EUR"); }},
      {"no maxCost", [](Workload& w) { w.max_cost.reset(); }},
  };
  std::map<std::string, nlohmann::json> base_leaves;
  Leaves(WorkloadView(base), "", base_leaves);
  std::set<std::string> changed;
  for (const auto& [what, mutate] : mutators) {
    Workload w = base;
    mutate(w);
    std::map<std::string, nlohmann::json> leaves;
    Leaves(WorkloadView(w), "", leaves);
    ASSERT_NE(leaves, base_leaves) << what << " does not change the view";
    EXPECT_NE(WorkloadViewKey(w), WorkloadViewKey(base)) << what << " changes the view but not its key";
    for (const auto& [path, value] : base_leaves) {
      if (!leaves.count(path) || leaves.at(path) != value) changed.insert(path);
    }
  }
  for (const auto& [path, value] : base_leaves) EXPECT_TRUE(changed.count(path)) << path << ": no mutator changes it";
  EXPECT_EQ(WorkloadViewKey(base), WorkloadViewKey(Workload(base)));
}

TEST(ViewFields, ClusterViewBuildsExactlyTheTable) {
  Cluster c;
  c.metadata.labels = {{"site", "x"}};
  c.attributes.labels = {{"tier", "1"}};
  c.pricing.gpu_hour = {{"L4", *Money::Parse("1.00")}};
  c.pricing.spot_gpu_hour = {{"L4", *Money::Parse("0.50")}};
  c.pricing.currency = "USD";  // a priced cluster has pricing.rates
  c.node_pools.emplace_back();
  ExchangeRates rates;
  rates.rates.push_back({"USD", "EUR", 920000000, {}});
  const CurrencyConverter converter({rates});
  ExpectViewMatchesTable(ClusterView(c, &converter), ClusterViewFields());
  ExpectViewMatchesTable(NodePoolView(c.node_pools.front()), NodePoolViewFields());
}

TEST(ViewFields, ResourcesGpusCountsEveryGpuOfAGang) {
  Workload w;
  w.resources.nodes = 2;
  w.resources.gpus_per_node = 8;
  nlohmann::json view = WorkloadView(w);
  EXPECT_EQ(view["resources"]["gpus"], 16);
  EXPECT_EQ(view["resources"]["gpusPerNode"], 8);
  EXPECT_EQ(view["resources"]["nodes"], 2);
  w.resources = ResourceRequest{.gpus = 4};
  EXPECT_EQ(WorkloadView(w)["resources"]["gpusPerNode"], 4);
}

TEST(ViewFields, UnknownPathsSayWhatIsThere) {
  EXPECT_EQ(DescribeUnknownPath(WorkloadViewFields(), "data.sensitivity", ""), "");
  EXPECT_EQ(DescribeUnknownPath(WorkloadViewFields(), "metadata.labels.team", ""), "");
  EXPECT_EQ(DescribeUnknownPath(WorkloadViewFields(), "data.sensitivty", ""),
            "unknown field 'sensitivty' (did you mean 'sensitivity'?)");
  EXPECT_EQ(DescribeUnknownPath(WorkloadViewFields(), "data.pii.x", ""),
            "'x' is below data.pii, which has no sub-fields");
  EXPECT_THAT(DescribeUnknownPath(WorkloadViewFields(), "checkpoint", ""),
              ::testing::StartsWith("'checkpoint' is a group of fields; name one of them: checkpoint.enabled"));
  EXPECT_THAT(DescribeUnknownPath(ClusterViewFields(), "nodePools", "cluster."),
              ::testing::HasSubstr("rules test node pools with node.* paths"));
}

TEST(ViewFields, OperatorsKnowTheirFieldTypes) {
  EXPECT_TRUE(OperatorApplies(*FindRuleOperator("gte"), FieldType::kBytes));
  EXPECT_FALSE(OperatorApplies(*FindRuleOperator("gte"), FieldType::kString));
  EXPECT_TRUE(OperatorApplies(*FindRuleOperator("contains"), FieldType::kStringList));
  EXPECT_FALSE(OperatorApplies(*FindRuleOperator("contains"), FieldType::kString));
  EXPECT_EQ(FindRuleOperator("nope"), nullptr);
}

}  // namespace
}  // namespace gpufed::model

// Every adapter against mutated and truncated copies of its real recordings: values
// removed, nulled or replaced by other types, deep in the parsed tree, and texts cut off.
// Each parser must give either a result or an error that names version, endpoint and
// field; a reply never yields a submitted job id it does not contain; and a required field
// that is removed or mistyped is always an error, never a silently empty value.
#include <algorithm>
#include <random>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "connectors/slurm/api.h"
#include "connectors/slurm/api_reader.h"
#include "connectors/slurm/fixtures_for_test.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;
using Pointer = json::json_pointer;

// "slurmrestd v0.0.42 GET /slurm/v0.0.42/jobs: jobs[3].job_state: missing ..."
const std::regex& ShapeError() {
  static const std::regex kRe(R"(^slurmrestd (v0\.0\.\d+) (GET|POST|DELETE) /slurm/\1/[^ ]+: [^ :]+: .+$)");
  return kRe;
}

// Long lists are cut to two entries: the shapes stay, the run time drops.
json Trimmed(json j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (value.is_array() && value.size() > 2) value.erase(value.begin() + 2, value.end());
      value = Trimmed(std::move(value));
    }
  } else if (j.is_array()) {
    for (json& v : j) v = Trimmed(std::move(v));
  }
  return j;
}

void Paths(const json& j, const Pointer& at, std::vector<Pointer>& out) {
  if (!at.empty()) out.push_back(at);
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) Paths(value, at / key, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Paths(j[i], at / i, out);
  }
}

const std::vector<json>& Replacements() {
  static const std::vector<json> kValues = {
      nullptr, 0, -1, 1e300, "x", "", true, json::object(), json::array(), json::array({1}),
      json{{"set", true}, {"number", "x"}}, json{{"set", true}, {"infinite", false}, {"number", 1.5}}};
  return kValues;
}

// The fields each parser must insist on, by the list they sit in.
bool Required(const std::string& version, const Pointer& p) {
  std::string s = p.to_string();
  std::smatch m;
  static const std::regex kField(R"(^/(nodes|jobs|partitions)/\d+/([a-z_]+)$)");
  if (!std::regex_match(s, m, kField)) return s == "/nodes" || s == "/jobs" || s == "/partitions";
  static const std::set<std::string> kNode = {"name", "state", "cpus", "alloc_cpus", "real_memory", "gres", "gres_used",
                                              "partitions"};
  static const std::set<std::string> kJob = {"job_id", "name", "comment", "job_state", "tres_per_node", "gres_detail"};
  std::set<std::string> partition = {"name", "nodes"};
  partition.insert(version == "v0.0.38" ? "state" : "partition");
  std::string list = m[1], field = m[2];
  if (list == "nodes") return kNode.count(field) > 0;
  if (list == "jobs") return kJob.count(field) > 0 || (version != "v0.0.38" && field == "required_nodes");
  return partition.count(field) > 0;
}

bool HasJobId(const json& tree, int64_t id) {
  for (const char* at : {"/job_id", "/result/job_id"}) {
    Pointer p(at);
    if (tree.is_object() && tree.contains(p) && tree[p].is_number_integer() && tree[p].get<int64_t>() == id) return true;
  }
  return false;
}

class SlurmApiMutations : public ::testing::TestWithParam<std::string> {
 protected:
  const ApiMapping& Api() const { return *FindApiMapping(GetParam()); }

  // Runs every parser on `tree`; `own` names the parser the recording belongs to and
  // `must_fail` says the mutation broke a field that parser requires.
  void Check(const json& tree, const std::string& own, bool must_fail, const std::string& what) {
    SCOPED_TRACE(what);
    auto shape = [&](const Status& s, const std::string& parser) {
      if (s.ok()) return;
      EXPECT_EQ(s.code(), StatusCode::kUnavailable) << parser << ": " << s.ToString();
      EXPECT_TRUE(std::regex_match(s.message(), ShapeError())) << parser << ": " << s.message();
      EXPECT_EQ(s.message().find("slurmrestd " + GetParam() + " "), 0u) << s.message();
    };
    Status nodes = Api().ParseNodes(tree).status();
    Status jobs = Api().ParseJobs(tree).status();
    Status parts = Api().ParsePartitions(tree).status();
    Status ping = Api().ParsePing(tree).status();
    shape(nodes, "nodes");
    shape(jobs, "jobs");
    shape(parts, "partitions");
    shape(ping, "ping");
    Result<SubmitReply> submit = Api().ParseSubmit(tree);
    shape(submit.status(), "submit");
    if (submit.ok() && submit->job_id != 0) {
      EXPECT_GT(submit->job_id, 0);
      EXPECT_TRUE(HasJobId(tree, submit->job_id)) << "a job id the reply does not hold: " << submit->job_id;
    }
    Status cancel = Api().ParseCancel(tree, 7);
    if (!cancel.ok()) {
      EXPECT_EQ(cancel.message().find("slurmrestd " + GetParam() + " DELETE " + Api().JobPath(7) + ": "), 0u)
          << cancel.message();
    }
    (void)Api().ParseErrors(tree);
    (void)Api().ParseWarnings(tree);
    if (must_fail) {
      const Status& mine = own == "nodes" ? nodes : own == "jobs" ? jobs : parts;
      EXPECT_FALSE(mine.ok()) << own << " accepted a broken required field";
    }
  }

  static std::string Owner(const std::string& file) {
    if (file.rfind("nodes", 0) == 0) return "nodes";
    if (file.rfind("job", 0) == 0) return "jobs";
    if (file.rfind("partitions", 0) == 0) return "partitions";
    return "";
  }
};

TEST_P(SlurmApiMutations, EveryTreeMutationGivesAResultOrANamedError) {
  std::mt19937 rng(18);
  size_t checked = 0, required_hits = 0;
  for (const std::string& file : testing::JsonFixtures(GetParam())) {
    json base = Trimmed(testing::Fixture(GetParam(), file));
    ASSERT_FALSE(base.is_discarded()) << file;
    Check(base, Owner(file), false, file + " as recorded");
    std::vector<Pointer> paths;
    Paths(base, Pointer(), paths);
    for (const Pointer& p : paths) {
      bool required = !Owner(file).empty() && Required(GetParam(), p) && base[p.parent_pointer()].is_object();
      if (base[p].is_null() && !required) continue;
      // Every field the parsers read sits within three levels; deeper ones (job_resources,
      // meta) are sampled.
      const std::string where = p.to_string();
      size_t depth = static_cast<size_t>(std::count(where.begin(), where.end(), '/'));
      if (!required && depth > 3 && rng() % 4 != 0) continue;
      // Mutated in place and put back: copying the tree per mutation costs more than the
      // parsing (and minutes under the sanitizers).
      json saved = base[p];
      json& parent = base[p.parent_pointer()];
      if (parent.is_object()) {
        parent.erase(p.back());
      } else {
        parent.erase(parent.begin() + static_cast<long>(std::stoul(p.back())));
      }
      Check(base, Owner(file), required, file + " without " + p.to_string());
      if (parent.is_object()) {
        parent[p.back()] = saved;
      } else {
        parent.insert(parent.begin() + static_cast<long>(std::stoul(p.back())), saved);
      }
      ++checked;
      // Each path: removed, and two other values (all of them for required fields).
      std::vector<size_t> picks;
      for (size_t i = 0; i < Replacements().size(); ++i) {
        if (required) picks.push_back(i);
      }
      if (!required) picks = {rng() % Replacements().size(), rng() % Replacements().size()};
      for (size_t i : picks) {
        // A required string may be null (22.05 prints unset strings so); other types not.
        bool breaks = required && !(Replacements()[i].is_null() && saved.is_string()) &&
                      std::string(JsonTypeName(Replacements()[i])) != JsonTypeName(saved);
        base[p] = Replacements()[i];
        Check(base, Owner(file), breaks, file + " with " + p.to_string() + " = " + Replacements()[i].dump());
        base[p] = saved;
        ++checked;
        required_hits += breaks ? 1 : 0;
      }
    }
  }
  EXPECT_GT(checked, 2000u);
  EXPECT_GT(required_hits, 300u);  // the strictness checks really ran
}

TEST_P(SlurmApiMutations, TruncatedTextsAreNamedErrors) {
  std::mt19937 rng(7);
  for (const std::string& file : testing::JsonFixtures(GetParam())) {
    std::string text = testing::FixtureText(GetParam(), file);
    for (int i = 0; i < 20; ++i) {
      std::string cut = text.substr(0, rng() % text.size());
      json j = json::parse(cut, nullptr, false);
      if (!j.is_discarded()) continue;  // rarely a prefix is itself valid JSON
      Check(j, Owner(file), !Owner(file).empty(), file + " cut at " + std::to_string(cut.size()));
      Status nodes = Api().ParseNodes(j).status();
      EXPECT_NE(nodes.message().find(": reply: not JSON"), std::string::npos) << nodes.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVersions, SlurmApiMutations, ::testing::ValuesIn(testing::AllVersions()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '.' ? '_' : c;
                           return name;
                         });

}  // namespace
}  // namespace gpufed::connectors::slurm

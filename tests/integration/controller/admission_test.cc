// One admission rule for every path (issue 41): a workload the repository, a scenario and
// the API would each take in is refused by each of them alike. A priority above its
// tenant's declared maxPriority and an unknown tenant get the same line on every path
// (file, line, field and message, as `gpufed validate` prints it); only a tenant token is
// told less about an unknown tenant (it cannot tell one from another tenant's).
#include <gtest/gtest.h>

#include <regex>

#include "controller/config/loader.h"
#include "controller/runtime/scenario_source.h"
#include "policies/engine/validation.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

// alpha declares maxPriority normal (500); kFleet's classes make urgent 5000.
const std::string kTooUrgent = WorkloadYaml("rush", "alpha", 1, "1h", "  priority: urgent\n");
const std::string kGhostTenant = WorkloadYaml("haunt", "ghost", 1, "1h");

std::string Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

// The diagnostics of a repository that holds `file`, one per line.
std::string RepositoryErrors(const std::string& dir, const std::string& file, const std::string& text) {
  Write(dir + "/repo/workloads/" + file, text);
  config::LoadResult loaded = config::LoadRepository({dir + "/repo"}, policy::ProductLoadOptions(nullptr));
  std::string out;
  for (const config::Diagnostic& d : loaded.diagnostics.items()) {
    if (d.severity == config::Severity::kError) out += d.ToString() + "\n";
  }
  std::filesystem::remove(dir + "/repo/workloads/" + file);
  return out;
}

// A scenario's submissions, checked against the active repository.
std::string ScenarioError(const std::string& dir, const std::string& file, const std::string& text,
                          const model::Config& active) {
  Write(dir + "/scenario/" + file, text);
  Write(dir + "/scenario/scenario.yaml", "submissions:\n  - " + file + "\n");
  Result<runtime::ScenarioSource> source = runtime::ScenarioSource::Load(dir + "/scenario/scenario.yaml", active);
  return source.ok() ? "" : source.status().message();
}

// The line `validate` gives for `file` ("FILE:LINE:COL: error: ..."), whatever folder it
// was read from.
std::string LineFor(const std::string& errors, const std::string& file) {
  std::smatch m;
  if (!std::regex_search(errors, m, std::regex(file + R"(:\d+:\d+: [^\n]*)"))) return "";
  return m.str();
}

TEST(Admission, EveryPathRefusesAPriorityAboveTheTenantsCapWithTheSameLine) {
  const std::string dir = FreshDir("admission_priority");
  const std::string repo = RepositoryErrors(dir, "rush.yaml", kTooUrgent);
  const std::string line = LineFor(repo, "rush.yaml");
  ASSERT_NE(line.find("error: spec.priority: priority 5000 is above tenant alpha's maxPriority 500 (normal)"),
            std::string::npos)
      << repo;

  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  // What `gpufed run` checks a scenario's submissions against: the repository.
  config::LoadResult active = config::LoadRepository({dir + "/repo"}, policy::ProductLoadOptions(nullptr));
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(LineFor(ScenarioError(dir, "rush.yaml", kTooUrgent, active.config), "rush.yaml"), line);

  for (const std::string caller : {"alpha", ""}) {  // a tenant token, an admin's
    Result<store::WorkloadRecord> api = h.Ctl().Submit(kTooUrgent, "rush.yaml", By(caller));
    ASSERT_FALSE(api.ok()) << caller;
    EXPECT_EQ(api.status().code(), caller.empty() ? StatusCode::kInvalidArgument : StatusCode::kPermissionDenied);
    EXPECT_EQ(LineFor(api.status().message(), "rush.yaml"), line) << caller;
  }
  // Within the cap, every path takes it.
  const std::string normal = WorkloadYaml("steady", "alpha", 1, "1h", "  priority: normal\n");
  EXPECT_EQ(RepositoryErrors(dir, "steady.yaml", normal), "");
  EXPECT_EQ(ScenarioError(dir, "steady.yaml", normal, active.config), "");
  EXPECT_TRUE(h.Ctl().Submit(normal, "steady.yaml", By("alpha")).ok());
}

TEST(Admission, EveryPathRefusesAnUnknownTenantWithTheSameLineButATenantTokenLearnsNothing) {
  const std::string dir = FreshDir("admission_tenant");
  const std::string repo = RepositoryErrors(dir, "haunt.yaml", kGhostTenant);
  const std::string line = LineFor(repo, "haunt.yaml");
  ASSERT_NE(line.find("spec.tenant: unknown tenant 'ghost'"), std::string::npos) << repo;

  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  config::LoadResult active = config::LoadRepository({dir + "/repo"}, policy::ProductLoadOptions(nullptr));
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(LineFor(ScenarioError(dir, "haunt.yaml", kGhostTenant, active.config), "haunt.yaml"), line);
  Result<store::WorkloadRecord> admin = h.Ctl().Submit(kGhostTenant, "haunt.yaml", By(""));
  ASSERT_FALSE(admin.ok());
  EXPECT_EQ(admin.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LineFor(admin.status().message(), "haunt.yaml"), line);
  // A tenant token gets the answer it gets for any tenant not its own.
  Result<store::WorkloadRecord> token = h.Ctl().Submit(kGhostTenant, "haunt.yaml", By("alpha"));
  Result<store::WorkloadRecord> other = h.Ctl().Submit(WorkloadYaml("x", "beta", 1, "1h"), "x.yaml", By("alpha"));
  ASSERT_FALSE(token.ok());
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(token.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(token.status().ToString(), other.status().ToString());
}

}  // namespace
}  // namespace gpufed::testing

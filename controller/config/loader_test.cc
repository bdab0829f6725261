#include "controller/config/loader.h"
#include "controller/config/repository.h"
#include "policies/stdlib/stdlib.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <sys/stat.h>

namespace gpufed::config {
namespace {

namespace fs = std::filesystem;
const fs::path kSource = GPUFED_SOURCE_DIR;

struct Expected {
  int line, column;
  std::string field, message;
};

// Each fixture declares its expected diagnostics in "# expect: L:C FIELD | MESSAGE" lines.
std::vector<Expected> ReadExpectations(const fs::path& file) {
  std::vector<Expected> out;
  std::ifstream in(file);
  std::string line;
  static const std::regex kExpect(R"(# expect: (\d+):(\d+) ?(\S*) \| (.*))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kExpect)) out.push_back({std::stoi(m[1]), std::stoi(m[2]), m[3], m[4]});
  }
  return out;
}

std::string Dump(const LoadResult& r) {
  std::string s;
  for (const Diagnostic& d : r.diagnostics.items()) s += "  " + d.ToString() + "\n";
  return s;
}

TEST(Loader, EveryErrorFixtureReportsExactPositions) {
  int fixtures = 0;
  for (const auto& entry : fs::directory_iterator(kSource / "tests/fixtures/loader")) {
    if (entry.path().extension() != ".yaml") continue;
    ++fixtures;
    SCOPED_TRACE(entry.path().filename().string());
    std::vector<Expected> expected = ReadExpectations(entry.path());
    ASSERT_FALSE(expected.empty()) << "fixture declares no expectation";
    LoadOptions product;
    product.library = &stdlib::Files();  // the import fixtures name the embedded library
    LoadResult result = LoadRepository({entry.path().string()}, product);
    EXPECT_EQ(result.diagnostics.size(), expected.size()) << Dump(result);
    for (const Expected& e : expected) {
      bool found = false;
      for (const Diagnostic& d : result.diagnostics.items()) {
        found = found || (d.line == e.line && d.column == e.column && d.field == e.field &&
                          d.message.find(e.message) != std::string::npos && d.file == entry.path().string());
      }
      EXPECT_TRUE(found) << "missing " << e.line << ":" << e.column << " " << e.field << " | " << e.message
                         << "\ngot:\n"
                         << Dump(result);
    }
  }
  EXPECT_GE(fixtures, 20);
}

TEST(Loader, QuickstartIsValid) {
  LoadResult result = LoadRepository({(kSource / "examples/quickstart").string()});
  EXPECT_TRUE(result.ok()) << Dump(result);
  EXPECT_EQ(result.config.clusters.size(), 3u);
  EXPECT_GE(result.config.workloads.size(), 30u);
  EXPECT_EQ(result.config.revision.rfind("sha256:", 0), 0u);
}

class TempRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpufed-loader-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
  }
  fs::path dir_;
};

TEST_F(TempRepo, CollectsErrorsOfEveryFileInOnePass) {
  Write("a.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {wieght: 1}\n");
  Write("sub/b.yml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t2}\nspec: {weight: -1}\n");
  Write(".hidden/c.yaml", "not: [valid");
  LoadResult result = LoadRepository({dir_.string()});
  ASSERT_EQ(result.diagnostics.size(), 2u) << Dump(result);
  EXPECT_THAT(result.diagnostics.items()[0].message, ::testing::HasSubstr("did you mean 'weight'"));
  EXPECT_THAT(result.diagnostics.items()[1].message, ::testing::HasSubstr("out of range"));
  EXPECT_EQ(result.files, 2);
}

TEST_F(TempRepo, RefusesOversizeFiles) {
  Write("big.yaml", std::string(2048, '#'));
  LoadOptions options;
  options.max_file_bytes = 1024;
  LoadResult result = LoadRepository({dir_.string()}, options);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_THAT(result.diagnostics.items()[0].message, ::testing::HasSubstr("above the limit"));
}

TEST_F(TempRepo, HonoursIgnoreFile) {
  Write(".gpufedignore", "kube\n");
  Write("kube/config.yaml", "apiVersion: v1\nkind: Config\n");
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 1}\n");
  LoadResult result = LoadRepository({dir_.string()});
  EXPECT_TRUE(result.ok()) << Dump(result);
  EXPECT_EQ(result.files, 1);
}

// The ignore list is read whole, bounded: a FIFO (which would block an unbounded read) or
// a list past 1 MiB fails the load by the file's name instead of listing what it leaves out.
TEST_F(TempRepo, AnIgnoreListThatIsNotAFileOrTooLargeFailsTheLoadByName) {
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 1}\n");
  ASSERT_EQ(::mkfifo((dir_ / ".gpufedignore").c_str(), 0600), 0);
  LoadResult fifo = LoadRepository({dir_.string()});
  ASSERT_EQ(fifo.diagnostics.size(), 1u) << Dump(fifo);
  EXPECT_THAT(fifo.diagnostics.items()[0].message, ::testing::HasSubstr(".gpufedignore: not a regular file"));
  fs::remove(dir_ / ".gpufedignore");
  Write(".gpufedignore", std::string((size_t{1} << 20) + 1, '#'));
  LoadResult large = LoadRepository({dir_.string()});
  ASSERT_EQ(large.diagnostics.size(), 1u) << Dump(large);
  EXPECT_THAT(large.diagnostics.items()[0].message, ::testing::HasSubstr(".gpufedignore: file is"));
  EXPECT_THAT(large.diagnostics.items()[0].message, ::testing::HasSubstr("above the limit"));
}

// Git's files name the commit only as Git would read them: HEAD's ref under refs/ (a ref
// that steps out of the Git folder names nothing), a branch packed in packed-refs, and a
// HEAD that is not a regular file is no commit (read without blocking).
TEST_F(TempRepo, RevisionReadsGitsFilesBoundedAndOnlyUnderRefs) {
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 1}\n");
  const std::string content = LoadRepository({dir_.string()}).config.revision;
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  Write("outside", commit + "\n");
  Write(".git/HEAD", "ref: refs/../../outside\n");
  EXPECT_EQ(LoadRepository({dir_.string()}).config.revision, content);
  Write(".git/HEAD", "ref: refs/heads/packed\n");
  Write(".git/packed-refs", "# pack-refs with: peeled fully-peeled sorted\n" + commit + " refs/heads/packed\n");
  EXPECT_EQ(LoadRepository({dir_.string()}).config.revision, commit + "+" + content.substr(0, 23));
  // Forty characters that are not a commit (a secret a symlink under .git points to, say)
  // never become part of a revision.
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write(".git/refs/heads/main", "ghp_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ\n");
  EXPECT_EQ(LoadRepository({dir_.string()}).config.revision, content);
  fs::remove(dir_ / ".git/HEAD");
  ASSERT_EQ(::mkfifo((dir_ / ".git/HEAD").c_str(), 0600), 0);
  EXPECT_EQ(LoadRepository({dir_.string()}).config.revision, content);
}

TEST_F(TempRepo, RevisionDependsOnContentOnly) {
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 1}\n");
  std::string first = LoadRepository({dir_.string()}).config.revision;
  EXPECT_EQ(first, LoadRepository({dir_.string()}).config.revision);
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 2}\n");
  EXPECT_NE(first, LoadRepository({dir_.string()}).config.revision);
}

// A checkout's revision is its commit and the content read: an edit under the same
// commit (not committed yet) is another revision, and committing it names the new commit.
TEST_F(TempRepo, RevisionOfACheckoutIsItsCommitAndItsContent) {
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 1}\n");
  const std::string content = LoadRepository({dir_.string()}).config.revision;
  Write(".git/HEAD", "ref: refs/heads/main\n");
  Write(".git/refs/heads/main", "0123456789abcdef0123456789abcdef01234567\n");
  const std::string committed = LoadRepository({dir_.string()}).config.revision;
  EXPECT_EQ(committed, "0123456789abcdef0123456789abcdef01234567+" + content.substr(0, 23));
  Write("t.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t1}\nspec: {weight: 2}\n");
  const std::string edited = LoadRepository({dir_.string()}).config.revision;
  EXPECT_NE(edited, committed);
  EXPECT_EQ(edited.rfind("0123456789abcdef0123456789abcdef01234567+sha256:", 0), 0u) << edited;
  Write(".git/refs/heads/main", "89abcdef0123456789abcdef0123456789abcdef\n");
  EXPECT_EQ(LoadRepository({dir_.string()}).config.revision.substr(0, 41), "89abcdef0123456789abcdef0123456789abcdef+");
  EXPECT_EQ(ShortRevision("0123456789abcdef0123456789abcdef01234567+sha256:3f2a9c1d00112233"), "0123456789ab+3f2a9c1d");
  EXPECT_EQ(ShortRevision("sha256:00aa11bb22cc33dd"), "sha256:00aa1");
  // The commit a repository workload's submission record names.
  EXPECT_EQ(RevisionCommit("0123456789abcdef0123456789abcdef01234567+sha256:3f2a9c1d00112233"),
            "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(RevisionCommit("sha256:00aa11bb22cc33dd"), "");
}

TEST_F(TempRepo, ReadsLuaFilesNamedByPolicies) {
  Write("rules/x.lua", "function admit(w) return true end\n");
  Write("p.yaml", "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: p1}\nspec: {lua: [rules/x.lua]}\n");
  LoadResult result = LoadRepository({dir_.string()});
  ASSERT_TRUE(result.ok()) << Dump(result);
  EXPECT_EQ(result.config.lua_sources.at("rules/x.lua"), "function admit(w) return true end\n");
}

TEST(Loader, LoadTextResolvesAgainstContext) {
  LoadResult repo =
      LoadText("apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: team-a}\nspec: {}\n", "t.yaml");
  ASSERT_TRUE(repo.ok()) << Dump(repo);
  std::string workload =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: {tenant: team-a, priority: high, "
      "resources: {gpus: 1}}\n";
  EXPECT_FALSE(LoadText(workload, "w.yaml").ok());
  LoadResult ok = LoadText(workload, "w.yaml", &repo.config);
  ASSERT_TRUE(ok.ok()) << Dump(ok);
  EXPECT_EQ(ok.config.workloads[0].priority, 1000);
}

// A submission's money in a currency its repository cannot convert is reported once per
// currency of the repository, however many places the repository has, and without naming
// any of them: the submission's author (a tenant's token) learns the repository's
// currencies, not which tenant, workload or line holds them.
TEST(Loader, ASubmissionsCurrencyIsCheckedAgainstTheContextsCurrenciesWithoutNamingItsPlaces) {
  std::string repo_text =
      "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: team-a}\nspec: {budget: {limit: \"900 EUR\"}}\n";
  for (int i = 0; i < 50; ++i) {
    repo_text += "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w" + std::to_string(i) +
                 "}\nspec: {tenant: team-a, resources: {gpus: 1}, maxCost: \"10 " + (i % 2 ? "EUR" : "GBP") + "\"}\n";
  }
  repo_text += "---\napiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: team-b}\nspec: {}\n";
  LoadResult repo = LoadText(repo_text, "repo.yaml");
  ASSERT_FALSE(repo.ok());  // GBP and EUR without a rate: the repository's own error, naming its places
  ASSERT_FALSE(repo.diagnostics.items().empty());
  EXPECT_NE(repo.diagnostics.items()[0].ToString().find("(repo.yaml:"), std::string::npos) << Dump(repo);
  const auto submission = [](const std::string& currency) {
    return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: s}\nspec: {tenant: team-b, "
           "resources: {gpus: 1}, maxCost: \"5 " +
           currency + "\"}\n";
  };
  LoadResult eur = LoadText(submission("EUR"), "s.yaml", &repo.config);
  ASSERT_EQ(eur.diagnostics.size(), 1u) << Dump(eur);
  EXPECT_EQ(eur.diagnostics.items()[0].ToString(),
            "s.yaml:4:55: error: spec.maxCost: workload s's maxCost is in EUR, but the repository it is checked "
            "against has money in GBP and no ExchangeRates resource converts GBP and EUR: declare a rate for the pair");
  LoadResult usd = LoadText(submission("USD"), "s.yaml", &repo.config);
  ASSERT_EQ(usd.diagnostics.size(), 2u) << Dump(usd);
  EXPECT_EQ(usd.diagnostics.items()[0].ToString(),
            "s.yaml:4:55: error: spec.maxCost: workload s's maxCost is in USD, but the repository it is checked "
            "against has money in EUR and no ExchangeRates resource converts EUR and USD: declare a rate for the pair");
  EXPECT_EQ(usd.diagnostics.items()[1].ToString(),
            "s.yaml:4:55: error: spec.maxCost: workload s's maxCost is in USD, but the repository it is checked "
            "against has money in GBP and no ExchangeRates resource converts GBP and USD: declare a rate for the pair");
  for (const auto& d : usd.diagnostics.items()) {
    for (const char* secret : {"team-a", "w0", "repo.yaml"}) {
      EXPECT_EQ(d.ToString().find(secret), std::string::npos) << secret << " in " << d.ToString();
    }
  }
  // Within one text both places are the author's own: still named, with their line.
  LoadResult own = LoadText(repo_text, "repo.yaml");
  EXPECT_NE(own.diagnostics.items()[0].ToString().find("but tenant team-a's budget is in EUR (repo.yaml:4)"),
            std::string::npos)
      << Dump(own);
}

TEST(Loader, TenantMaxPriorityIsANumberOrAKnownClass) {
  auto tenant = [](const std::string& cap) {
    return "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec: {maxPriority: " + cap + "}\n";
  };
  LoadResult by_class = LoadText(tenant("high"), "t.yaml");
  ASSERT_TRUE(by_class.ok()) << Dump(by_class);
  EXPECT_EQ(by_class.config.tenants[0].max_priority, 1000);
  EXPECT_EQ(by_class.config.tenants[0].max_priority_class, "high");
  LoadResult by_number = LoadText(tenant("750"), "t.yaml");
  ASSERT_TRUE(by_number.ok()) << Dump(by_number);
  EXPECT_EQ(by_number.config.tenants[0].max_priority, 750);
  LoadResult unknown = LoadText(tenant("sky-high"), "t.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(Dump(unknown).find("t.yaml:4"), std::string::npos) << Dump(unknown);
  EXPECT_NE(Dump(unknown).find("sky-high"), std::string::npos) << Dump(unknown);
  EXPECT_FALSE(LoadText(tenant("[1, 2]"), "t.yaml").ok());
}

TEST(Loader, TenantApiRateLimitIsPerSecondOrPerMinute) {
  auto tenant = [](const std::string& api) {
    return "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec:\n  api: " + api + "\n";
  };
  LoadResult per_second = LoadText(tenant("{rateLimit: 20/s, burst: 40}"), "t.yaml");
  ASSERT_TRUE(per_second.ok()) << Dump(per_second);
  EXPECT_EQ(per_second.config.tenants[0].api_rate_per_second, 20);
  EXPECT_EQ(per_second.config.tenants[0].api_burst, 40);
  LoadResult per_minute = LoadText(tenant("{rateLimit: 600/m}"), "t.yaml");
  ASSERT_TRUE(per_minute.ok()) << Dump(per_minute);
  EXPECT_EQ(per_minute.config.tenants[0].api_rate_per_second, 10);
  for (const char* bad :
       {"{rateLimit: fast}", "{rateLimit: 0/s}", "{rateLimit: 5/h}", "{burst: 0}", "{rateLimit: 5/s, x: 1}"}) {
    LoadResult r = LoadText(tenant(bad), "t.yaml");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(Dump(r).find("t.yaml:5"), std::string::npos) << bad << ": " << Dump(r);
  }
}

// Unset, a tenant's API gets the defaults (so one token cannot take the API from the
// others); "0" lifts the rate limit and 0 the cap on requests in flight.
TEST(Loader, TenantApiLimitsDefaultAndLiftExplicitly) {
  auto tenant = [](const std::string& spec) {
    return "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t}\nspec: " + spec + "\n";
  };
  LoadResult unset = LoadText(tenant("{weight: 1}"), "t.yaml");
  ASSERT_TRUE(unset.ok()) << Dump(unset);
  EXPECT_EQ(unset.config.tenants[0].api_rate_per_second, model::Tenant::kDefaultApiRatePerSecond);
  EXPECT_EQ(unset.config.tenants[0].api_burst, model::Tenant::kDefaultApiBurst);
  EXPECT_EQ(unset.config.tenants[0].api_max_concurrent_requests, model::Tenant::kDefaultApiMaxConcurrentRequests);
  LoadResult lifted = LoadText(tenant("{api: {rateLimit: \"0\", maxConcurrentRequests: 0}}"), "t.yaml");
  ASSERT_TRUE(lifted.ok()) << Dump(lifted);
  EXPECT_EQ(lifted.config.tenants[0].api_rate_per_second, 0);
  EXPECT_EQ(lifted.config.tenants[0].api_max_concurrent_requests, 0);
  LoadResult written = LoadText(tenant("{api: {rateLimit: 5/s, maxConcurrentRequests: 3}}"), "t.yaml");
  ASSERT_TRUE(written.ok()) << Dump(written);
  EXPECT_EQ(written.config.tenants[0].api_burst, 0);  // the written rate's: 5
  EXPECT_EQ(written.config.tenants[0].api_max_concurrent_requests, 3);
  EXPECT_FALSE(LoadText(tenant("{api: {maxConcurrentRequests: -1}}"), "t.yaml").ok());
}

// An API tokens file says "TOKEN admin" and "TOKEN metrics" for roles: no tenant may be
// called so.
TEST(Loader, TenantNamesOfApiRolesAreReserved) {
  for (const char* name : {"admin", "metrics"}) {
    LoadResult r = LoadText(
        std::string("apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: ") + name + "}\nspec: {weight: 1}\n",
        "t.yaml");
    EXPECT_FALSE(r.ok()) << name;
    EXPECT_THAT(Dump(r), testing::HasSubstr("is reserved")) << Dump(r);
  }
}

// A large document is refused by counting its nodes in the event parser, before
// LoadAll builds any of them.
TEST(Loader, ADocumentWithTooManyNodesIsRefusedBeforeItIsBuilt) {
  std::string text = "a: [";
  for (int i = 0; i < 250000; ++i) text += "1,";
  text += "1]\n";
  LoadResult r = LoadText(text, "api/w.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << Dump(r);
  EXPECT_THAT(r.diagnostics.items()[0].message, testing::HasSubstr("more than 200000 nodes"));
  EXPECT_EQ(r.diagnostics.items()[0].file, "api/w.yaml");
}

// yaml-cpp 0.7's LoadAll, the loader's first parser, never returned on a stray ','; the
// loader answers at once with the position and what a ',' is for.
TEST(Loader, StrayCommaIsASyntaxErrorNotAnEndlessLoop) {
  for (const std::string& text : {std::string(","), std::string("\n\n  ,\n")}) {
    SCOPED_TRACE(text);
    LoadResult r = LoadText(text, "api/w.yaml");
    ASSERT_EQ(r.diagnostics.size(), 1u) << Dump(r);
    EXPECT_THAT(r.diagnostics.items()[0].message, testing::HasSubstr("unexpected ','"));
  }
  // Each document parses on its own: the first one's own errors are reported too.
  LoadResult r = LoadText("a: 1\n---\n,", "api/w.yaml");
  const Diagnostic& comma = r.diagnostics.items().back();
  EXPECT_THAT(comma.message, testing::HasSubstr("unexpected ','"));
  EXPECT_EQ(comma.line, 3);
  EXPECT_EQ(comma.column, 1);
}

// Nesting past the parser's own bound says the loader's depth limit, not a syntax error.
TEST(Loader, ExtremeNestingSaysSo) {
  for (const std::string& text : {std::string(100000, '[') + std::string(100000, ']'),
                                  "a:\n  " + std::string(5000, '[') + std::string(5000, ']')}) {
    LoadResult r = LoadText(text, "api/w.yaml");
    ASSERT_EQ(r.diagnostics.size(), 1u) << Dump(r);
    EXPECT_THAT(r.diagnostics.items()[0].message, testing::HasSubstr("nested deeper than 32 levels"));
    EXPECT_EQ(r.diagnostics.items()[0].file, "api/w.yaml");
  }
}

// A rule value with a byte that is not UTF-8 used to end the process: the rule checker
// quotes values through nlohmann's dump(), which throws on invalid UTF-8 (found by
// fuzz_config_yaml). YAML is Unicode text, so the file is refused with the position.
TEST(Loader, InvalidUtf8IsRefusedWithItsPosition) {
  const std::string text =
      "apiVersion: gpufed/v2alpha1\nkind: Policy\nmetadata:\n  name: p\nspec:\n  rules:\n"
      "    - name: r\n      when: {data.pii: tr\xFF"
      "e}\n      require: {cluster.zone: {in: [eu]}}\n";
  LoadResult r = LoadText(text, "policies/p.yaml");
  ASSERT_EQ(r.diagnostics.size(), 1u) << Dump(r);
  const Diagnostic& d = r.diagnostics.items()[0];
  EXPECT_EQ(d.file, "policies/p.yaml");
  EXPECT_EQ(d.line, 8);
  EXPECT_EQ(d.column, 26);
  EXPECT_THAT(d.message, testing::HasSubstr("not valid UTF-8 (byte 0xFF)"));
  // The first byte of a file counts as column 1 of line 1.
  LoadResult first = LoadText("\x80kind: Policy\n", "p.yaml");
  ASSERT_EQ(first.diagnostics.size(), 1u) << Dump(first);
  EXPECT_EQ(first.diagnostics.items()[0].line, 1);
  EXPECT_EQ(first.diagnostics.items()[0].column, 1);
}

TEST_F(TempRepo, DocumentsPerFileAreBounded) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "---\na: 1\n";
  Write("many.yaml", text);
  LoadOptions options;
  options.max_documents_per_file = 10;
  LoadResult r = LoadRepository({dir_.string()}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Dump(r), testing::HasSubstr("too many YAML documents in one file (more than 10)"));
}

}  // namespace
}  // namespace gpufed::config

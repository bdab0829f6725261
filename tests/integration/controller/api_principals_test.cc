// Who did what, over real HTTP on 127.0.0.1: every submission and cancel through the API
// is journalled with the token's name and the tenant before it takes effect (a queued
// workload's cancel too), a submission the journal cannot take answers 503 and stores
// nothing, the repository's workloads name the repository and their revision's commit, and
// no API view shows one tenant another tenant's principals.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <vector>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/testing/fault_env.h"
#include "tests/integration/controller/api_fixture.h"

namespace gpufed::testing {
namespace {

// Every record of the journal under `state_dir`, oldest first.
std::vector<nlohmann::json> JournalRecords(const std::string& state_dir) {
  std::vector<nlohmann::json> out;
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto segments = audit::ListSegments(*env, state_dir + "/audit/journal");
  EXPECT_TRUE(segments.ok());
  if (!segments.ok()) return out;
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

// The records of `kind` about the workload `name`.
std::vector<nlohmann::json> RecordsOf(const std::vector<nlohmann::json>& records, const std::string& kind,
                                      const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& r : records) {
    if (r.value("kind", "") == kind && r.value("workload", "") == name) out.push_back(r);
  }
  return out;
}

// Every GET a tenant's token may use, naming the tenant's own `<tenant>-secret-job`.
std::vector<std::string> ViewsOf(const std::string& tenant) {
  const std::string job = tenant + "-secret-job";
  const std::string own = "/v1/tenants/" + tenant;
  const std::string workload = own + "/workloads/" + job;
  return {"/v1/workloads",
          own + "/workloads",
          "/v1/workloads/" + job,
          "/v1/decisions",
          "/v1/decisions?workload=" + job,
          workload + "/decisions",
          workload + "-2/decisions",
          "/v1/explain/" + job,
          workload + "/explain",
          "/v1/audit",
          "/v1/queue",
          "/v1/tenants",
          own,
          "/v1/history",
          "/v1/clusters"};
}

using PrincipalsTest = ApiFixture;

TEST_F(PrincipalsTest, EverySubmissionAndCancelIsJournalledWithItsPrincipalAndTenantBeforeItTakesEffect) {
  // A tenant on its namespaced path, another on the alias, an admin for a tenant.
  auto alpha = client_->Post("/v1/tenants/alpha/workloads", Auth(kAlpha), WorkloadYaml("train", "alpha", 1, "1h"),
                             "application/yaml");
  ASSERT_EQ(alpha->status, 201) << alpha->body;
  auto beta = client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("pricey", "beta", 8, "10h"), "application/yaml");
  ASSERT_EQ(beta->status, 201) << beta->body;
  auto admin = client_->Post("/v1/workloads", Auth(kAdmin), WorkloadYaml("eval", "alpha", 1, "1h"), "application/yaml");
  ASSERT_EQ(admin->status, 201) << admin->body;
  // The 201 came after the record was durable: it is in the journal now, with the uid the
  // API answered.
  std::vector<nlohmann::json> records = JournalRecords(h_.state_dir());
  const std::string revision = h_.controller->active_revision();
  struct Expected {
    std::string name, tenant, principal, uid;
  };
  for (const Expected& e : {Expected{"train", "alpha", "alpha-ci", Body(alpha)["uid"]},
                            Expected{"pricey", "beta", "beta-ci", Body(beta)["uid"]},
                            Expected{"eval", "alpha", "admin-ops", Body(admin)["uid"]}}) {
    std::vector<nlohmann::json> submitted = RecordsOf(records, "workload-submitted", e.name);
    ASSERT_EQ(submitted.size(), 1u) << e.name;
    const nlohmann::json& s = submitted[0];
    EXPECT_EQ(s["uid"], e.uid) << s.dump();
    EXPECT_EQ(s["tenant"], e.tenant) << s.dump();
    EXPECT_EQ(s["principal"], e.principal) << s.dump();
    EXPECT_EQ(s["source"], "api") << s.dump();
    EXPECT_EQ(s["revision"], revision) << s.dump();
    EXPECT_EQ(s["specHash"].get<std::string>().rfind("sha256:", 0), 0u) << s.dump();
    EXPECT_TRUE(s.contains("acceptedAtMillis")) << s.dump();
    EXPECT_FALSE(s.contains("commit")) << "not a Git checkout: " << s.dump();
    EXPECT_EQ(s.dump().find("-token-"), std::string::npos) << "a token in the journal: " << s.dump();
  }

  // beta's workload is queued (over its budget); alpha's train is placed.
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_EQ(Body(client_->Get("/v1/workloads/pricey", Auth(kBeta)))["state"], "Queued");
  ASSERT_EQ(Body(client_->Get("/v1/workloads/train", Auth(kAlpha)))["state"], "Placed");
  records = JournalRecords(h_.state_dir());
  // The submission's spec hash is its decisions': an auditor joins them by uid and hash.
  for (const char* name : {"train", "pricey"}) {
    std::vector<nlohmann::json> decisions = RecordsOf(records, "decision", name);
    ASSERT_FALSE(decisions.empty()) << name;
    EXPECT_EQ(decisions[0]["specHash"], RecordsOf(records, "workload-submitted", name)[0]["specHash"]) << name;
    EXPECT_EQ(decisions[0]["uid"], RecordsOf(records, "workload-submitted", name)[0]["uid"]) << name;
  }

  // Cancels: a queued workload by its tenant, a placed one by an admin. Each is in the
  // journal when the 202 arrives, before any pass carries it out.
  ASSERT_EQ(client_->Delete("/v1/workloads/pricey", Auth(kBeta))->status, 202);
  ASSERT_EQ(client_->Delete("/v1/tenants/alpha/workloads/train", Auth(kAdmin))->status, 202);
  records = JournalRecords(h_.state_dir());
  std::vector<nlohmann::json> queued = RecordsOf(records, "workload-cancelled", "pricey");
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0]["state"], "queued") << queued[0].dump();
  EXPECT_EQ(queued[0]["principal"], "beta-ci") << queued[0].dump();
  EXPECT_EQ(queued[0]["tenant"], "beta") << queued[0].dump();
  EXPECT_EQ(queued[0]["uid"], Body(beta)["uid"]) << queued[0].dump();
  EXPECT_FALSE(queued[0].contains("cluster")) << queued[0].dump();
  std::vector<nlohmann::json> placed = RecordsOf(records, "workload-cancelled", "train");
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0]["state"], "placed") << placed[0].dump();
  EXPECT_EQ(placed[0]["principal"], "admin-ops") << placed[0].dump();
  EXPECT_EQ(placed[0]["tenant"], "alpha") << placed[0].dump();
  EXPECT_FALSE(placed[0].value("cluster", "").empty()) << placed[0].dump();
  // A cancel refused (the workload is unknown to the caller, or already over) is no record.
  EXPECT_EQ(client_->Delete("/v1/workloads/pricey", Auth(kAlpha))->status, 404);
  ASSERT_TRUE(h_.controller->Pass().ok());
  EXPECT_EQ(Body(client_->Get("/v1/workloads/pricey", Auth(kBeta)))["state"], "Cancelled");
  EXPECT_EQ(client_->Delete("/v1/workloads/pricey", Auth(kBeta))->status, 409);
  EXPECT_EQ(RecordsOf(JournalRecords(h_.state_dir()), "workload-cancelled", "pricey").size(), 1u);
}

// Write-ahead: journal, then store, then 201. A journal that cannot take the record (a full
// disk) gets 503 and nothing is stored; a cancel it cannot record is not requested.
TEST(ApiPrincipals, ASubmissionOrCancelTheJournalCannotTakeAnswers503AndChangesNothing) {
  const std::string dir = FreshDir("api_principals_fault");
  audit::testing::FaultEnv fault;
  Harness h;
  runtime::AppOptions o;
  o.config_dir = dir + "/repo";
  o.state_dir = dir + "/state";
  o.audit_env = &fault;
  ASSERT_TRUE(h.OpenApp(o).ok());
  server::ServerOptions so;
  so.tokens = {{kAlpha, server::Caller::OfTenant("alpha", "alpha-ci")}};
  auto server = server::ApiServer::Start(h.controller, so);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  ASSERT_EQ(
      client.Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("kept", "alpha", 1, "1h"), "application/yaml")->status,
      201);

  fault.disk_bytes_left = 0;  // the journal's disk is full
  auto refused = client.Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("lost", "alpha", 1, "1h"), "application/yaml");
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_EQ(nlohmann::json::parse(refused->body)["error"]["code"], "UNAVAILABLE") << refused->body;
  EXPECT_NE(refused->body.find("audit journal"), std::string::npos) << refused->body;
  EXPECT_EQ(client.Get("/v1/workloads/lost", Auth(kAlpha))->status, 404);
  Result<std::vector<store::WorkloadRecord>> all = h.controller->List("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().name, "kept");

  auto cancel = client.Delete("/v1/workloads/kept", Auth(kAlpha));
  EXPECT_EQ(cancel->status, 503) << cancel->body;
  EXPECT_FALSE(h.Get("kept").cancel_requested) << "a cancel was requested that the journal does not hold";
  for (const nlohmann::json& r : JournalRecords(h.state_dir())) {
    EXPECT_NE(r.value("workload", ""), "lost") << r.dump();
    EXPECT_NE(r.value("kind", ""), "workload-cancelled") << r.dump();
  }
  (*server)->Stop();
}

// The repository's workloads are submitted by `repository`, naming their revision and,
// in a Git checkout, its commit.
TEST(ApiPrincipals, RepositoryWorkloadsNameTheRepositoryAndTheirRevisionsCommit) {
  const std::string dir = FreshDir("api_principals_repository");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("nightly", "alpha", 1, "1h");
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::filesystem::create_directories(dir + "/repo/.git/refs/heads");
  std::ofstream(dir + "/repo/.git/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(dir + "/repo/.git/refs/heads/main") << commit << "\n";
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  const std::string revision = h.controller->active_revision();
  ASSERT_EQ(revision.rfind(commit + "+sha256:", 0), 0u) << revision;
  std::vector<nlohmann::json> submitted = RecordsOf(JournalRecords(h.state_dir()), "workload-submitted", "nightly");
  ASSERT_EQ(submitted.size(), 1u);
  EXPECT_EQ(submitted[0]["principal"], "repository") << submitted[0].dump();
  EXPECT_EQ(submitted[0]["source"], "repository") << submitted[0].dump();
  EXPECT_EQ(submitted[0]["tenant"], "alpha") << submitted[0].dump();
  EXPECT_EQ(submitted[0]["revision"], revision) << submitted[0].dump();
  EXPECT_EQ(submitted[0]["commit"], commit) << submitted[0].dump();
  EXPECT_EQ(submitted[0]["uid"], h.Get("nightly").uid) << submitted[0].dump();
  // A restart submits nothing again.
  h.Close();
  Harness again;
  ASSERT_TRUE(again.Open(dir).ok());
  EXPECT_EQ(RecordsOf(JournalRecords(again.state_dir()), "workload-submitted", "nightly").size(), 1u);
}

// Every view the API serves, for one tenant's token, holds nothing of the other tenant's
// principals or workloads, while the journal (for auditors) holds both.
TEST_F(PrincipalsTest, NoViewShowsATenantAnotherTenantsPrincipals) {
  for (const auto& [token, tenant] : {std::pair{kAlpha, "alpha"}, std::pair{kBeta, "beta"}}) {
    const std::string name = std::string(tenant) + "-secret-job";
    ASSERT_EQ(
        client_->Post("/v1/workloads", Auth(token), WorkloadYaml(name, tenant, 1, "1h"), "application/yaml")->status,
        201);
    ASSERT_EQ(
        client_->Post("/v1/workloads", Auth(token), WorkloadYaml(name + "-2", tenant, 8, "10h"), "application/yaml")
            ->status,
        201);
  }
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_EQ(client_->Delete("/v1/workloads/alpha-secret-job-2", Auth(kAlpha))->status, 202);
  ASSERT_EQ(client_->Delete("/v1/workloads/beta-secret-job-2", Auth(kBeta))->status, 202);
  ASSERT_TRUE(h_.controller->Pass().ok());
  const std::string journal = [&] {
    std::string all;
    for (const nlohmann::json& r : JournalRecords(h_.state_dir())) all += r.dump() + "\n";
    return all;
  }();
  ASSERT_NE(journal.find("\"principal\":\"alpha-ci\""), std::string::npos);
  ASSERT_NE(journal.find("\"principal\":\"beta-ci\""), std::string::npos);

  struct View {
    const char* token;
    std::string own, other;  // tenants
  };
  for (const View& v : {View{kAlpha, "alpha", "beta"}, View{kBeta, "beta", "alpha"}}) {
    const std::vector<std::string> paths = ViewsOf(v.own);
    for (const std::string& path : paths) {
      auto res = client_->Get(path, Auth(v.token));
      ASSERT_TRUE(res) << path;
      EXPECT_EQ(res->status, 200) << v.own << " " << path << ": " << res->body;
      EXPECT_EQ(res->body.find(v.other + "-ci"), std::string::npos) << v.own << " " << path << ": " << res->body;
      EXPECT_EQ(res->body.find(v.other + "-secret-job"), std::string::npos) << v.own << " " << path;
    }
  }
}

}  // namespace
}  // namespace gpufed::testing

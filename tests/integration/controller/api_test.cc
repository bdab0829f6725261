// The HTTP API over real HTTP on 127.0.0.1 (port 0): auth, tenant isolation, bad
// requests, oversize bodies, and the read endpoints.
#include <httplib.h>

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "controller/audit/file_journal_storage.h"
#include "controller/server/server.h"
#include "tests/integration/controller/api_fixture.h"
#include "tests/integration/controller/raw_socket.h"

namespace gpufed::testing {
namespace {

using ApiTest = ApiFixture;

TEST_F(ApiTest, HealthNeedsNoTokenButTheApiDoes) {
  auto health = client_->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto anon = client_->Get("/v1/workloads");
  EXPECT_EQ(anon->status, 401);
  EXPECT_EQ(Body(anon)["error"]["code"], "UNAUTHENTICATED");
  auto wrong = client_->Get("/v1/workloads", Auth("not-a-real-token-at-all"));
  EXPECT_EQ(wrong->status, 401);
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
}

TEST_F(ApiTest, ATenantSubmitsSeesAndCancelsOnlyItsOwnWorkloads) {
  auto mine = client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a1", "alpha", 1, "1h"), "application/yaml");
  ASSERT_EQ(mine->status, 201) << mine->body;
  EXPECT_EQ(Body(mine)["state"], "Pending");
  auto theirs = client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("b1", "beta", 1, "1h"), "application/yaml");
  EXPECT_EQ(theirs->status, 403);
  ASSERT_EQ(
      client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("b1", "beta", 1, "1h"), "application/yaml")->status,
      201);
  auto list = Body(client_->Get("/v1/workloads", Auth(kAlpha)));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["name"], "a1");
  EXPECT_EQ(client_->Get("/v1/workloads/b1", Auth(kAlpha))->status, 404);
  EXPECT_EQ(client_->Delete("/v1/workloads/b1", Auth(kAlpha))->status, 404);
  EXPECT_EQ(Body(client_->Get("/v1/workloads", Auth(kAdmin)))["items"].size(), 2u);
  EXPECT_EQ(client_->Delete("/v1/workloads/a1", Auth(kAlpha))->status, 202);
  ASSERT_TRUE(h_.controller->Pass().ok());
  EXPECT_EQ(Body(client_->Get("/v1/workloads/a1", Auth(kAlpha)))["state"], "Cancelled");
  EXPECT_EQ(client_->Delete("/v1/workloads/a1", Auth(kAlpha))->status, 409);
}

TEST_F(ApiTest, AcceptsJsonAndRejectsDuplicates) {
  std::string json = R"({"apiVersion": "gpufed/v1alpha1", "kind": "Workload", "metadata": {"name": "j1"},
    "spec": {"tenant": "alpha", "type": "inference", "resources": {"gpus": 1}, "durationHint": "30m"}})";
  EXPECT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), json, "application/json")->status, 201);
  auto dup = client_->Post("/v1/workloads", Auth(kAlpha), json, "application/json");
  EXPECT_EQ(dup->status, 409);
  EXPECT_EQ(Body(dup)["error"]["code"], "ALREADY_EXISTS");
}

TEST_F(ApiTest, InvalidWorkloadsGetTheValidatorsFileLineAndFieldMessages) {
  std::string bad =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n  tenant: alpha\n"
      "  resources: {gpus: 1, gpuModle: [A100-80GB]}\n";
  auto r = client_->Post("/v1/workloads", Auth(kAlpha), bad, "application/yaml");
  ASSERT_EQ(r->status, 400);
  std::string message = Body(r)["error"]["message"];
  EXPECT_NE(message.find("request.yaml:6:"), std::string::npos) << message;
  EXPECT_NE(message.find("gpuModle"), std::string::npos) << message;
  auto unknown_tenant =
      client_->Post("/v1/workloads", Auth(kAdmin), WorkloadYaml("w", "gamma", 1, "1h"), "application/yaml");
  EXPECT_EQ(unknown_tenant->status, 400);
  auto garbage = client_->Post("/v1/workloads", Auth(kAdmin), "{{{", "application/json");
  EXPECT_EQ(garbage->status, 400);
}

TEST_F(ApiTest, RefusesOversizeBodiesWithJson) {
  std::string huge(size_t{128} * 1024, '#');
  auto r = client_->Post("/v1/workloads", Auth(kAdmin), huge, "application/yaml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(Body(r)["error"]["code"], "RESOURCE_EXHAUSTED");
}

TEST_F(ApiTest, ServesClustersDecisionsExplanationsAndMetrics) {
  ASSERT_EQ(
      client_->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("a1", "alpha", 8, "1h"), "application/yaml")->status,
      201);
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_TRUE(h_.controller->Pass().ok());  // observes the placement it applied
  auto clusters = Body(client_->Get("/v1/clusters", Auth(kBeta)));
  EXPECT_EQ(clusters["items"].size(), 2u);
  auto decisions = Body(client_->Get("/v1/decisions?workload=a1", Auth(kAlpha)));
  ASSERT_GE(decisions["items"].size(), 1u);
  EXPECT_EQ(decisions["items"][0]["outcome"], "placed");
  EXPECT_EQ(client_->Get("/v1/decisions?workload=a1", Auth(kBeta))->status, 404);
  // A tenant lists its own decisions only; an admin everyone's.
  EXPECT_EQ(Body(client_->Get("/v1/decisions", Auth(kBeta)))["items"].size(), 0u);
  auto own = Body(client_->Get("/v1/decisions", Auth(kAlpha)));
  ASSERT_GE(own["items"].size(), 1u);
  EXPECT_EQ(own["items"][0]["tenant"], "alpha");
  EXPECT_GE(Body(client_->Get("/v1/decisions", Auth(kAdmin)))["items"].size(), 1u);
  auto explain = Body(client_->Get("/v1/explain/a1", Auth(kAlpha)));
  ASSERT_TRUE(explain.contains("why"));
  EXPECT_NE(explain["why"][0].get<std::string>().find("placed on onprem"), std::string::npos) << explain.dump(2);
  auto metrics = client_->Get("/metrics", Auth(kAdmin));
  ASSERT_EQ(metrics->status, 200);
  for (const char* name :
       {"gpufed_decisions_total{outcome=\"placed\",rule=\"none\"} 1", "gpufed_decision_latency_seconds_bucket",
        "gpufed_reconcile_pass_duration_seconds_count 2",
        "gpufed_cluster_gpus_allocated{cluster=\"onprem\",model=\"A100-80GB\"} 8",
        "gpufed_cluster_gpus_capacity{cluster=\"onprem\",model=\"A100-80GB\"} 8",
        "gpufed_tenant_gpus_in_use{tenant=\"alpha\"} 8", "gpufed_queue_depth{tenant=\"beta\"} 0",
        "gpufed_connector_errors_total",
                           // The one submission: one group of one, one API commit; the loop committed too.
        "gpufed_api_submission_group_size_bucket{le=\"1\"} 1", "gpufed_api_submission_group_size_count 1",
        "gpufed_api_submission_store_wait_seconds_count 1",
        "gpufed_store_commit_duration_seconds_count{writer=\"api\"} 1",
        "gpufed_store_commit_duration_seconds_bucket{writer=\"loop\",le=\"+Inf\"}"}) {
    EXPECT_NE(metrics->body.find(name), std::string::npos) << name << "\n" << metrics->body;
  }
  EXPECT_EQ(client_->Get("/readyz")->status, 200);
}

TEST_F(ApiTest, MetricsNeedAnAdminOrMetricsTokenAndAMetricsTokenReadsNothingElse) {
  EXPECT_EQ(client_->Get("/metrics", Auth(kAlpha))->status, 403);  // every tenant's spend and queues
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
  auto scraped = client_->Get("/metrics", Auth(kMetrics));
  ASSERT_TRUE(scraped);
  EXPECT_EQ(scraped->status, 200);
  EXPECT_NE(scraped->body.find("gpufed_queue_depth"), std::string::npos);
  EXPECT_EQ(client_->Get("/metrics", Auth(kAdmin))->status, 200);
  EXPECT_EQ(client_->Get("/v1/workloads", Auth(kMetrics))->status, 403);
  EXPECT_EQ(
      client_->Post("/v1/workloads", Auth(kMetrics), WorkloadYaml("m1", "alpha", 1, "1h"), "application/yaml")->status,
      403);
}

TEST_F(ApiTest, ATenantTokenCannotSubmitAbovePriorityCap) {
  // alpha: maxPriority normal (500); beta sets none.
  auto urgent = client_->Post("/v1/workloads", Auth(kAlpha),
                              WorkloadYaml("p1", "alpha", 1, "1h", "  priority: urgent\n"), "application/yaml");
  ASSERT_TRUE(urgent);
  EXPECT_EQ(urgent->status, 403);
  EXPECT_NE(Body(urgent)["error"]["message"].get<std::string>().find("above tenant alpha's maxPriority 500 (normal)"),
            std::string::npos)
      << urgent->body;
  EXPECT_EQ(client_
                ->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("p2", "alpha", 1, "1h", "  priority: 999999999\n"),
                       "application/yaml")
                ->status,
            403);
  EXPECT_EQ(client_
                ->Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("p3", "alpha", 1, "1h", "  priority: normal\n"),
                       "application/yaml")
                ->status,
            201);
  // A declared cap binds admins too (config/priority_cap.h): the repository is the
  // authority. An admin is refused with the line `validate` gives, as invalid.
  auto admin = client_->Post("/v1/workloads", Auth(kAdmin),
                             WorkloadYaml("p4", "alpha", 1, "1h", "  priority: urgent\n"), "application/yaml");
  ASSERT_TRUE(admin);
  EXPECT_EQ(admin->status, 400);
  EXPECT_NE(admin->body.find("spec.priority: priority 5000 is above tenant alpha's maxPriority 500 (normal)"),
            std::string::npos)
      << admin->body;
  // Without a maxPriority a tenant's token is capped at the normal class (the default).
  auto uncapped = client_->Post("/v1/workloads", Auth(kBeta),
                                WorkloadYaml("p5", "beta", 1, "1h", "  priority: urgent\n"), "application/yaml");
  ASSERT_TRUE(uncapped);
  EXPECT_EQ(uncapped->status, 403);
  EXPECT_NE(uncapped->body.find("the normal class"), std::string::npos) << uncapped->body;
  EXPECT_EQ(client_
                ->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("p6", "beta", 1, "1h", "  priority: normal\n"),
                       "application/yaml")
                ->status,
            201);
  EXPECT_EQ(client_->Get("/v1/workloads/p1", Auth(kAlpha))->status, 404);  // nothing was stored
}

TEST_F(ApiTest, ARequestWithoutATokenIsRefusedBeforeItsBodyIsRead) {
  RawSocket c(server_->port());
  ASSERT_TRUE(c.connected());
  // Headers announcing an endless chunked body, and not one byte of it: the answer must
  // come anyway, so nothing of a body was waited for or buffered.
  (void)c.Send(
      "POST /v1/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
      "Transfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(RawSocket::StatusOf(c.ReadResponse()), 401);
}

TEST_F(ApiTest, TheBodyCapHoldsForChunkedBodies) {
  RawSocket c(server_->port());
  ASSERT_TRUE(c.connected());
  (void)c.Send(std::string("POST /v1/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ") + kAlpha +
               "\r\nContent-Type: application/yaml\r\nTransfer-Encoding: chunked\r\n\r\n");
  const std::string chunk(4096, '#');
  std::string body;
  for (int i = 0; i < 20; ++i) body += "1000\r\n" + chunk + "\r\n";  // 80 KiB against a 64 KiB cap
  body += "0\r\n\r\n";
  (void)c.Send(body);  // the server may close before it has all of it
  EXPECT_EQ(RawSocket::StatusOf(c.ReadResponse()), 413);
}

TEST_F(ApiTest, TheBodyCapIsTheSameForEveryContentType) {
  // 20 KiB of YAML comment before a valid workload: above httplib's 8 KiB form limit,
  // below the 64 KiB cap, so it is accepted whatever the client calls it.
  std::string yaml = std::string(size_t{20} * 1024, '#') + "\n" + WorkloadYaml("form-1", "alpha", 1, "1h");
  auto r = client_->Post("/v1/workloads", Auth(kAlpha), yaml, "application/x-www-form-urlencoded");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201) << r->body;
}

// gamma may make 2 requests per second with a burst of 3, on a clock the test moves.
TEST(ApiRateLimit, ATenantOverItsRateGets429WithRetryAfterAndAdminsAreExempt) {
  std::string dir = FreshDir("api_rate_limit");
  std::ofstream(dir + "/repo/gamma.yaml") << "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: gamma}\n"
                                             "spec: {api: {rateLimit: 2/s, burst: 3}}\n";
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  server::ServerOptions o;
  o.tokens = {{kAdmin, server::Caller::Admin("admin-ops")},
              {"gamma-token-0123456789", server::Caller::OfTenant("gamma", "gamma-ci")}};
  o.clock = &h.clock;
  auto s = server::ApiServer::Start(h.controller, o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  httplib::Client client("127.0.0.1", (*s)->port());
  const httplib::Headers gamma = {{"Authorization", "Bearer gamma-token-0123456789"}};
  for (int i = 0; i < 3; ++i) EXPECT_EQ(client.Get("/v1/workloads", gamma)->status, 200) << i;  // the burst
  auto limited = client.Get("/v1/workloads", gamma);
  ASSERT_TRUE(limited);
  EXPECT_EQ(limited->status, 429);
  EXPECT_EQ(limited->get_header_value("Retry-After"), "1");
  EXPECT_NE(limited->body.find("over its API rate limit"), std::string::npos) << limited->body;
  // A submission is limited too, and nothing is stored.
  EXPECT_EQ(client.Post("/v1/workloads", gamma, WorkloadYaml("g1", "gamma", 1, "1h"), "application/yaml")->status, 429);
  // Admins are exempt.
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(client.Get("/v1/workloads", {{"Authorization", std::string("Bearer ") + kAdmin}})->status, 200);
  // Half a second later one more token has come (2/s).
  h.clock.AdvanceTo(h.clock.Now() + Duration::FromMillis(500));
  EXPECT_EQ(client.Post("/v1/workloads", gamma, WorkloadYaml("g2", "gamma", 1, "1h"), "application/yaml")->status, 201);
  EXPECT_EQ(client.Get("/v1/workloads", gamma)->status, 429);
  EXPECT_EQ(client.Get("/healthz")->status, 200);  // health is never limited
  (*s)->Stop();
}

// beta's budget is 5 EUR with alerts at 50 % and 90 %: 3 EUR and then 1.67 EUR more of
// estimates cross each level once, in the journal, the metrics and GET /v1/tenants/beta.
TEST_F(ApiTest, BudgetAlertsAreJournaledOnceAndServedPerTenant) {
  ASSERT_EQ(
      client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("b1", "beta", 1, "3h"), "application/yaml")->status,
      201);
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_EQ(
      client_->Post("/v1/workloads", Auth(kBeta), WorkloadYaml("b2", "beta", 1, "100m"), "application/yaml")->status,
      201);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(h_.controller->Pass().ok());

  auto beta = Body(client_->Get("/v1/tenants/beta", Auth(kBeta)));
  ASSERT_TRUE(beta.contains("alerts")) << beta.dump(2);
  ASSERT_EQ(beta["alerts"].size(), 2u) << beta.dump(2);
  EXPECT_EQ(beta["alerts"][0]["level"], 0.5);
  EXPECT_EQ(beta["alerts"][1]["level"], 0.9);
  EXPECT_EQ(beta["limit"], "5.00");  // the same object as an item of /v1/tenants
  EXPECT_EQ(beta["currency"], "EUR");
  EXPECT_EQ(beta["alertLevel"], "warning");
  EXPECT_GT(beta["usedRatio"].get<double>(), 0.9);
  EXPECT_EQ(client_->Get("/v1/tenants/alpha", Auth(kBeta))->status, 404);  // another tenant looks absent
  EXPECT_EQ(client_->Get("/v1/tenants/beta", Auth(kAdmin))->status, 200);
  auto metrics = client_->Get("/metrics", Auth(kAdmin));
  EXPECT_NE(metrics->body.find("gpufed_tenant_budget_used_ratio{tenant=\"beta\",scope=\"all\"} 0.9"), std::string::npos)
      << metrics->body;

  ASSERT_TRUE(h_.Stop("test done").ok());
  int alerts = 0;
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto segments = audit::ListSegments(*env, h_.state_dir() + "/audit/journal");
  ASSERT_TRUE(segments.ok());
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      alerts += line.find("\"kind\":\"budget-alert\"") != std::string::npos;
  }
  EXPECT_EQ(alerts, 2);
}

TEST(ServerOptions, ParsesTokensAndRefusesShortOnes) {
  auto tokens =
      server::ParseTokens("# comment\nabcdefghijklmnop alpha\nqrstuvwxyz0123456 admin\nmmmmmmmmmmmmmmmmm metrics\n");
  ASSERT_TRUE(tokens.ok());
  ASSERT_NE(tokens->Find("abcdefghijklmnop"), nullptr);
  // Unnamed tokens are named by their line (token_table_test.cc has the names).
  EXPECT_EQ(*tokens->Find("abcdefghijklmnop"), server::Caller::OfTenant("alpha", "tokens-file:line-2"));
  EXPECT_EQ(*tokens->Find("qrstuvwxyz0123456"), server::Caller::Admin("tokens-file:line-3"));
  EXPECT_EQ(*tokens->Find("mmmmmmmmmmmmmmmmm"), server::Caller::Metrics("tokens-file:line-4"));
  EXPECT_EQ(tokens->Find("abcdefghijklmnoq"), nullptr);
  EXPECT_EQ(tokens->Find(""), nullptr);
  EXPECT_FALSE(server::ParseTokens("abcdefghijklmnop alpha name extra\n").ok());
  EXPECT_FALSE(server::ParseTokens("short alpha\n").ok());
  EXPECT_FALSE(server::MakeServerOptions("no-port", "", "", "", "/tmp").ok());
}

// Token files are secrets: one that others may read, or a symlink in place of the admin
// token, stops the start with the path named; a generated admin token is 0600 from birth.
TEST(ServerOptions, TokenFilesArePrivateOrRefused) {
  const std::string dir = FreshDir("server_options_secrets");
  const std::string state = dir + "/state";
  std::filesystem::create_directories(state);
  std::filesystem::permissions(state, std::filesystem::perms::owner_all);
  auto made = server::MakeServerOptions("127.0.0.1:0", "", "", "", state);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->tokens.size(), 1u);
  struct stat st{};
  ASSERT_EQ(::stat((state + "/admin.token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The same token again on the next start.
  auto again = server::MakeServerOptions("127.0.0.1:0", "", "", "", state);
  ASSERT_TRUE(again.ok());
  std::ifstream in(state + "/admin.token");
  std::string token;
  std::getline(in, token);
  ASSERT_NE(again->tokens.Find(token), nullptr);
  EXPECT_EQ(again->tokens.Find(token)->principal, "state:admin.token");  // its name in the journal

  const std::string loose = dir + "/tokens";
  std::ofstream(loose) << "abcdefghijklmnop alpha\n";
  ::chmod(loose.c_str(), 0644);
  auto refused = server::MakeServerOptions("127.0.0.1:0", loose, "", "", state);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(loose), std::string::npos) << refused.status().message();
  ::chmod(loose.c_str(), 0600);
  EXPECT_TRUE(server::MakeServerOptions("127.0.0.1:0", loose, "", "", state).ok());

  const std::string linked = dir + "/state-linked";
  std::filesystem::create_directories(linked);
  std::filesystem::create_symlink(loose, linked + "/admin.token");
  auto symlinked = server::MakeServerOptions("127.0.0.1:0", "", "", "", linked);
  EXPECT_FALSE(symlinked.ok());
}

}  // namespace
}  // namespace gpufed::testing

// Tenancy over real HTTP on 127.0.0.1: workloads are namespaced by tenant, nothing of
// another tenant's workload is revealed (no 409 across tenants, no history, no
// decisions), a reused name is a new workload with its own uid, every run is metered, and
// a matrix of every endpoint against every kind of caller. Also the regression tests for
// probes that once broke it: a one-byte ',' body, a taken name, a reused name.
#include <gtest/gtest.h>

#include <set>

#include "tests/integration/controller/api_fixture.h"

namespace gpufed::testing {
namespace {

using TenancyTest = ApiFixture;

std::string Yaml(const std::string& name, const std::string& tenant, const std::string& duration = "1h") {
  return WorkloadYaml(name, tenant, 1, duration);
}

TEST_F(TenancyTest, TwoTenantsMayUseTheSameNameAndNeitherSeesTheOther) {
  auto mine = client_->Post("/v1/workloads", Auth(kAlpha), Yaml("train", "alpha"), "application/yaml");
  ASSERT_EQ(mine->status, 201) << mine->body;
  // beta's live "train" is no conflict for alpha, and alpha's answer says nothing of it.
  auto theirs = client_->Post("/v1/tenants/beta/workloads", Auth(kBeta), Yaml("train", "beta"), "application/yaml");
  ASSERT_EQ(theirs->status, 201) << theirs->body;
  EXPECT_NE(Body(mine)["uid"], Body(theirs)["uid"]);
  EXPECT_EQ(Body(client_->Get("/v1/workloads/train", Auth(kAlpha)))["tenant"], "alpha");
  EXPECT_EQ(Body(client_->Get("/v1/tenants/beta/workloads/train", Auth(kBeta)))["tenant"], "beta");
  // A second live "train" of the same tenant is a conflict.
  EXPECT_EQ(client_->Post("/v1/workloads", Auth(kAlpha), Yaml("train", "alpha"), "application/yaml")->status, 409);
  // An admin names the tenant when a name is in several.
  auto ambiguous = client_->Get("/v1/workloads/train", Auth(kAdmin));
  EXPECT_EQ(ambiguous->status, 400);
  EXPECT_NE(Body(ambiguous)["error"]["message"].get<std::string>().find("/v1/tenants/TENANT/workloads/train"),
            std::string::npos);
  EXPECT_EQ(Body(client_->Get("/v1/tenants/beta/workloads/train", Auth(kAdmin)))["uid"], Body(theirs)["uid"]);
  // A path's tenant must be the document's.
  EXPECT_EQ(client_->Post("/v1/tenants/beta/workloads", Auth(kAdmin), Yaml("x", "alpha"), "application/yaml")->status,
            400);
  ASSERT_TRUE(h_.controller->Pass().ok());
  ASSERT_TRUE(h_.controller->Pass().ok());
  auto decisions = Body(client_->Get("/v1/decisions?workload=train", Auth(kAlpha)));
  ASSERT_FALSE(decisions["items"].empty());
  for (const auto& d : decisions["items"]) EXPECT_EQ(d["tenant"], "alpha") << d.dump();
  auto explain = Body(client_->Get("/v1/tenants/beta/workloads/train/explain", Auth(kBeta)));
  EXPECT_EQ(explain["tenant"], "beta");
  EXPECT_EQ(explain["uid"], Body(theirs)["uid"]);
}

TEST_F(TenancyTest, ReusingAFinishedNameIsANewWorkloadAndRevealsNothingOfTheOldOne) {
  auto first = client_->Post("/v1/workloads", Auth(kBeta), Yaml("job", "beta", "30m"), "application/yaml");
  ASSERT_EQ(first->status, 201);
  ASSERT_TRUE(h_.RunUntilIdle().ok());
  ASSERT_EQ(Body(client_->Get("/v1/workloads/job", Auth(kBeta)))["state"], "Succeeded");
  // alpha takes the name: beta's workload stays beta's, and alpha sees only its own.
  auto taken = client_->Post("/v1/workloads", Auth(kAlpha), Yaml("job", "alpha", "30m"), "application/yaml");
  ASSERT_EQ(taken->status, 201) << taken->body;
  auto beta_list = Body(client_->Get("/v1/workloads", Auth(kBeta)));
  ASSERT_EQ(beta_list["items"].size(), 1u);
  EXPECT_EQ(beta_list["items"][0]["uid"], Body(first)["uid"]);
  EXPECT_EQ(beta_list["items"][0]["state"], "Succeeded");
  auto history = Body(client_->Get("/v1/explain/job", Auth(kAlpha)))["history"];
  ASSERT_EQ(history.size(), 1u) << history.dump();  // its own submission only
  auto alpha_decisions = client_->Get("/v1/decisions?workload=job", Auth(kAlpha));
  ASSERT_EQ(alpha_decisions->status, 200);
  EXPECT_TRUE(Body(alpha_decisions)["items"].empty()) << alpha_decisions->body;  // not beta's
  EXPECT_EQ(alpha_decisions->body.find(Body(first)["uid"].get<std::string>()), std::string::npos);
  // beta runs "job" again: a new workload; the old run stays in its list.
  auto again = client_->Post("/v1/workloads", Auth(kBeta), Yaml("job", "beta", "30m"), "application/yaml");
  ASSERT_EQ(again->status, 201);
  EXPECT_NE(Body(again)["uid"], Body(first)["uid"]);
  EXPECT_EQ(Body(client_->Get("/v1/workloads", Auth(kBeta)))["items"].size(), 2u);
  EXPECT_EQ(Body(client_->Get("/v1/workloads/job", Auth(kBeta)))["uid"], Body(again)["uid"]);
}

TEST_F(TenancyTest, EveryRunOfAReusedNameIsMeteredAndCharged) {
  std::set<std::string> uids;
  for (int run = 0; run < 3; ++run) {
    auto r = client_->Post("/v1/workloads", Auth(kAlpha), Yaml("reuse-1", "alpha", "1h"), "application/yaml");
    ASSERT_EQ(r->status, 201) << r->body;
    uids.insert(Body(r)["uid"].get<std::string>());
    ASSERT_TRUE(h_.RunUntilIdle().ok());
  }
  EXPECT_EQ(uids.size(), 3u);
  auto attempts = h_.controller->store()->Attempts();
  ASSERT_TRUE(attempts.ok());
  Money metered;
  std::set<std::string> booked;
  for (const store::AttemptRow& a : *attempts) {
    if (a.workload != "reuse-1") continue;
    booked.insert(a.uid);
    EXPECT_GT(a.cost.micros(), 0) << a.uid;
    metered = *metered.Plus(a.cost);  // one cluster, one currency
  }
  EXPECT_EQ(booked, uids);
  auto usage = h_.controller->store()->Usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->at("alpha").spent, metered);
}

TEST_F(TenancyTest, AOneByteCommaBodyIsRefusedAtOnce) {
  // yaml-cpp 0.7's LoadAll(",") never returns and allocates until memory runs out; the
  // loader's guard refuses it (the client's timeout bounds the test if it ever regresses).
  client_->set_read_timeout(10, 0);
  for (const char* type : {"application/yaml", "application/json"}) {
    auto r = client_->Post("/v1/workloads", Auth(kAlpha), ",", type);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(r->status, 400) << type << ": " << r->body;
  }
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
}

// Every endpoint against every kind of caller. alpha owns "a1"; beta must not be able to
// tell it exists, metrics tokens read /metrics only, and no token reads nothing.
TEST_F(TenancyTest, CrossTenantMatrix) {
  auto created = client_->Post("/v1/workloads", Auth(kAlpha), Yaml("a1", "alpha"), "application/yaml");
  ASSERT_EQ(created->status, 201);
  const std::string uid = Body(created)["uid"];
  ASSERT_TRUE(h_.controller->Pass().ok());
  struct Endpoint {
    std::string method, path;
    int own, other, admin;  // expected status per caller; metrics: 403, none: 401
  };
  const std::vector<Endpoint> endpoints = {
      {"GET", "/v1/workloads", 200, 200, 200},
      {"GET", "/v1/tenants/alpha/workloads", 200, 404, 200},
      {"GET", "/v1/workloads/a1", 200, 404, 200},
      {"GET", "/v1/tenants/alpha/workloads/a1", 200, 404, 200},
      {"GET", "/v1/decisions?workload=a1", 200, 404, 200},
      {"GET", "/v1/tenants/alpha/workloads/a1/decisions", 200, 404, 200},
      {"GET", "/v1/explain/a1", 200, 404, 200},
      {"GET", "/v1/tenants/alpha/workloads/a1/explain", 200, 404, 200},
      {"GET", "/v1/tenants/alpha", 200, 404, 200},
      {"GET", "/v1/decisions", 200, 200, 200},  // each tenant's own (checked in api_test)
      {"GET", "/v1/clusters", 200, 200, 200},
      {"GET", "/metrics", 403, 403, 200},
      {"POST", "/v1/tenants/alpha/workloads", 201, 404, 201},
      {"DELETE", "/v1/tenants/alpha/workloads/a1", 202, 404, 202},
  };
  int n = 0;
  for (const Endpoint& e : endpoints) {
    const std::pair<const char*, int> callers[] = {{kBeta, e.other},
                                                   {kMetrics, e.path == "/metrics" ? 200 : 403},
                                                   {nullptr, 401},
                                                   {kAlpha, e.own},
                                                   {kAdmin, e.admin}};
    for (const auto& [token, expected] : callers) {
      const std::string who = token == nullptr ? "no token" : token;
      httplib::Result r =
          e.method == "GET" ? client_->Get(e.path, Auth(token))
          : e.method == "POST"
              ? client_->Post(e.path, Auth(token), Yaml("p" + std::to_string(++n), "alpha"), "application/yaml")
              : client_->Delete(e.path, Auth(token));
      ASSERT_TRUE(r) << e.method << " " << e.path << " as " << who;
      EXPECT_EQ(r->status, expected) << e.method << " " << e.path << " as " << who << ": " << r->body;
      if (token == kBeta) {
        // Nothing of alpha's workload reaches beta, whatever the status.
        EXPECT_EQ(r->body.find(uid), std::string::npos) << e.path;
        EXPECT_EQ(r->body.find("\"a1\""), std::string::npos) << e.path << ": " << r->body;
      }
    }
  }
}

}  // namespace
}  // namespace gpufed::testing

#pragma once
// The API tests' tokens (admin, metrics, tenants alpha and beta), and a controller on the
// small test federation (fleet.h) behind the real HTTP API on 127.0.0.1 (port 0).
#include <httplib.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "controller/server/server.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {

inline constexpr const char* kAdmin = "admin-token-0123456789";
inline constexpr const char* kAlpha = "alpha-token-0123456789";
inline constexpr const char* kMetrics = "metrics-token-0123456789";
inline constexpr const char* kBeta = "beta-token-01234567890";

// The Authorization header of a bearer token; none for null.
inline httplib::Headers Auth(const char* token) {
  if (token == nullptr) return {};
  return {{"Authorization", std::string("Bearer ") + token}};
}

class ApiFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string dir = FreshDir(std::string("api_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_TRUE(h_.Open(dir).ok());
    server::ServerOptions o;
    o.tokens = {{kAdmin, server::Caller::Admin("admin-ops")},
                {kAlpha, server::Caller::OfTenant("alpha", "alpha-ci")},
                {kBeta, server::Caller::OfTenant("beta", "beta-ci")},
                {kMetrics, server::Caller::Metrics("prometheus")}};
    o.max_body_bytes = size_t{64} * 1024;
    auto s = server::ApiServer::Start(h_.controller, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  static nlohmann::json Body(const httplib::Result& r) { return nlohmann::json::parse(r->body, nullptr, false); }

  Harness h_;
  std::unique_ptr<server::ApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace gpufed::testing

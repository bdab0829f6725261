// Mutual TLS in process, over real sockets on 127.0.0.1: the refusals at start (client
// certificates without TLS; tokens bound to certificates that nobody is asked for), the
// caller named by its certificate, and a reload that can never turn mutual TLS off.
// tests/integration/controller/run_mtls_test.sh covers the same through `gpufed run`.
#include <httplib.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "controller/server/guarded_server.h"
#include "controller/server/server.h"
#include "tests/integration/controller/api_fixture.h"

namespace gpufed::testing {
namespace {

class ApiMtlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir(std::string("api_mtls_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    Status opened = h_.Open(dir_);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    // The server's self-signed pair, the clients' CA and alice's certificate from it.
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 ";
    ASSERT_EQ(Sh("openssl req -x509 " + ec + "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
                 Path("server.key") + " -out " + Path("server.pem")),
              0);
    ASSERT_EQ(
        Sh("openssl req -x509 " + ec + "-subj /CN=clients-ca -keyout " + Path("ca.key") + " -out " + Path("ca.pem")),
        0);
    ASSERT_EQ(Sh("openssl req -new " + ec + "-subj /O=alpha/CN=alice -keyout " + Path("alice.key") + " -out " +
                 Path("alice.csr")),
              0);
    ASSERT_EQ(Sh("openssl x509 -req -days 1 -in " + Path("alice.csr") + " -CA " + Path("ca.pem") + " -CAkey " +
                 Path("ca.key") + " -CAcreateserial -out " + Path("alice.pem")),
              0);
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  static int Sh(const std::string& command) { return std::system((command + " 2>/dev/null >/dev/null").c_str()); }
  server::ServerOptions Options() const {
    server::ServerOptions o;
    o.tokens = {{kAlpha, server::Caller::OfTenant("alpha", "alpha-ci")}};
    o.tls_cert = Path("server.pem");
    o.tls_key = Path("server.key");
    o.tls_client_ca = Path("ca.pem");
    return o;
  }
  // GET /v1/workloads with alpha's token, with alice's certificate or none; the status,
  // or -1 when no HTTP answer came (the handshake failed).
  int List(int port, bool with_certificate) const {
    std::unique_ptr<httplib::SSLClient> client =
        with_certificate ? std::make_unique<httplib::SSLClient>("127.0.0.1", port, Path("alice.pem"), Path("alice.key"))
                         : std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    client->set_ca_cert_path(Path("server.pem"));
    client->enable_server_certificate_verification(true);
    auto res = client->Get("/v1/workloads", Auth(kAlpha));
    return res ? res->status : -1;
  }

  std::string dir_;
  Harness h_;
};

TEST_F(ApiMtlsTest, ClientCertificatesWithoutTlsOrBoundTokensWithoutThemAreRefusedAtStart) {
  server::ServerOptions plain = Options();
  plain.tls_cert.clear();
  plain.tls_key.clear();
  auto refused = server::ApiServer::Start(h_.controller, plain);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--tls-client-ca"), std::string::npos) << refused.status().ToString();

  server::ServerOptions unasked = Options();
  unasked.tls_client_ca.clear();
  unasked.tokens.Add(kBeta, server::Caller::OfTenant("beta", "x509:CN=bob"));
  refused = server::ApiServer::Start(h_.controller, unasked);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("binds 1 token(s) to client certificates"), std::string::npos)
      << refused.status().ToString();
}

TEST_F(ApiMtlsTest, TheCertificateNamesTheCallerAndAReloadKeepsAskingForIt) {
  auto started = server::ApiServer::Start(h_.controller, Options());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  server::ApiServer& api = **started;
  EXPECT_EQ(List(api.port(), true), 200);
  EXPECT_EQ(List(api.port(), false), -1);

  httplib::SSLClient alice("127.0.0.1", api.port(), Path("alice.pem"), Path("alice.key"));
  alice.set_ca_cert_path(Path("server.pem"));
  alice.enable_server_certificate_verification(true);
  auto submitted =
      alice.Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("train", "alpha", 1, "1h"), "application/yaml");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body;
  // The journal names alice's certificate, not the token (the 201 came after the record).
  std::string journal;
  for (const auto& file : std::filesystem::directory_iterator(h_.state_dir() + "/audit/journal")) {
    std::ifstream in(file.path());
    journal += std::string(std::istreambuf_iterator<char>(in), {});
  }
  EXPECT_NE(journal.find(R"("principal":"x509:CN=alice,O=alpha")"), std::string::npos);
  EXPECT_EQ(journal.find(R"("principal":"alpha-ci")"), std::string::npos);
  auto ready = alice.Get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(nlohmann::json::parse(ready->body).value("tls", ""), "mutual") << ready->body;

  // A reload reads the client CA again and keeps requiring certificates.
  ASSERT_TRUE(api.ReloadTls().ok());
  EXPECT_EQ(List(api.port(), true), 200);
  EXPECT_EQ(List(api.port(), false), -1);
  api.Stop();
}

TEST_F(ApiMtlsTest, ALoadedContextThatAsksForNoCertificateCannotReplaceOneThatDoes) {
  auto mutual = server::TlsContext::Load(Path("server.pem"), Path("server.key"), Path("ca.pem"));
  ASSERT_TRUE(mutual.ok()) << mutual.status().ToString();
  EXPECT_TRUE((*mutual)->requires_client_certificate());
  server::GuardedServer http(server::ConnectionLimits{}, std::move(mutual).value());

  auto server_only = server::TlsContext::Load(Path("server.pem"), Path("server.key"));
  ASSERT_TRUE(server_only.ok());
  EXPECT_FALSE((*server_only)->requires_client_certificate());
  EXPECT_EQ(http.ReplaceTls(std::move(server_only).value()).code(), StatusCode::kFailedPrecondition);
  auto renewed = server::TlsContext::Load(Path("server.pem"), Path("server.key"), Path("ca.pem"));
  ASSERT_TRUE(renewed.ok());
  EXPECT_TRUE(http.ReplaceTls(std::move(renewed).value()).ok());

  // A client CA file that holds no certificate is refused, naming it.
  std::ofstream(Path("empty-ca.pem")) << "not a certificate\n";
  auto empty = server::TlsContext::Load(Path("server.pem"), Path("server.key"), Path("empty-ca.pem"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty-ca.pem"), std::string::npos) << empty.status().ToString();
}

}  // namespace
}  // namespace gpufed::testing

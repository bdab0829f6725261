// A hostile client against the real API on 127.0.0.1: bodies smuggled behind early
// answers, framing that cannot be trusted, oversized heads, one tenant's token holding
// connections with slow bodies from ten addresses, unknown tokens, and a tenant probing
// for other tenants' names. Every wait ends on something the client observes.
#include <sys/resource.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "controller/server/admission.h"
#include "controller/server/server.h"
#include "tests/integration/controller/api_fixture.h"
#include "tests/integration/controller/raw_socket.h"

namespace gpufed::testing {
namespace {

using std::chrono::steady_clock;

// A request whose body is itself a whole request, with the admin token: if the server
// ever parsed a body as the next request, a second answer would list every tenant.
std::string Smuggled() {
  return std::string("GET /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kAdmin + "\r\n\r\n";
}

std::string Request(const std::string& method, const std::string& path, const std::string& token,
                    const std::string& body, const std::string& extra_headers = "") {
  std::string head = method + " " + path + " HTTP/1.1\r\nHost: x\r\n" + extra_headers;
  if (!token.empty()) head += "Authorization: Bearer " + token + "\r\n";
  return head + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class ApiHostileClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshDir(std::string("api_hostile_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    Status opened = h_.Open(dir_);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
  }
  // `rate_clock`: the per-tenant rate limits' time (null: the wall clock).
  void Start(const server::ConnectionLimits& limits = {}, size_t max_body = size_t{64} * 1024,
             const gpufed::Clock* rate_clock = nullptr) {
    server::ServerOptions o;
    o.clock = rate_clock;
    o.tokens = {{kAdmin, server::Caller::Admin("admin-ops")},
                {kAlpha, server::Caller::OfTenant("alpha", "alpha-ci")},
                {kBeta, server::Caller::OfTenant("beta", "beta-ci")},
                {kMetrics, server::Caller::Metrics("prometheus")}};
    o.connections = limits;
    o.max_body_bytes = max_body;
    auto s = server::ApiServer::Start(h_.controller, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
  }
  // Sends `request` and expects exactly one answer with `status`, after which the
  // server closes the connection (so nothing that followed was read as a request).
  void ExpectOneAnswerThenClose(const std::string& request, int status, const std::string& what) {
    SCOPED_TRACE(what);
    RawSocket c(server_->port());
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.Send(request));
    const std::string first = c.ReadResponse();
    EXPECT_EQ(RawSocket::StatusOf(first), status) << first;
    EXPECT_NE(RawSocket::Lower(first).find("connection: close"), std::string::npos) << first;
    EXPECT_EQ(c.ReadResponse(milliseconds(3000)), "") << "a second answer: a body was parsed as a request";
    EXPECT_TRUE(c.WaitClosed());
  }

  std::string dir_;
  Harness h_;
  std::unique_ptr<server::ApiServer> server_;
};

// Every answer given before a body is read ends the connection: the body is never
// parsed as a request, whatever the status.
TEST_F(ApiHostileClientTest, NoEarlyAnswerLetsABodyBeParsedAsARequest) {
  Start();
  const std::string body = Smuggled();
  ExpectOneAnswerThenClose(Request("POST", "/v1/workloads", "unknown-token-0123456789", body), 401, "401");
  ExpectOneAnswerThenClose(Request("POST", "/v1/workloads", kMetrics, body), 403, "403");
  ExpectOneAnswerThenClose(Request("POST", "/v1/tenants/beta/workloads", kAlpha, body), 404,
                           "404 another tenant's path");
  ExpectOneAnswerThenClose(Request("POST", "/v1/no-such-route", kAdmin, body), 400, "a route that takes no body");
  ExpectOneAnswerThenClose(Request("GET", "/v1/clusters", kAdmin, body), 400, "GET with a body");
  ExpectOneAnswerThenClose(Request("DELETE", "/v1/workloads/x", kAdmin, body), 400, "DELETE with a body");
  ExpectOneAnswerThenClose(Request("GET", "/healthz", "", body), 400, "/healthz with a body");
  ExpectOneAnswerThenClose(Request("POST", "/v1/workloads", kAlpha, body + std::string(size_t{70} * 1024, ' ')), 413,
                           "413 over the body cap");
  // Framing that cannot be trusted is refused before anything is read.
  for (const char* length : {"-1", "abc", "1e3", "+5", "0x10"}) {
    ExpectOneAnswerThenClose("POST /v1/workloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kAlpha) +
                                 "\r\nContent-Length: " + length + "\r\n\r\n" + body,
                             400, std::string("Content-Length: ") + length);
  }
  // An empty length (which the parser drops) leaves a submission without one: 411.
  ExpectOneAnswerThenClose("POST /v1/workloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + std::string(kAlpha) +
                               "\r\nContent-Length: \r\n\r\n" + body,
                           411, "an empty Content-Length");
  ExpectOneAnswerThenClose(
      "POST /v1/workloads HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n" + body, 400,
      "two Content-Lengths");
  ExpectOneAnswerThenClose(
      "POST /v1/workloads HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n" + body, 400,
      "Transfer-Encoding beside Content-Length");
}

// The case: a tenant over its rate limit sends a POST whose body is a request
// with the admin token. One answer (429) comes back and the connection closes.
TEST_F(ApiHostileClientTest, ARateLimitedPostNeverRunsItsBody) {
  // alpha's limits are the defaults (50/s, burst 100), on the harness's clock, which
  // stands still: no token comes back between the first 429 and the POST (on the wall
  // clock one does every 20 ms, and a pause of the test let the POST through).
  Start({}, size_t{64} * 1024, &h_.clock);
  RawSocket c(server_->port());
  ASSERT_TRUE(c.connected());
  int limited = 0;
  // Bounded: the default burst is 100, so a 429 comes within the first 200 requests.
  for (int i = 0; i < 200 && limited == 0; ++i) {
    RawSocket probe(server_->port());
    ASSERT_TRUE(probe.Send(Request("GET", "/v1/clusters", kAlpha, "")));
    limited = RawSocket::StatusOf(probe.ReadResponse()) == 429 ? 1 : 0;
  }
  ASSERT_EQ(limited, 1) << "alpha never reached its default rate limit";
  ExpectOneAnswerThenClose(Request("POST", "/v1/workloads", kAlpha, Smuggled()), 429, "429");
}

// A head with too many or too long lines is answered 431 before anything parses it.
TEST_F(ApiHostileClientTest, OversizedHeadsAreRefusedBeforeAuthentication) {
  Start();
  std::string many = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 150; ++i) many += "X-" + std::to_string(i) + ": 1\r\n";
  ExpectOneAnswerThenClose(many + "\r\n", 431, "too many header lines");
  ExpectOneAnswerThenClose(
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(size_t{40} * 1024, 'a') + "\r\n\r\n", 431,
      "a header line of 40 KiB");
  // An ordinary request still works on a fresh connection, and keeps it alive.
  RawSocket c(server_->port());
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(RawSocket::StatusOf(c.ReadResponse()), 200);
  EXPECT_EQ(RawSocket::StatusOf(c.ReadResponse()), 200);
}

// A body the route reads to its end keeps the connection alive; pipelined requests that
// follow it are answered in order.
TEST_F(ApiHostileClientTest, AFullyReadBodyKeepsTheConnection) {
  Start();
  RawSocket c(server_->port());
  ASSERT_TRUE(c.Send(Request("POST", "/v1/workloads", kAlpha, WorkloadYaml("kept", "alpha", 1, "1h")) +
                     Request("GET", "/v1/workloads/kept", kAlpha, "")));
  const std::string created = c.ReadResponse();
  EXPECT_EQ(RawSocket::StatusOf(created), 201) << created;
  EXPECT_EQ(RawSocket::Lower(created).find("connection: close"), std::string::npos) << created;
  EXPECT_EQ(RawSocket::StatusOf(c.ReadResponse()), 200);
}

// Unknown tokens cost the guesser: past a burst from one address they get 429, and the
// other addresses are not affected.
TEST_F(ApiHostileClientTest, UnknownTokensAreRateLimitedPerAddress) {
  Start();
  int unauthorized = 0, limited = 0;
  for (int i = 0; i < 60; ++i) {
    RawSocket c(server_->port(), "127.0.0.2");
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.Send(Request("GET", "/v1/clusters", "guess-" + std::to_string(i) + "-0123456789", "")));
    const int status = RawSocket::StatusOf(c.ReadResponse());
    unauthorized += status == 401;
    limited += status == 429;
  }
  EXPECT_GE(unauthorized, server::Admission::kUnknownTokenBurst);
  EXPECT_GT(limited, 0);
  RawSocket other(server_->port(), "127.0.0.3");
  ASSERT_TRUE(other.Send(Request("GET", "/v1/clusters", "guess-x-0123456789", "")));
  EXPECT_EQ(RawSocket::StatusOf(other.ReadResponse()), 401);
}

// A tenant's token learns nothing of other tenants: a workload for a tenant that exists
// and for one that does not get the same answer.
TEST_F(ApiHostileClientTest, ATenantTokenCannotTellOtherTenantsFromNone) {
  Start();
  httplib::Client client("127.0.0.1", server_->port());
  auto foreign = client.Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("w1", "beta", 1, "1h"), "application/yaml");
  auto unknown =
      client.Post("/v1/workloads", Auth(kAlpha), WorkloadYaml("w1", "no-such-tenant", 1, "1h"), "application/yaml");
  ASSERT_TRUE(foreign && unknown);
  EXPECT_EQ(foreign->status, 403);
  EXPECT_EQ(foreign->status, unknown->status);
  EXPECT_EQ(foreign->body, unknown->body);
  EXPECT_EQ(foreign->body.find("beta"), std::string::npos) << foreign->body;
  auto foreign_path = client.Get("/v1/tenants/beta/workloads", Auth(kAlpha));
  auto unknown_path = client.Get("/v1/tenants/zeta/workloads", Auth(kAlpha));
  ASSERT_TRUE(foreign_path && unknown_path);
  EXPECT_EQ(foreign_path->status, unknown_path->status);
}

// Without maxPriority a tenant's token may submit up to the normal class, so it cannot
// preempt other tenants' work; an admin is held only to a cap the repository declares
// (beta declares none).
TEST_F(ApiHostileClientTest, ATenantWithoutMaxPriorityIsCappedAtNormal) {
  Start();
  httplib::Client client("127.0.0.1", server_->port());
  auto at = [](const std::string& name, const std::string& priority) {
    std::string w = WorkloadYaml(name, "beta", 1, "1h");
    w.replace(w.find("  tenant: beta"), 14, "  tenant: beta\n  priority: " + priority);
    return w;
  };
  auto refused = client.Post("/v1/workloads", Auth(kBeta), at("urgent", "urgent"), "application/yaml");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  EXPECT_NE(refused->body.find("the normal class"), std::string::npos) << refused->body;
  auto normal = client.Post("/v1/workloads", Auth(kBeta), at("ordinary", "normal"), "application/yaml");
  ASSERT_TRUE(normal);
  EXPECT_EQ(normal->status, 201) << normal->body;
  auto by_admin = client.Post("/v1/tenants/beta/workloads", Auth(kAdmin), at("urgent", "urgent"), "application/yaml");
  ASSERT_TRUE(by_admin);
  EXPECT_EQ(by_admin->status, 201) << by_admin->body;
}

// The outage: 1,200 connections with slow bodies and one tenant's token, 120
// from each of ten addresses. The tenant keeps only its share in flight (its excess is
// refused and closed), and /healthz and an admin submission from another address are
// answered throughout.
TEST_F(ApiHostileClientTest, OneTenantsSlowBodiesCannotTakeTheApiFromOthers) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 8192));
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &files), 0);
  ASSERT_GE(files.rlim_cur, 4096u) << "needs 1,200 client and 1,200 server sockets";
  Start();
  std::vector<std::unique_ptr<RawSocket>> attack;
  const std::string head = std::string("POST /v1/workloads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ") + kAlpha +
                           "\r\nContent-Type: application/yaml\r\nContent-Length: 60000\r\n\r\na";  // under the cap
  double worst_ms = 0;
  int checks = 0, submitted = 0;
  for (int round = 0; round < 12; ++round) {
    for (int address = 0; address < 10; ++address) {
      const std::string from = "127.0.0." + std::to_string(10 + address);
      for (int i = 0; i < 10; ++i) {
        attack.push_back(std::make_unique<RawSocket>(server_->port(), from.c_str()));
        ASSERT_TRUE(attack.back()->connected());
        (void)attack.back()->Send(head);  // a refused one may already be closed
      }
    }
    // While the attack holds its connections, another address is served.
    RawSocket health(server_->port(), "127.0.0.2");
    const auto start = steady_clock::now();
    ASSERT_TRUE(health.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(RawSocket::StatusOf(health.ReadResponse()), 200) << "round " << round;
    RawSocket admin(server_->port(), "127.0.0.2");
    ASSERT_TRUE(admin.Send(Request("POST", "/v1/tenants/alpha/workloads", kAdmin,
                                   WorkloadYaml("admin-" + std::to_string(round), "alpha", 1, "1h"))));
    const int status = RawSocket::StatusOf(admin.ReadResponse());
    EXPECT_EQ(status, 201) << "round " << round;
    submitted += status == 201;
    worst_ms = std::max(worst_ms, std::chrono::duration<double, std::milli>(steady_clock::now() - start).count());
    ++checks;
  }
  // The tenant's own excess was refused: apart from its share in flight (16 by default,
  // still being read), every attack connection was answered 429 or 503, or closed.
  // Answers already sent are read at once; only connections still being read wait out
  // the short limit (the tenant's share: 16 x 200 ms).
  std::vector<int> status(attack.size(), 0);
  for (size_t i = 0; i < attack.size(); ++i)
    status[i] = RawSocket::StatusOf(attack[i]->ReadResponse(milliseconds(200)));
  size_t refused = 0, dropped = 0, held = 0;
  for (size_t i = 0; i < attack.size(); ++i) {
    refused += status[i] == 429 || status[i] == 503;
    const bool open = status[i] == 0 && attack[i]->OpenNow();
    held += open;
    dropped += status[i] == 0 && !open;  // evicted while it waited for its head to be read
  }
  std::printf(
      "slow-body attack: %zu of %zu refused (429/503), %zu dropped, %zu held; "
      "worst /healthz + admin submission %.0f ms\n",
      refused, attack.size(), dropped, held, worst_ms);
  EXPECT_EQ(submitted, checks);
  // Held: being read, which only the tenant's share in flight may be.
  EXPECT_LE(held, static_cast<size_t>(model::Tenant::kDefaultApiMaxConcurrentRequests));
  EXPECT_GE(refused + dropped, attack.size() - model::Tenant::kDefaultApiMaxConcurrentRequests)
      << "the tenant's excess connections are refused, not queued";
  EXPECT_GE(refused, attack.size() / 2);
}

}  // namespace
}  // namespace gpufed::testing

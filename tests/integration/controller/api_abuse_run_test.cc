// The bounded abuse run, over real HTTP on 127.0.0.1: a 400 MB chunked
// upload (refused without a token, capped with one) and 5,000 mixed requests from 16
// clients while 64 slowloris connections stay open; memory (VmRSS of this process, which
// runs the server) grows by less than 64 MB and no accepted submission is lost.
#include <fcntl.h>
#include <httplib.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "controller/server/server.h"
#include "tests/integration/controller/api_fixture.h"
#include "tests/integration/controller/raw_socket.h"

namespace gpufed::testing {
namespace {

using std::chrono::steady_clock;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kRssBudget = 64 * kMiB;

std::unique_ptr<server::ApiServer> StartServer(Harness& h, const server::ConnectionLimits& limits) {
  server::ServerOptions o;
  o.tokens = {{kAdmin, server::Caller::Admin("admin-ops")}, {kAlpha, server::Caller::OfTenant("alpha", "alpha-ci")}};
  o.connections = limits;
  auto s = server::ApiServer::Start(h.controller, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

struct Upload {
  int status = 0;   // of the answer that came while uploading; 0: none
  size_t sent = 0;  // body bytes the server let through before answering
};

// Sends `head` and then up to `total` bytes of chunked body, generated as it goes (never
// held), while watching for the server's answer; stops sending when it comes.
Upload StreamChunked(int port, const std::string& head, size_t total) {
  RawSocket c(port);
  Upload up;
  if (!c.connected() || !c.Send(head)) return up;
  ::fcntl(c.fd(), F_SETFL, ::fcntl(c.fd(), F_GETFL) | O_NONBLOCK);
  const std::string chunk = "10000\r\n" + std::string(size_t{64} * 1024, 'x') + "\r\n";  // 64 KiB per chunk
  size_t offset = 0;
  bool sending = true;
  std::string answer;
  while (answer.find("\r\n\r\n") == std::string::npos) {
    pollfd p{c.fd(), static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, 20'000) <= 0) break;  // the server neither reads nor answers
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      const ssize_t n = ::recv(c.fd(), buf, sizeof buf, 0);
      if (n > 0) answer.append(buf, static_cast<size_t>(n));
      if (n == 0 || (n < 0 && errno != EAGAIN)) break;
    }
    if (sending && (p.revents & POLLOUT)) {
      const ssize_t n = ::send(c.fd(), chunk.data() + offset, chunk.size() - offset, MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN) sending = false;  // the server closed its side
      if (n > 0) {
        offset += static_cast<size_t>(n);
        if (offset == chunk.size()) {
          offset = 0;
          up.sent += size_t{64} * 1024;
          if (up.sent >= total) {
            (void)::send(c.fd(), "0\r\n\r\n", 5, MSG_NOSIGNAL);
            sending = false;
          }
        }
      }
    }
  }
  up.status = RawSocket::StatusOf(answer);
  return up;
}

TEST(ApiAbuseRun, AChunked400MbUploadIsRefusedWithoutATokenAndCappedWithOne) {
  Harness h;
  ASSERT_TRUE(h.Open(FreshDir("api_abuse_chunked")).ok());
  auto server = StartServer(h, {});
  ASSERT_TRUE(server);
  httplib::Client client("127.0.0.1", server->port());
  ASSERT_EQ(client.Get("/healthz")->status, 200);  // warmed up before the baseline
  const size_t before = ResidentBytes();
  const std::string head =
      "POST /v1/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
      "Transfer-Encoding: chunked\r\n";
  const size_t total = 400 * kMiB;
  Upload anonymous = StreamChunked(server->port(), head + "\r\n", total);
  EXPECT_EQ(anonymous.status, 401);
  Upload capped = StreamChunked(server->port(), head + "Authorization: Bearer " + kAlpha + "\r\n\r\n", total);
  EXPECT_EQ(capped.status, 413);
  EXPECT_LT(capped.sent, total);
  const size_t after = ResidentBytes();
  std::cout << "[ chunked ] 401 after " << anonymous.sent / kMiB << " MiB sent, 413 after " << capped.sent / kMiB
            << " MiB sent; RSS " << before / kMiB << " -> " << after / kMiB << " MiB\n";
  EXPECT_LT(after, before + kRssBudget);
  EXPECT_EQ(client.Get("/healthz")->status, 200);
}

// What one of the 16 clients saw.
struct ClientLog {
  size_t requests = 0, unanswered = 0, unexpected = 0;
  std::vector<std::string> submitted;  // names answered 201
  std::string first_problem;
};

// Request `i` of the mix: 40 % health, 20 % submissions, 10 % cluster reads, and 5 %
// each of metrics, readiness, a tenant read, a workload read, no token (401) and an
// oversize body (413).
void MixedRequest(httplib::Client& client, int i, ClientLog& log) {
  const httplib::Headers alpha = Auth(kAlpha);
  const httplib::Headers admin = Auth(kAdmin);
  std::vector<int> expected = {200};
  const int kind = i % 20;
  std::string name;
  httplib::Result r = [&]() -> httplib::Result {
    if (kind < 8) return client.Get("/healthz");
    if (kind < 12) {
      name = "abuse-" + std::to_string(i);
      expected = {201};
      return client.Post("/v1/workloads", alpha, WorkloadYaml(name, "alpha", 1, "1h"), "application/yaml");
    }
    if (kind < 14) return client.Get("/v1/clusters", alpha);
    if (kind == 14) return client.Get("/metrics", admin);
    if (kind == 15) {
      expected = {200, 503};
      return client.Get("/readyz");
    }
    if (kind == 16) return client.Get("/v1/tenants/alpha", alpha);
    if (kind == 17) {
      return client.Get(log.submitted.empty() ? "/v1/workloads" : "/v1/workloads/" + log.submitted.back(), alpha);
    }
    if (kind == 18) {
      expected = {401, 429};  // unknown tokens from one address are rate limited
      return client.Get("/v1/workloads");
    }
    // 1.5 MiB streamed from one shared block, so the clients hold no large buffers.
    static const std::string kFiller(size_t{64} * 1024, '#');
    expected = {413};
    return client.Post(
        "/v1/workloads", alpha, 3 * kMiB / 2,
        [](size_t, size_t length, httplib::DataSink& sink) {
          return sink.write(kFiller.data(), std::min(length, kFiller.size()));
        },
        "application/yaml");
  }();
  ++log.requests;
  const bool answered = static_cast<bool>(r);
  const bool as_expected = answered && std::find(expected.begin(), expected.end(), r->status) != expected.end();
  if (!answered) ++log.unanswered;
  if (answered && !as_expected) ++log.unexpected;
  if (!as_expected && log.first_problem.empty()) {
    log.first_problem = "request " + std::to_string(i) + ": " +
                        (answered ? std::to_string(r->status) + " " + r->body : httplib::to_string(r.error()));
  }
  if (as_expected && !name.empty()) log.submitted.push_back(name);
}

TEST(ApiAbuseRun, FiveThousandMixedRequestsFromSixteenClientsBesideSixtyFourSlowlorisConnections) {
  Harness h;
  // A load run, not a test of the tenant's limits: alpha's are lifted (the defaults would
  // answer most of its 2,000 requests 429).
  const std::string dir = FreshDir("api_abuse_mixed");
  std::string fleet = kFleet;
  const std::string cap = "  maxPriority: normal\n";
  fleet.replace(fleet.find(cap), cap.size(), cap + "  api: {rateLimit: \"0\", maxConcurrentRequests: 0}\n");
  std::ofstream(dir + "/repo/fleet.yaml") << fleet;
  ASSERT_TRUE(h.Open(dir).ok());
  server::ConnectionLimits limits;
  limits.header_timeout = std::chrono::seconds(120);  // the slow connections outlast the run
  auto server = StartServer(h, limits);
  ASSERT_TRUE(server);
  httplib::Client warm("127.0.0.1", server->port());
  ASSERT_EQ(warm.Get("/healthz")->status, 200);
  const size_t before = ResidentBytes();

  std::vector<std::unique_ptr<RawSocket>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<RawSocket>(server->port()));
    ASSERT_TRUE(slow.back()->Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n"));
  }
  constexpr int kClients = 16, kRequests = 5000;
  std::vector<ClientLog> logs(kClients);
  std::vector<std::thread> clients;
  clients.reserve(kClients);
  const auto start = steady_clock::now();
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", server->port());
      client.set_keep_alive(true);
      client.set_read_timeout(30, 0);
      for (int i = c; i < kRequests; i += kClients) MixedRequest(client, i, logs[c]);
    });
  }
  for (std::thread& t : clients) t.join();
  const double seconds = std::chrono::duration<double>(steady_clock::now() - start).count();
  const size_t after = ResidentBytes();

  size_t requests = 0;
  std::set<std::string> submitted;
  for (const ClientLog& log : logs) {
    requests += log.requests;
    EXPECT_EQ(log.unanswered, 0u) << log.first_problem;
    EXPECT_EQ(log.unexpected, 0u) << log.first_problem;
    submitted.insert(log.submitted.begin(), log.submitted.end());
  }
  EXPECT_EQ(requests, size_t{kRequests});
  EXPECT_EQ(submitted.size(), size_t{kRequests / 5});  // every submission was accepted
  // None lost: every 201 is in the store.
  auto listed = warm.Get("/v1/workloads", Auth(kAdmin));
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200) << listed->body;
  std::set<std::string> stored;
  const nlohmann::json list = nlohmann::json::parse(listed->body, nullptr, false);
  for (const auto& item : list.value("items", nlohmann::json::array())) stored.insert(item.value("name", ""));
  size_t lost = 0;
  for (const std::string& name : submitted) lost += stored.count(name) == 0 ? 1 : 0;
  EXPECT_EQ(lost, 0u);
  for (auto& s : slow) EXPECT_TRUE(s->OpenNow());
  std::cout << "[ mixed ] " << requests << " requests from " << kClients << " clients in " << seconds << " s ("
            << static_cast<int>(requests / seconds) << "/s) beside 64 slowloris connections; " << submitted.size()
            << " submissions, " << lost << " lost; RSS " << before / kMiB << " -> " << after / kMiB << " MiB\n";
  EXPECT_LT(after, before + kRssBudget);
}

}  // namespace
}  // namespace gpufed::testing

// The https sink against a cpp-httplib HTTPS receiver with mutual TLS.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/shipper.h"
#include "controller/audit/sinks/https_sink.h"
#include "controller/audit/verify.h"
#include "tests/integration/audit/receiver.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// Appends every POSTed body to a file; answers 503 to the first `failures` requests.
class HttpsReceiver {
 public:
  HttpsReceiver(const testing::TestPki& pki, std::string out_path)
      : server_(pki.file("server.crt").c_str(), pki.file("server.key").c_str(), pki.file("ca.crt").c_str()),
        out_path_(std::move(out_path)) {
    server_.Post("/audit", [this](const httplib::Request& req, httplib::Response& res) {
      requests++;
      if (failures > 0) {
        --failures;
        res.status = 503;
        return;
      }
      std::lock_guard<std::mutex> lock(mu_);
      std::ofstream(out_path_, std::ios::app) << req.body;
      res.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Bound already: connections wait in the backlog; also wait for the accept loop.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~HttpsReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "https://localhost:" + std::to_string(port_) + "/audit"; }
  std::atomic<int> failures{0};
  std::atomic<int> requests{0};

 private:
  httplib::SSLServer server_;
  std::string out_path_;
  std::mutex mu_;
  int port_ = 0;
  std::thread thread_;
};

class HttpsSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki_.ok());
    JournalOptions o;
    o.env = env_.get();
    o.dir = audit_dir_;
    o.signer = &signer_;
    o.checkpoint_every = 100;
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok());
    std::vector<AuditRecord> batch;
    for (int i = 0; i < 1000; ++i) batch.push_back({RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}}});
    ASSERT_TRUE((*j)->AppendBatch(batch).ok());
    ASSERT_TRUE((*j)->Close().ok());
    head_ = (*j)->last_seq();
  }

  std::unique_ptr<Shipper> MakeShipper(const std::string& url, const std::string& cert) {
    HttpsOptions h;
    h.url = url;
    h.ca_file = pki_.file("ca.crt");
    if (!cert.empty()) {
      h.cert_file = pki_.file(cert + ".crt");
      h.key_file = pki_.file(cert + ".key");
    }
    h.timeout_micros = 3'000'000;
    ShipperOptions so;
    so.env = env_.get();
    so.audit_dir = audit_dir_;
    so.sink_name = "https";
    so.batch_records = 100;
    so.backoff_initial_micros = 50'000;
    so.alert = [](const std::string&) {};
    return Shipper::Open(so, std::make_unique<HttpsSink>(h)).value();
  }

  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
  std::string audit_dir_ = dir_.str() + "/audit";
  testing::TestPki pki_{dir_.str()};
  Signer signer_ = Signer::Generate().value();
  uint64_t head_ = 0;
};

TEST_F(HttpsSinkTest, RetriesServerErrorsAndDeliversEverythingInOrder) {
  std::string received = dir_.str() + "/received.jsonl";
  HttpsReceiver receiver(pki_, received);
  receiver.failures = 3;
  auto shipper = MakeShipper(receiver.url(), "client");
  ASSERT_TRUE(shipper->DrainTo(head_, 20'000'000).ok()) << shipper->stats().last_error;
  EXPECT_GE(shipper->stats().failures, 3u);
  auto key = SignatureVerifier::FromPublicKeyPem(signer_.PublicKeyPem()).value();
  auto r = VerifyReceiverFile(*env_, received, {&key, true});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ok) << r->error;
  EXPECT_EQ(r->records, head_);
  EXPECT_EQ(r->duplicates, 0u);  // a 2xx is a real acknowledgement: nothing is resent
}

TEST_F(HttpsSinkTest, ClientWithoutCertificateIsRejected) {
  HttpsReceiver receiver(pki_, dir_.str() + "/received.jsonl");
  auto shipper = MakeShipper(receiver.url(), "");
  EXPECT_EQ(shipper->DrainTo(head_, 1'000'000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shipper->stats().acknowledged, 0u);
  EXPECT_EQ(receiver.requests, 0);
}

TEST_F(HttpsSinkTest, ClientCertificateFromAnotherCaIsRejected) {
  HttpsReceiver receiver(pki_, dir_.str() + "/received.jsonl");
  auto shipper = MakeShipper(receiver.url(), "rogue");
  EXPECT_EQ(shipper->DrainTo(head_, 1'000'000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(receiver.requests, 0);
}

TEST_F(HttpsSinkTest, ReceiverDownOnlyDelaysShipping) {
  std::string received = dir_.str() + "/received.jsonl";
  int port = testing::FreePort();
  auto shipper = MakeShipper("https://localhost:" + std::to_string(port) + "/audit", "client");
  EXPECT_EQ(shipper->DrainTo(head_, 500'000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shipper->stats().acknowledged, 0u);
  // A receiver appears (on another port): a new shipper resumes from the durable cursor.
  HttpsReceiver receiver(pki_, received);
  shipper.reset();
  auto again = MakeShipper(receiver.url(), "client");
  ASSERT_TRUE(again->DrainTo(head_, 20'000'000).ok()) << again->stats().last_error;
  auto r = VerifyReceiverFile(*env_, received, {nullptr, true});
  EXPECT_TRUE(r->ok) << r->error;
}

}  // namespace
}  // namespace gpufed::audit

// The syslog-tls sink against a real rsyslog with mutual TLS.
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/shipper.h"
#include "controller/audit/sinks/syslog_tls_sink.h"
#include "controller/audit/verify.h"
#include "tests/integration/audit/receiver.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

using Clock = std::chrono::steady_clock;

class SyslogTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki_.ok()) << "openssl failed to make the test PKI";
    ASSERT_TRUE(server_.Start()) << "rsyslog could not be started (install: GPUFED_TEST_DEPS=1 scripts/install-deps.sh): "
                                 << server_.diagnostics();
  }

  // Appends `n` decision-like records, with a checkpoint every 500.
  void WriteJournal(int n) {
    JournalOptions o;
    o.env = env_.get();
    o.dir = audit_dir_;
    o.controller_id = "it-ctl";
    o.signer = &signer_;
    o.checkpoint_every = 500;
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    std::vector<AuditRecord> batch;
    for (int i = 0; i < n; ++i) {
      batch.push_back({RecordKind::kDecision,
                       {{"workload", "job-" + std::to_string(i)}, {"tenant", "team-a"}, {"outcome", "placed"},
                        {"reason", "best score 5.0 \"quoted\" \\ backslash, unicode \xc3\xa9"}}});
      if (batch.size() == 1000) {
        ASSERT_TRUE((*j)->AppendBatch(batch).ok());
        batch.clear();
      }
    }
    if (!batch.empty()) {
      ASSERT_TRUE((*j)->AppendBatch(batch).ok());
    }
    ASSERT_TRUE((*j)->Close().ok());
    head_ = (*j)->last_seq();
  }

  SyslogTlsOptions SinkOptions(const std::string& cert = "client") {
    SyslogTlsOptions o;
    o.host = "127.0.0.1";
    o.port = server_.port();
    o.ca_file = pki_.file("ca.crt");
    if (!cert.empty()) {
      o.cert_file = pki_.file(cert + ".crt");
      o.key_file = pki_.file(cert + ".key");
    }
    o.server_name = "localhost";
    o.settle_micros = 300'000;
    o.io_timeout_micros = 3'000'000;
    return o;
  }

  std::unique_ptr<Shipper> MakeShipper(const SyslogTlsOptions& o) {
    ShipperOptions so;
    so.env = env_.get();
    so.audit_dir = audit_dir_;
    so.sink_name = "rsyslog";
    so.batch_records = 500;
    so.backoff_initial_micros = 100'000;
    so.backoff_max_micros = 1'000'000;
    so.alert = [](const std::string&) {};
    auto s = Shipper::Open(so, std::make_unique<SyslogTlsSink>(env_.get(), o));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  // Polls the receiver's file until it verifies with `records` distinct records.
  VerifyReport WaitForReceiverCopy(uint64_t records, int64_t timeout_ms = 10000) {
    auto key = SignatureVerifier::FromPublicKeyPem(signer_.PublicKeyPem()).value();
    VerifyReport last;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    do {
      auto r = VerifyReceiverFile(*env_, server_.received_path(), {&key, true});
      if (r.ok()) {
        last = *r;
        if (last.ok && last.records >= records) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (Clock::now() < deadline);
    return last;
  }

  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
  std::string audit_dir_ = dir_.str() + "/audit";
  testing::TestPki pki_{dir_.str()};
  testing::RsyslogServer server_{dir_.str()};
  Signer signer_ = Signer::Generate().value();
  uint64_t head_ = 0;
};

TEST_F(SyslogTlsTest, AllRecordsArriveAndTheReceiverCopyVerifies) {
  WriteJournal(3000);
  auto shipper = MakeShipper(SinkOptions());
  ASSERT_TRUE(shipper->DrainTo(head_, 20'000'000).ok()) << shipper->stats().last_error;
  VerifyReport r = WaitForReceiverCopy(head_);
  EXPECT_TRUE(r.ok) << r.error << " at line " << r.line_number;
  EXPECT_EQ(r.records, head_);
  EXPECT_GT(r.signatures_verified, 0u);
  EXPECT_EQ(r.last_signed_seq, head_);
}

TEST_F(SyslogTlsTest, ClientWithoutCertificateIsRejectedAndNothingIsAcknowledged) {
  WriteJournal(50);
  auto shipper = MakeShipper(SinkOptions(""));
  Status s = shipper->DrainTo(head_, 1'500'000);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shipper->stats().acknowledged, 0u);
  EXPECT_GT(shipper->stats().failures, 0u);
  EXPECT_EQ(testing::ReadAll(server_.received_path()).find("{\"seq\":"), std::string::npos);
}

TEST_F(SyslogTlsTest, ClientCertificateFromAnotherCaIsRejected) {
  WriteJournal(50);
  auto shipper = MakeShipper(SinkOptions("rogue"));
  EXPECT_EQ(shipper->DrainTo(head_, 1'500'000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shipper->stats().acknowledged, 0u);
  EXPECT_EQ(testing::ReadAll(server_.received_path()).find("{\"seq\":"), std::string::npos);
}

TEST_F(SyslogTlsTest, ClientWhoseNameIsNotPermittedIsRejected) {
  WriteJournal(50);
  auto shipper = MakeShipper(SinkOptions("intruder"));
  EXPECT_EQ(shipper->DrainTo(head_, 1'500'000).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(shipper->stats().acknowledged, 0u);
  EXPECT_EQ(testing::ReadAll(server_.received_path()).find("{\"seq\":"), std::string::npos);
}

TEST_F(SyslogTlsTest, ServerWithTheWrongNameIsRefused) {
  SyslogTlsOptions o = SinkOptions();
  o.server_name = "audit.example.org";
  SyslogTlsSink sink(env_.get(), o);
  Status s = sink.Connect();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("hostname mismatch"), std::string::npos) << s.message();
}

TEST_F(SyslogTlsTest, ReceiverKilledMidStreamAndRestartedLosesNothing) {
  WriteJournal(30000);
  auto shipper = MakeShipper(SinkOptions());
  // Ship until part of the journal is acknowledged, then crash the receiver.
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (shipper->stats().acknowledged < 5000 && Clock::now() < deadline) {
    int64_t wait = shipper->Step();
    if (wait > 0) std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(wait, 20000)));
  }
  ASSERT_GE(shipper->stats().acknowledged, 5000u);
  server_.Kill();
  // Down for 5 s: the shipper keeps trying (and failing) meanwhile.
  auto restart_at = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < restart_at) {
    int64_t wait = shipper->Step();
    std::this_thread::sleep_for(std::chrono::microseconds(std::clamp<int64_t>(wait, 1000, 50000)));
  }
  EXPECT_GT(shipper->stats().failures, 0u);
  ASSERT_TRUE(server_.Start()) << server_.diagnostics();
  ASSERT_TRUE(shipper->DrainTo(head_, 30'000'000).ok()) << shipper->stats().last_error;
  VerifyReport r = WaitForReceiverCopy(head_, 15000);
  EXPECT_TRUE(r.ok) << r.error << " at line " << r.line_number;
  EXPECT_EQ(r.records, head_);  // every record, some delivered twice
}

}  // namespace
}  // namespace gpufed::audit

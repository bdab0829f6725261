// The audit journal's shipping clients against hostile receivers: the https sink (every
// HTTP mode) and the syslog-tls sink (the modes a TLS stream can be hostile in). Each
// attempt must fail with the reason in its Status within its timeout plus a second, keep
// memory bounded, and the reason (a wrong CA, a wrong name) must be logged once per
// episode, not only show as a sink "still behind".
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/sinks/https_sink.h"
#include "controller/audit/sinks/syslog_tls_sink.h"
#include "controller/common/utf8.h"
#include "tests/hostile-backend/hostile_cases.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::hostile {
namespace {

std::vector<audit::JournalEntry> Batch(size_t records, size_t line_bytes) {
  std::vector<audit::JournalEntry> batch;
  for (size_t i = 1; i <= records; ++i) {
    audit::JournalEntry e;
    e.seq = i;
    e.time_micros = 1'700'000'000'000'000;
    e.kind = "decision";
    e.hash = std::string(64, 'a');
    e.line = "{\"seq\":" + std::to_string(i) + ",\"pad\":\"" + std::string(line_bytes, 'p') + "\"}";
    batch.push_back(std::move(e));
  }
  return batch;
}

void ExpectReasonLoggedOnce(const std::vector<std::string>& log, const Status& status, const std::string& sink) {
  ASSERT_EQ(log.size(), 1u) << "one line per episode, however often the shipper retries";
  EXPECT_NE(log[0].find(sink), std::string::npos) << log[0];
  EXPECT_NE(log[0].find(status.message()), std::string::npos) << "the reason, not only 'behind': " << log[0];
}

class HttpsSinkFaces : public ::testing::TestWithParam<Hostility> {};

TEST_P(HttpsSinkFaces, SendFailsWithTheReason) {
  const Hostility& h = GetParam();
  Backend backend = StartBackend(h, true);
  testutil::TempDir dir;
  dir.Write("ca.pem", TestCas().trusted.ca_pem);
  std::vector<std::string> log;
  audit::HttpsOptions o;
  o.url = backend.server->url() + "/ingest";
  o.ca_file = dir.str() + "/ca.pem";
  o.timeout_micros = kTimeoutMs * 1000;
  o.connect_timeout_micros = kTimeoutMs * 1000;
  o.log = [&](const std::string& line) { log.push_back(line); };
  audit::HttpsSink sink(o);
  const std::vector<audit::JournalEntry> batch = Batch(3, 100);
  Status s;
  Measured m = Measure([&] {
    s = sink.Connect();
    if (s.ok()) s = sink.Send(batch);
  });
  SCOPED_TRACE(std::string(h.name) + ": " + s.ToString());
  ASSERT_FALSE(s.ok());
  // The shipper retries any error; a redirect is a misconfiguration like any non-2xx.
  EXPECT_EQ(s.code(), h.mode == Mode::kRedirect ? StatusCode::kFailedPrecondition : StatusCode::kUnavailable);
  const std::string fragment = h.mode == Mode::kRedirect ? "HTTP 302" : h.fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos);
  EXPECT_NE(s.message().find(backend.server->url()), std::string::npos);
  EXPECT_FALSE(FirstInvalidUtf8(s.message()).has_value());
  EXPECT_LT(m.elapsed_ms, kTimeoutMs + kSlackMs);
  EXPECT_LT(m.peak_rss_growth, kMaxRssGrowthBytes);
  if (backend.elsewhere) {
    EXPECT_EQ(backend.elsewhere->connections(), 0) << "a redirect was followed";
  }
  EXPECT_EQ(sink.Acknowledged().value(), 0u);
  // The shipper's next try: same episode, nothing more in the log.
  sink.Disconnect();
  ASSERT_TRUE(sink.Connect().ok());
  EXPECT_FALSE(sink.Send(batch).ok());
  ExpectReasonLoggedOnce(log, s, sink.Describe());
}

// The https sink's answers are small: the 64 KiB cap, not the connectors' 8 MiB, is what
// stops floods and big bodies ("larger than 65536 bytes").
std::vector<Hostility> SinkHostilities() {
  std::vector<Hostility> out = HttpHostilities();
  for (Hostility& h : out) {
    if (std::string(h.fragment) == "larger than 8388608 bytes") h.fragment = "larger than 65536 bytes";
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Modes, HttpsSinkFaces, ::testing::ValuesIn(SinkHostilities()), CaseName);

// syslog over TLS: the receiver speaks TLS and never answers with data.
struct SyslogHostility {
  const char* name;
  Mode mode;
  Cert cert;
  bool tls;
  const char* fragment;
  size_t batch_records;  // what Send carries (large: the receiver must hold it up)
};

void PrintTo(const SyslogHostility& h, std::ostream* os) { *os << h.name; }

std::string SyslogName(const ::testing::TestParamInfo<SyslogHostility>& info) { return info.param.name; }

class SyslogTlsSinkFaces : public ::testing::TestWithParam<SyslogHostility> {};

TEST_P(SyslogTlsSinkFaces, FailsWithTheReason) {
  const SyslogHostility& h = GetParam();
  Hostility as_http{h.name, h.mode, h.cert, StatusCode::kUnavailable, h.fragment};
  Backend backend = StartBackend(as_http, h.tls, /*read_request=*/false);
  testutil::TempDir dir;
  dir.Write("ca.pem", TestCas().trusted.ca_pem);
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  std::vector<std::string> log;
  audit::SyslogTlsOptions o;
  const std::string hostport = backend.server->hostport();
  o.host = hostport.substr(0, hostport.rfind(':'));
  o.port = backend.server->port();
  o.ca_file = dir.str() + "/ca.pem";
  o.connect_timeout_micros = kTimeoutMs * 1000;
  o.io_timeout_micros = kTimeoutMs * 1000;
  o.log = [&](const std::string& line) { log.push_back(line); };
  audit::SyslogTlsSink sink(env.get(), o);
  const std::vector<audit::JournalEntry> batch = Batch(h.batch_records, 60'000);
  Status s;
  Measured m = Measure([&] {
    s = sink.Connect();
    if (s.ok()) s = sink.Send(batch);
    // A flooding receiver shows when the sink next looks at the connection; the sink
    // reads without blocking, so look until it notices (bounded by the call's timeout).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTimeoutMs);
    while (s.ok() && std::chrono::steady_clock::now() < until) s = sink.Acknowledged().status();
  });
  SCOPED_TRACE(std::string(h.name) + ": " + s.ToString());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find(h.fragment), std::string::npos);
  EXPECT_NE(s.message().find(sink.Describe()), std::string::npos);
  EXPECT_FALSE(FirstInvalidUtf8(s.message()).has_value());
  EXPECT_LT(m.elapsed_ms, 2 * kTimeoutMs + kSlackMs) << "connect and handshake, then the write, each bounded";
  EXPECT_LT(m.peak_rss_growth, kMaxRssGrowthBytes);
  ExpectReasonLoggedOnce(log, s, sink.Describe());
}

INSTANTIATE_TEST_SUITE_P(
    Modes, SyslogTlsSinkFaces,
    ::testing::Values(
        SyslogHostility{"silent", Mode::kSilent, Cert::kTrusted, true, "timed out", 1},
        SyslogHostility{"garbage", Mode::kGarbage, Cert::kTrusted, false, "TLS handshake", 1},
        SyslogHostility{"wrong_ca", Mode::kHang, Cert::kOtherCa, true, "unable to get local issuer certificate", 1},
        SyslogHostility{"wrong_name", Mode::kHang, Cert::kOtherName, true, "mismatch", 1},
        SyslogHostility{"flood", Mode::kFlood, Cert::kTrusted, true, "application data", 1},
        // ~18 MB: more than loopback's socket buffers hold, so the write needs the receiver.
        SyslogHostility{"slow_reader", Mode::kSlowReader, Cert::kTrusted, true, "timed out", 300},
        SyslogHostility{"hang", Mode::kHang, Cert::kTrusted, true, "timed out", 300}),
    SyslogName);

}  // namespace
}  // namespace gpufed::hostile

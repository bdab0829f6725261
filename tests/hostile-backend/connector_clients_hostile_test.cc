// The connectors' HTTP clients against every hostile backend: the Slurm client (plain
// HTTP and TLS) and the Kubernetes API client (TLS, bearer token). Each call must fail
// with a clear error within its timeout plus a second, keep its memory bounded while
// the peer floods, log the refusal once per episode and never a secret.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "connectors/http/http_client.h"
#include "connectors/kubernetes/kube_api.h"
#include "connectors/slurm/slurm_client.h"
#include "controller/common/clock.h"
#include "controller/common/utf8.h"
#include "tests/hostile-backend/hostile_cases.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::hostile {
namespace {

using connectors::CallContext;

// A JWT the Slurm client accepts locally (exp in 2100, user "gpufed"); slurmrestd would
// check the signature, the hostile server does not.
constexpr const char* kSlurmJwt = "eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjQxMDI0NDQ4MDAsInN1biI6ImdwdWZlZCJ9.c2ln";
constexpr const char* kKubeToken = "kube-bearer-token-must-never-be-logged";

struct Outcome {
  Status status;
  Measured measured;
  std::vector<std::string> log;
  bool elsewhere_contacted = false;
  bool authorization_forwarded = false;
};

void ExpectRefusedClearly(const Hostility& h, const Outcome& out, const std::string& endpoint) {
  SCOPED_TRACE(std::string(h.name) + ": " + out.status.ToString());
  ASSERT_FALSE(out.status.ok());
  EXPECT_EQ(out.status.code(), h.code);
  EXPECT_NE(out.status.message().find(h.fragment), std::string::npos);
  EXPECT_NE(out.status.message().find(endpoint), std::string::npos) << "the error names the peer";
  EXPECT_FALSE(FirstInvalidUtf8(out.status.message()).has_value());
  EXPECT_LT(out.measured.elapsed_ms, kTimeoutMs + kSlackMs);
  EXPECT_LT(out.measured.peak_rss_growth, kMaxRssGrowthBytes);
  EXPECT_FALSE(out.elsewhere_contacted) << "a redirect was followed";
  EXPECT_FALSE(out.authorization_forwarded);
  // The refusal is logged once, with the peer and the reason, never with a token.
  ASSERT_EQ(out.log.size(), 1u);
  EXPECT_NE(out.log[0].find(endpoint), std::string::npos) << out.log[0];
  for (const std::string& line : out.log) {
    EXPECT_EQ(line.find(kSlurmJwt), std::string::npos);
    EXPECT_EQ(line.find(kKubeToken), std::string::npos);
    EXPECT_EQ(line.find("Bearer"), std::string::npos);
  }
  EXPECT_EQ(out.status.message().find(kKubeToken), std::string::npos);
  EXPECT_EQ(out.status.message().find(kSlurmJwt), std::string::npos);
}

CallContext Context(const gpufed::Clock* clock) {
  CallContext ctx;
  ctx.clock = clock;
  ctx.timeout = Duration::FromMillis(kTimeoutMs);
  return ctx;
}

// Two calls, as a retrying loop makes them: both fail, the refusal is logged once.
template <typename Call>
Outcome Play(const Backend& backend, std::vector<std::string>* log, Call call) {
  Outcome out;
  out.measured = Measure([&] { out.status = call(); });
  Status again = call();
  EXPECT_FALSE(again.ok());
  out.log = *log;
  if (backend.elsewhere) {
    out.elsewhere_contacted = backend.elsewhere->connections() > 0;
    out.authorization_forwarded = backend.elsewhere->saw_authorization();
  }
  return out;
}

class SlurmClientFaces : public ::testing::TestWithParam<Hostility> {
 protected:
  Outcome Run(bool tls) {
    const Hostility& h = GetParam();
    backend_ = StartBackend(h, tls);
    dir_.Write("jwt", kSlurmJwt);
    dir_.Write("ca.pem", TestCas().trusted.ca_pem);
    connectors::slurm::ClientSettings s;
    s.endpoint = backend_.server->url();
    s.token_file = dir_.str() + "/jwt";
    if (tls) s.ca_file = dir_.str() + "/ca.pem";
    s.timeout = Duration::FromMillis(kTimeoutMs);
    s.max_reply_bytes = kTestCapBytes;
    s.log = [this](LogLevel, const std::string& line) { log_.push_back(line); };
    Result<std::unique_ptr<connectors::slurm::SlurmClient>> client = connectors::slurm::SlurmClient::Create(s);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    return Play(backend_, &log_, [&] { return client_->Nodes(Context(&clock_)).status(); });
  }

  testutil::TempDir dir_;
  gpufed::ManualClock clock_;
  Backend backend_;
  std::vector<std::string> log_;
  std::unique_ptr<connectors::slurm::SlurmClient> client_;
};

class SlurmClientOverHttp : public SlurmClientFaces {};
class SlurmClientOverTls : public SlurmClientFaces {};

TEST_P(SlurmClientOverHttp, Nodes) {
  Outcome out = Run(false);
  ExpectRefusedClearly(GetParam(), out, backend_.server->url());
}

TEST_P(SlurmClientOverTls, Nodes) {
  Outcome out = Run(true);
  ExpectRefusedClearly(GetParam(), out, backend_.server->url());
}

INSTANTIATE_TEST_SUITE_P(Modes, SlurmClientOverHttp, ::testing::ValuesIn(PlainHttpHostilities()), CaseName);
INSTANTIATE_TEST_SUITE_P(Modes, SlurmClientOverTls, ::testing::ValuesIn(HttpHostilities()), CaseName);

class KubeApiFaces : public ::testing::TestWithParam<Hostility> {};

TEST_P(KubeApiFaces, ListAndGet) {
  const Hostility& h = GetParam();
  Backend backend = StartBackend(h, true);
  std::vector<std::string> log;
  connectors::http::ClientOptions o;
  o.base_url = backend.server->url();
  o.ca.pem = TestCas().trusted.ca_pem;
  o.bearer_token = kKubeToken;
  o.max_reply_bytes = kTestCapBytes;
  o.log = [&](LogLevel, const std::string& line) { log.push_back(line); };
  Result<std::unique_ptr<connectors::http::Client>> client = connectors::http::Client::Create(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  connectors::kubernetes::KubeApi api(std::move(client).value(), "");
  gpufed::ManualClock clock;
  Outcome out = Play(backend, &log, [&] { return api.List("/api/v1/nodes", {}, Context(&clock)).status(); });
  ExpectRefusedClearly(h, out, backend.server->url());
  Status get = api.Get("/apis/batch/v1/namespaces/gpufed/jobs/x", Context(&clock)).status();
  EXPECT_EQ(get.code(), h.code) << get.ToString();
  EXPECT_EQ(log.size(), 1u) << "still the same episode";
  EXPECT_GE(api.client()->refusals().unreachable + api.client()->refusals().timeout + api.client()->refusals().tls +
                api.client()->refusals().over_cap + api.client()->refusals().redirect,
            3);
}

INSTANTIATE_TEST_SUITE_P(Modes, KubeApiFaces, ::testing::ValuesIn(HttpHostilities()), CaseName);

// The default cap (64 MiB, no option set) holds a flood too, well under 100 MB of growth:
// the reply is kept in 1 MiB pieces, so it is never held twice while it grows.
TEST(HttpClientDefaults, DefaultCapStopsAFloodUnder100MB) {
  Backend backend = StartBackend({"flood", Mode::kFlood, Cert::kTrusted, StatusCode::kUnavailable, ""}, false);
  connectors::http::ClientOptions o;
  o.base_url = backend.server->url();
  o.allow_plain_http = true;
  o.log = [](LogLevel, const std::string&) {};
  Result<std::unique_ptr<connectors::http::Client>> client = connectors::http::Client::Create(o);
  ASSERT_TRUE(client.ok());
  gpufed::ManualClock clock;
  CallContext ctx = Context(&clock);
  ctx.timeout = Duration::FromSeconds(10);  // a loaded machine floods 64 MiB more slowly
  Status s;
  Measured m = Measure([&] { s = (*client)->Do({.path = "/openapi/v3"}, ctx).status(); });
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("larger than " + std::to_string(connectors::http::kDefaultMaxReplyBytes) + " bytes"),
            std::string::npos)
      << s.ToString();
  if (kRssBoundsApply) {  // a 64 MiB cap: see kRssBoundsApply
    EXPECT_LT(m.peak_rss_growth, kMaxRssGrowthBytes);
  }
  EXPECT_EQ((*client)->refusals().over_cap, 1);
}

}  // namespace
}  // namespace gpufed::hostile

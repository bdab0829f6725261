#include "connectors/http/token_bucket.h"

#include <gtest/gtest.h>

#include "connectors/http/http_client.h"

namespace gpufed::connectors::http {
namespace {

Duration S(int64_t s) { return Duration::FromSeconds(s); }

TEST(RetryAfter, ParsesDeltaSeconds) { EXPECT_EQ(ParseRetryAfter("7", ""), S(7)); }

TEST(RetryAfter, ParsesHttpDateRelativeToServerDate) {
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", "Wed, 21 Oct 2015 07:28:00 GMT"), S(30));
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", "Wed, 21 Oct 2015 07:28:00 GMT"), S(0));
}

TEST(RetryAfter, RejectsGarbage) {
  EXPECT_EQ(ParseRetryAfter("soon", "Wed, 21 Oct 2015 07:28:00 GMT"), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", ""), std::nullopt);
  EXPECT_EQ(ParseRetryAfter("-5", ""), std::nullopt);
}

TEST(PercentEncode, KeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(PercentEncode("gpufed.io/workload-uid in (a,b)"), "gpufed.io%2Fworkload-uid%20in%20%28a%2Cb%29");
  EXPECT_EQ(PercentEncode("status.phase!=Failed"), "status.phase%21%3DFailed");
}

TEST(HttpClient, RefusesPlainHttp) {
  Result<std::unique_ptr<Client>> c = Client::Create({.base_url = "http://127.0.0.1:1"});
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClient, RefusesCertificateWithoutKey) {
  ClientOptions o;
  o.base_url = "https://127.0.0.1:1";
  o.client_cert.pem = "x";
  EXPECT_EQ(Client::Create(o).status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpClient, ReportsUnreadableCaFileAsPrecondition) {
  ClientOptions o;
  o.base_url = "https://127.0.0.1:1";
  o.ca.file = "/nonexistent/ca.crt";
  EXPECT_EQ(Client::Create(o).status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed::connectors::http

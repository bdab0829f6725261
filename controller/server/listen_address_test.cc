#include "controller/server/listen_address.h"

#include <gtest/gtest.h>

namespace gpufed::server {
namespace {

TEST(ListenAddress, ParsesHostsAndPortsBothFlagsTake) {
  Result<ListenAddress> v4 = ParseListenAddress("--listen", "127.0.0.1:8080");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  Result<ListenAddress> v6 = ParseListenAddress("--listen", "[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(ParseListenAddress("--listen", "localhost:9")->host, "127.0.0.1");
}

TEST(ListenAddress, RefusesWhatIsNotAddrPortNamingTheFlag) {
  for (const char* bad : {"8080", ":8080", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
                          "127.0.0.1:99999999999999999999"}) {
    Result<ListenAddress> a = ParseListenAddress("--metrics-listen", bad);
    ASSERT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find("--metrics-listen"), std::string::npos) << a.status().message();
  }
}

TEST(ListenAddress, LoopbackAndPrivateRanges) {
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackAddress("127.8.9.10"));
  EXPECT_TRUE(IsLoopbackAddress("::1"));
  for (const char* not_loopback : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.org", "localhost", ""}) {
    EXPECT_FALSE(IsLoopbackAddress(not_loopback)) << not_loopback;  // names: parse localhost first
  }
  for (const char* inside : {"127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.9", "fd00::1"}) {
    EXPECT_TRUE(IsLoopbackOrPrivateAddress(inside)) << inside;
  }
  for (const char* outside : {"0.0.0.0", "172.32.0.1", "8.8.8.8", "::", "2001:db8::1", "example.org"}) {
    EXPECT_FALSE(IsLoopbackOrPrivateAddress(outside)) << outside;
  }
}

TEST(ListenAddress, PlainHttpOffLoopbackNeedsAllowPlaintext) {
  const ListenAddress any{"0.0.0.0", 8080}, local{"127.0.0.1", 8080};
  Status refused = CheckPlaintextListener("--listen", any, /*tls=*/false, /*allow_plaintext=*/false);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("--allow-plaintext"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("--listen: 0.0.0.0"), std::string::npos) << refused.message();
  EXPECT_TRUE(CheckPlaintextListener("--listen", any, true, false).ok());
  EXPECT_TRUE(CheckPlaintextListener("--listen", any, false, true).ok());
  EXPECT_TRUE(CheckPlaintextListener("--listen", local, false, false).ok());
}

}  // namespace
}  // namespace gpufed::server

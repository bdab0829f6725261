// The advertised API URL a standby copies into its redirects' Location: a scheme, a host
// and a port, nothing a client could be sent elsewhere by.
#include <gtest/gtest.h>

#include "controller/ha/replicas.h"

namespace gpufed::ha {
namespace {

TEST(AdvertisedUrl, SchemeHostAndPortAreAccepted) {
  for (const char* url :
       {"https://gpufed-a.example.org:8443", "http://127.0.0.1:8080", "https://[::1]:8443/", "https://gpufed-b"}) {
    EXPECT_TRUE(CheckAdvertisedUrl(url).ok()) << url;
  }
}

TEST(AdvertisedUrl, AnythingBeyondTheAuthorityIsRefused) {
  for (const char* url : {"gpufed-a:8443", "ftp://a", "https://", "https://a/path", "https://a?x=1", "https://u@a",
                          "https://a#f", "https://a b", "https://a\r\nLocation: https://evil", "javascript:alert(1)"}) {
    EXPECT_EQ(CheckAdvertisedUrl(url).code(), StatusCode::kInvalidArgument) << url;
  }
}

}  // namespace
}  // namespace gpufed::ha

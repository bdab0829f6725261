#include "controller/common/base64.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpufed {
namespace {

TEST(Base64, RoundTripsBothAlphabets) {
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("\xfb\xff", Base64Alphabet::kUrl), "-_8");
  const std::vector<std::string> samples = {"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\0\xff\x10", 3)};
  for (const std::string& s : samples) {
    EXPECT_EQ(*Base64Decode(Base64Encode(s)), s);
    EXPECT_EQ(*Base64Decode(Base64Encode(s, Base64Alphabet::kUrl)), s);
  }
}

TEST(Base64, RejectsMalformedText) {
  EXPECT_FALSE(Base64Decode("Zm9v!").ok());
  EXPECT_FALSE(Base64Decode("Zg==Zg").ok());
  EXPECT_FALSE(Base64Decode("Z").ok());
  EXPECT_EQ(*Base64Decode("Zm9v\nYg=="), "foob");
}

}  // namespace
}  // namespace gpufed

#include "controller/common/quantity.h"

#include <gtest/gtest.h>

namespace gpufed {
namespace {

int64_t Milli(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status().ToString();
  return q.ok() ? q->milli() : -1;
}

TEST(Quantity, ParsesKubernetesNotation) {
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("80Gi"), int64_t{80} * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("4G"), int64_t{4000000000} * 1000);
  EXPECT_EQ(Milli("1Ki"), 1024000);
  EXPECT_EQ(Milli("1e3"), 1000000);
  EXPECT_EQ(Milli("0.5Gi"), int64_t{512} * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("+3"), 3000);
  EXPECT_EQ(Milli("-1"), -1000);
}

TEST(Quantity, RejectsMalformedText) {
  for (std::string_view bad : {"", "Gi", "80GB", "1.2.3", "abc", "1e", "1e400", "99999999999999999999Ei", "0.0001",
                               "80 Gi", "--1"}) {
    EXPECT_FALSE(Quantity::Parse(bad).ok()) << "accepted: " << bad;
  }
}

TEST(Quantity, RejectsValuesBeyondRange) {
  EXPECT_FALSE(Quantity::Parse("16Ei").ok());
  EXPECT_EQ(Quantity::Parse("9000Pi").status().code(), StatusCode::kInvalidArgument);
}

TEST(Quantity, PrintsCanonicalText) {
  EXPECT_EQ(Quantity::Parse("80Gi")->ToString(), "80Gi");
  EXPECT_EQ(Quantity::Parse("500m")->ToString(), "500m");
  EXPECT_EQ(Quantity::Parse("32")->ToString(), "32");
  EXPECT_EQ(Quantity::Parse("1536Mi")->ToString(), "1536Mi");
}

TEST(Quantity, RoundsUnitsUp) {
  EXPECT_EQ(Quantity::Parse("500m")->units_ceil(), 1);
  EXPECT_EQ(Quantity::Parse("2")->units_ceil(), 2);
}

}  // namespace
}  // namespace gpufed

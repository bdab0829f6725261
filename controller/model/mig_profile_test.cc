#include "controller/model/mig_profile.h"

#include <gtest/gtest.h>

namespace gpufed::model {
namespace {

TEST(MigProfile, ParsesProfileNames) {
  ASSERT_TRUE(ParseMigProfile("1g.5gb"));
  EXPECT_EQ(ParseMigProfile("1g.5gb")->compute_slices, 1);
  EXPECT_EQ(ParseMigProfile("1g.5gb")->memory_gb, 5);
  EXPECT_EQ(ParseMigProfile("7g.80gb")->compute_slices, 7);
  EXPECT_EQ(ParseMigProfile("7g.80gb")->memory_gb, 80);
  EXPECT_EQ(ParseMigProfile("3g.040gb")->memory_gb, 40);
  for (const char* bad : {"", "0g.5gb", "8g.5gb", "1g.gb", "1g5gb", "1g.5g", "1g.5GB", "g.5gb", "1g.-5gb",
                          "1g.5 gb", "12g.5gb", "1g.1234567gb", "1g.5gbx", "x1g.5gb", "1g.10gb+me", "ag.5gb", "1g.0gb", "2g.000gb"}) {
    EXPECT_FALSE(ParseMigProfile(bad)) << bad;
  }
}

TEST(MigProfile, ComputeSlicesCountAttributedProfilesAsTheirBase) {
  EXPECT_EQ(MigComputeSlices("3g.40gb"), 3);
  EXPECT_EQ(MigComputeSlices("1g.10gb+me"), 1);
  EXPECT_EQ(MigComputeSlices("ag.5gb"), 0);  // once parsed with stoi, which threw
  EXPECT_EQ(MigComputeSlices("gpu"), 0);
  EXPECT_EQ(MigComputeSlices("+me"), 0);
}

TEST(MigProfile, MilliGpuIsTheComputeShare) {
  EXPECT_EQ(MigMilliGpu("7g.80gb"), 1000);
  EXPECT_EQ(MigMilliGpu("3g.40gb"), 428);
  EXPECT_EQ(MigMilliGpu("1g.10gb"), 142);
  EXPECT_EQ(MigMilliGpu("not-a-profile"), 1000);
}

// Every string of up to four characters over the alphabet the grammar uses, around a
// valid core: the parser accepts exactly the grammar's strings.
TEST(MigProfile, AcceptsExactlyTheGrammar) {
  const std::string alphabet = "0179g.b+x";
  auto grammar = [](const std::string& s) {
    if (s.size() < 6 || s[0] < '1' || s[0] > '7' || s.compare(1, 2, "g.") != 0) return false;
    if (s.compare(s.size() - 2, 2, "gb") != 0 || s.size() - 5 > 6) return false;
    bool nonzero = false;
    for (size_t i = 3; i < s.size() - 2; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      nonzero |= s[i] != '0';
    }
    return nonzero;
  };
  for (const std::string& core : {std::string("1g."), std::string("7g.1"), std::string("")}) {
    std::string s;
    for (int n = 0; n < 9 * 9 * 9 * 9; ++n) {
      s = core;
      for (int k = n, i = 0; i < 4; ++i, k /= 9) s += alphabet[k % 9];
      EXPECT_EQ(ParseMigProfile(s).has_value(), grammar(s)) << s;
    }
  }
}

}  // namespace
}  // namespace gpufed::model

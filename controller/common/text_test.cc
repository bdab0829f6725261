#include "controller/common/text.h"

#include <gtest/gtest.h>

#include "controller/common/sha256.h"

namespace gpufed {
namespace {

TEST(Text, SuggestsTheClosestName) {
  std::vector<std::string_view> fields = {"gpuMemory", "gpuModels", "gpus", "cpu", "memory"};
  EXPECT_EQ(ClosestMatch("gpuMemroy", fields), "gpuMemory");
  EXPECT_EQ(ClosestMatch("gpumodels", fields), "gpuModels");
  EXPECT_EQ(ClosestMatch("zzzzzz", fields), "");
}

TEST(Text, BoundsEditDistance) {
  EXPECT_EQ(EditDistance("kitten", "sitting", 5), 3u);
  EXPECT_EQ(EditDistance("a", "abcdefgh", 2), 3u);
}

TEST(Text, QuotesCsvFieldsOnlyWhenNeeded) {
  EXPECT_EQ(CsvField("team-nlp"), "team-nlp");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
}

TEST(Sha256, MatchesKnownVector) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
}  // namespace gpufed

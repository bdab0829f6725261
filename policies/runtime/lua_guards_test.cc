#include "policies/runtime/lua_guards.h"

#include <gtest/gtest.h>

#include "policies/runtime/text_util.h"

namespace gpufed::policy::internal {
namespace {

TEST(PatternStepBound, PlainSearchIsLinearInBoth) {
  EXPECT_EQ(PatternStepBound("abcdef", "cd", true, false), 7 * 3);
  EXPECT_EQ(PatternStepBound("abcdef", ".-", true, true), 7 * 3);
}

TEST(PatternStepBound, AnchorsLimitStartPositions) {
  // "^a" has one item and can only start once.
  EXPECT_EQ(PatternStepBound("aaaa", "^a", true, false), 1 * 1 * (1 + 1));
  // In gmatch '^' is a literal, so every position is a start.
  EXPECT_EQ(PatternStepBound("aaaa", "^a", false, false), 5 * 1 * (2 + 1));
}

TEST(PatternStepBound, QuantifiersMultiplyByTheirLongestRun) {
  // %d+ over "ab123cd45": longest digit run 3 -> factor 4; scan up to 3.
  EXPECT_EQ(PatternStepBound("ab123cd45", "^%d+", true, false), 1 * 4 * (1 + 1 + 3));
  EXPECT_EQ(PatternStepBound("xx", "^[a-z]*[^x]?", true, false), 1 * 3 * 2 * (2 + 1 + 2));
}

TEST(PatternStepBound, CatastrophicPatternsAreHuge) {
  const std::string subject(30, 'a');
  EXPECT_GT(PatternStepBound(subject, ".-.-.-.-.-.-.-.-b", true, false), 1e12);
  EXPECT_LT(PatternStepBound("name=value", "^(%w+)=(%w+)$", true, false), 1e3);
}

TEST(PatternStepBound, MalformedPatternsDoNotCrash) {
  for (const char* p : {"[", "[^", "%", "(", "%b", "%f", "[%", "[]", "[^]"}) {
    EXPECT_GE(PatternStepBound("abc", p, true, false), 0) << p;
  }
}

TEST(SanitizeText, KeepsShortValidText) {
  EXPECT_EQ(SanitizeText("héllo", 256), "héllo");
  EXPECT_EQ(SanitizeText(std::string(256, 'x'), 256), std::string(256, 'x'));
}

TEST(SanitizeText, ReplacesInvalidSequences) {
  EXPECT_EQ(SanitizeText("a\xff" "b", 256), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(SanitizeText("\xC0\xAF", 256), "\xEF\xBF\xBD\xEF\xBF\xBD");      // overlong '/'
  EXPECT_EQ(SanitizeText("\xED\xA0\x80", 256), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeText("\xE2\x82", 256), "\xEF\xBF\xBD\xEF\xBF\xBD");      // truncated
}

TEST(SanitizeText, TruncatesWithEllipsisAtABoundary) {
  EXPECT_EQ(SanitizeText(std::string(300, 'x'), 10), std::string(7, 'x') + "…");
  EXPECT_EQ(SanitizeText("ééééé", 8), "éé…");
}

}  // namespace
}  // namespace gpufed::policy::internal

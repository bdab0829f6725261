#include "controller/common/utf8.h"

#include <gtest/gtest.h>

namespace gpufed {
namespace {

TEST(Utf8, AcceptsAsciiAndEveryValidLength) {
  EXPECT_FALSE(FirstInvalidUtf8(""));
  EXPECT_FALSE(FirstInvalidUtf8("plain"));
  EXPECT_FALSE(FirstInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80"));  // 2, 3 and 4 bytes
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x9A\x80", 0), 4u);
}

TEST(Utf8, NamesTheOffsetOfTheFirstInvalidSequence) {
  EXPECT_EQ(FirstInvalidUtf8("tr\xFF" "e"), 2u);               // not a lead byte
  EXPECT_EQ(FirstInvalidUtf8("ab\x80"), 2u);                   // stray continuation byte
  EXPECT_EQ(FirstInvalidUtf8("x\xC3"), 1u);                    // truncated at the end
  EXPECT_EQ(FirstInvalidUtf8("\xC0\xAF"), 0u);                 // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("ok\xED\xA0\x80"), 2u);           // UTF-16 surrogate
  EXPECT_EQ(FirstInvalidUtf8("\xF4\x90\x80\x80"), 0u);         // past U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("\xE2\x82" "A"), 0u);             // continuation missing
}

}  // namespace

// Reasons and peers' text are kept as valid UTF-8, cut on a character boundary.
TEST(Utf8, BoundedUtf8RepairsAndCutsOnACharacterBoundary) {
  EXPECT_EQ(BoundedUtf8("plain"), "plain");
  EXPECT_EQ(BoundedUtf8("a\xFF" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(BoundedUtf8("tab\tend", 100, Controls::kToSpaces), "tab end");
  EXPECT_EQ(BoundedUtf8("tab\tend"), "tab\tend");
  // "é" is two bytes: a cut that would split it steps back before it.
  const std::string cut = BoundedUtf8("aaaa\xC3\xA9" "bbbbbbbb", 8);
  EXPECT_LE(cut.size(), 8u);
  EXPECT_FALSE(FirstInvalidUtf8(cut).has_value());
  EXPECT_EQ(cut, "aaaa\xE2\x80\xA6");
  for (size_t max = 0; max < 20; ++max) {
    const std::string out = BoundedUtf8("\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC\xFF", max);
    EXPECT_LE(out.size(), max);
    EXPECT_FALSE(FirstInvalidUtf8(out).has_value()) << max;
  }
}

}  // namespace gpufed

#include "connectors/http/peer_text.h"

#include <gtest/gtest.h>

#include "controller/common/utf8.h"

namespace gpufed::connectors::http {
namespace {

TEST(PeerText, KeepsShortValidTextAsIs) { EXPECT_EQ(PeerText("jobs \"x\" already exists", 200), "jobs \"x\" already exists"); }

TEST(PeerText, CutsOnACharacterBoundaryAndMarksTheCut) {
  // 199 ASCII bytes then "é" (2 bytes): a byte cut at 200 would split it.
  std::string text(199, 'a');
  text += "\xC3\xA9 and more";
  std::string kept = PeerText(text, 200);
  EXPECT_LE(kept.size(), 200u);
  EXPECT_FALSE(FirstInvalidUtf8(kept).has_value());
  EXPECT_EQ(kept.substr(kept.size() - 3), "\xE2\x80\xA6");
}

TEST(PeerText, CutNeverSplitsAFourByteCharacter) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "\xF0\x9F\x98\x80";  // U+1F600, 4 bytes each
  for (size_t max = 3; max < 40; ++max) {
    std::string kept = PeerText(text, max);
    EXPECT_LE(kept.size(), max);
    EXPECT_FALSE(FirstInvalidUtf8(kept).has_value()) << max;
  }
}

TEST(PeerText, ReplacesInvalidBytesAndControlCharacters) {
  std::string kept = PeerText(std::string("bad \xFF\xC3 end\r\nforged line\x1b[31m"), 200);
  EXPECT_FALSE(FirstInvalidUtf8(kept).has_value());
  EXPECT_EQ(kept.find('\n'), std::string::npos);
  EXPECT_EQ(kept.find('\x1b'), std::string::npos);
  EXPECT_NE(kept.find("\xEF\xBF\xBD"), std::string::npos);
}

TEST(PeerText, ReadsOnlyThePrefixOfAHugeText) {
  std::string huge(size_t{64} << 20, 'x');
  EXPECT_LE(PeerText(huge, 120).size(), 120u);
}

}  // namespace
}  // namespace gpufed::connectors::http

#include "controller/config/yaml_hints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufed::config {
namespace {

using ::testing::HasSubstr;

TEST(YamlHints, NamesATabInTheIndentation) {
  const char* text = "spec:\n  weight: 1\n\tquota: {}\n";
  auto hint = ExplainSyntaxError(text, 3, "illegal map value");
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 3);
  EXPECT_EQ(hint->column, 1);
  EXPECT_THAT(hint->text, HasSubstr("indented with a tab"));
}

TEST(YamlHints, NamesALineIndentedUnlikeItsSiblings) {
  const char* text = "metadata:\n  name: x\n   labels: {}\nspec: {}\n";
  auto hint = ExplainSyntaxError(text, 3, "illegal map value");
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 3);
  EXPECT_EQ(hint->column, 4);
  EXPECT_EQ(hint->text, "line 3 is indented 3 spaces, more than line 2 (2), which opens no block: indent it like its "
                        "siblings");
}

TEST(YamlHints, NamesADedentThatMatchesNoLevel) {
  const char* text = "spec:\n  nodePools:\n    - name: a\n      count: 1\n     cpu: 8\n";
  auto hint = ExplainSyntaxError(text, 5, "end of map not found");
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 5);
  EXPECT_THAT(hint->text, HasSubstr("matches no enclosing level (0, 2, 4, 6)"));
}

TEST(YamlHints, NamesTheBracketThatIsNeverClosed) {
  const char* text = "spec:\n  weight: [1, 2\n  other: 3\n";
  auto hint = ExplainSyntaxError(text, 4, "end of sequence flow not found");
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 2);
  EXPECT_EQ(hint->column, 11);
  EXPECT_EQ(hint->text, "the '[' opened at line 2 is never closed");
}

TEST(YamlHints, FlowCollectionsOverSeveralLinesAreNotMisindented) {
  const char* text = "rules:\n  - require: {a: 1,\n        b: 2}\n    when: [x\n";
  auto hint = ExplainSyntaxError(text, 5, "end of sequence flow not found");
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 4);  // the '[' of `when`, not the continued mapping
}

TEST(YamlHints, NamesLinesOfTheFileNotOfTheDocument) {
  auto hint = ExplainSyntaxError("---\nspec:\n  weight: [1, 2\n", 4, "end of sequence flow not found", 10);
  ASSERT_TRUE(hint);
  EXPECT_EQ(hint->line, 13);
  EXPECT_EQ(hint->text, "the '[' opened at line 13 is never closed");
}

TEST(YamlHints, SplitsDocumentsKeepingLineNumbers) {
  std::vector<DocumentText> docs = SplitDocuments("# head\n---\na: 1\n---\nb: [\n...\n--- # c\nc: 3\n");
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0].first_line, 0);
  EXPECT_EQ(docs[0].text, "# head\n---\na: 1\n");
  EXPECT_EQ(docs[1].first_line, 3);
  EXPECT_EQ(docs[2].first_line, 6);
  EXPECT_EQ(docs[2].text, "--- # c\nc: 3\n");
}

}  // namespace
}  // namespace gpufed::config

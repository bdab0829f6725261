#include "controller/config/yaml_hints.h"

#include "controller/common/yaml_tree.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpufed::config {
namespace {

// The hint for `text` where the parser refuses it (its line and reason, as the loader
// passes them), as "line:column: text".
std::string Hint(const char* text, int first_line = 0) {
  const YamlStream stream = YamlStream::Parse(text, {});
  if (!stream.problem() || stream.problem()->kind != YamlProblem::Kind::kSyntax) return "parsed";
  std::optional<SyntaxHint> hint =
      ExplainSyntaxError(text, stream.problem()->line, stream.problem()->message, first_line);
  return hint ? std::to_string(hint->line) + ":" + std::to_string(hint->column) + ": " + hint->text : "none";
}

TEST(YamlHints, NamesATabInTheIndentation) {
  EXPECT_EQ(Hint("spec:\n  weight: 1\n\tquota: {}\n"),
            "3:1: line 3 is indented with a tab; YAML indents with spaces only");
}

TEST(YamlHints, NamesALineIndentedUnlikeItsSiblings) {
  EXPECT_EQ(Hint("metadata:\n  name: x\n   labels: {}\nspec: {}\n"),
            "3:4: line 3 is indented 3 spaces, more than line 2 (2), which opens no block: indent it like its "
            "siblings");
}

TEST(YamlHints, NamesADedentThatMatchesNoLevel) {
  EXPECT_EQ(Hint("spec:\n  nodePools:\n    - name: a\n      count: 1\n     cpu: 8\n"),
            "5:6: line 5 is indented 5 spaces, which matches no enclosing level (0, 2, 4, 6)");
}

TEST(YamlHints, NamesAKeyWithoutItsColonOnItsOwnLine) {
  // The parser stops on the line after the key; the hint names the key's line.
  EXPECT_EQ(Hint("kind: Tenant\nspec\n  weight: 1\n"), "2:1: line 2 has no ':' after its key: write 'spec:'");
  EXPECT_EQ(Hint("spec:\n  tenant team-a\n  type: training\n"),
            "2:3: line 2 has no ':' after its key: write 'tenant: team-a'");
  EXPECT_EQ(Hint("items:\n  - name\n    count: 1\n"), "2:5: line 2 has no ':' after its key: write 'name:'");
  // A line that has its colon is not blamed; a quoted or flow value is not a key.
  EXPECT_EQ(Hint("spec:\n  a: \"x y\"\n   b: 1\n"),
            "3:4: line 3 is indented 3 spaces, more than line 2 (2), which opens no block: indent it like its "
            "siblings");
  EXPECT_EQ(Hint("spec:\n  \"a b\"\n  c: 1\n"), "none");
}

TEST(YamlHints, NamesTheBracketThatIsNeverClosed) {
  EXPECT_EQ(Hint("spec:\n  weight: [1, 2\n  other: 3\n"), "2:11: the '[' opened at line 2 is never closed");
}

TEST(YamlHints, FlowCollectionsOverSeveralLinesAreNotMisindented) {
  // The '[' of `when`, not the mapping continued on line 3.
  EXPECT_EQ(Hint("rules:\n  - require: {a: 1,\n        b: 2}\n    when: [x\n"),
            "4:11: the '[' opened at line 4 is never closed");
}

TEST(YamlHints, NamesLinesOfTheFileNotOfTheDocument) {
  EXPECT_EQ(Hint("---\nspec:\n  weight: [1, 2\n", 10), "13:11: the '[' opened at line 13 is never closed");
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

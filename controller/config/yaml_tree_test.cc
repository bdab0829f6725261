#include "controller/config/yaml_tree.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace gpufed::config {
namespace {

// The same node as yaml-cpp's builder makes of the same text: kind, text, tag, position
// and children, recursively (to a depth, since an alias of an enclosing collection is a
// cycle in both).
void ExpectSameNode(const YamlNode& ours, const YAML::Node& theirs, const std::string& text, int depth = 0) {
  if (depth > 20) return;
  ASSERT_EQ(ours.IsNull(), theirs.IsNull()) << text;
  ASSERT_EQ(ours.IsScalar(), theirs.IsScalar()) << text;
  ASSERT_EQ(ours.IsSequence(), theirs.IsSequence()) << text;
  ASSERT_EQ(ours.IsMap(), theirs.IsMap()) << text;
  ASSERT_EQ(ours.Tag(), theirs.Tag()) << text;
  ASSERT_EQ(ours.Mark().pos, theirs.Mark().pos) << text;
  ASSERT_EQ(ours.Mark().line, theirs.Mark().line) << text;
  ASSERT_EQ(ours.Mark().column, theirs.Mark().column) << text;
  if (ours.IsScalar()) {
    ASSERT_EQ(ours.Scalar(), theirs.Scalar()) << text;
  }
  ASSERT_EQ(ours.size(), theirs.size()) << text;
  if (ours.IsSequence()) {
    for (size_t i = 0; i < ours.size(); ++i) ExpectSameNode(*ours.elements()[i], theirs[i], text, depth + 1);
  }
  if (ours.IsMap()) {
    size_t i = 0;
    for (auto it = theirs.begin(); it != theirs.end(); ++it, ++i) {
      ExpectSameNode(*ours.entries()[i].key, it->first, text, depth + 1);
      ExpectSameNode(*ours.entries()[i].value, it->second, text, depth + 1);
    }
  }
}

enum class Outcome { kBuilt, kRefusedByBoth, kNoProgress };

// Parses `text` both ways. Texts on which yaml-cpp 0.7's LoadAll never returns (the
// parse reports no progress) are not given to it.
Outcome ExpectLikeLoadAll(const std::string& text) {
  const YamlStream ours = YamlStream::Parse(text, {});
  if (ours.problem() && ours.problem()->kind == YamlProblem::Kind::kStream) return Outcome::kNoProgress;
  std::vector<YAML::Node> theirs;
  bool threw = false;
  try {
    theirs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    threw = true;
    EXPECT_TRUE(ours.problem().has_value()) << "yaml-cpp refused '" << text << "': " << e.msg;
    if (!ours.problem()) return Outcome::kRefusedByBoth;
    EXPECT_EQ(ours.problem()->message, e.msg) << text;
    EXPECT_EQ(ours.problem()->line, e.mark.line + 1) << text;
    EXPECT_EQ(ours.problem()->column, e.mark.column + 1) << text;
  }
  if (threw) return Outcome::kRefusedByBoth;
  EXPECT_FALSE(ours.problem().has_value()) << "'" << text << "': " << ours.problem()->message;
  EXPECT_EQ(ours.documents().size(), theirs.size()) << text;
  for (size_t i = 0; i < theirs.size() && i < ours.documents().size(); ++i) {
    ExpectSameNode(*ours.documents()[i], theirs[i], text);
  }
  return Outcome::kBuilt;
}

TEST(YamlTree, BuildsWhatYamlCppBuildsOnWrittenDocuments) {
  const char* const workload =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n  tenant: t\n"
      "  resources: {gpus: 1, cpu: 500m}\n  run: {command: [\"true\"]}\n";
  for (const char* text : {
           "",
           workload,
           "a: 1\nb: [x, 'y', \"z\"]\nc: {d: ~, e: null, f: }\n",
           "- a\n- - b\n  - c\n-\n- {x: 1}\n",
           "base: &b {gpus: 1}\nuse: *b\nlist: &l [1, 2]\nagain: *l\n",
           "self: &s [*s]\n",
           "dup: 1\ndup: 2\n",
           "? [complex, key]\n: value\n? plain\n",
           "tagged: !custom value\nstr: !!str 8\nint: !!int '9'\nempty: !!null\n",
           "text: |\n  line one\n  line two\nfolded: >\n  a\n  b\n",
           "a: 1\n---\nb: 2\n...\n---\n",
           "--- scalar\n--- [1]\n--- {a: b}\n",
           "%YAML 1.2\n---\na: 1\n",
           "a: [1, 2\n",
           "a: b: c\n",
           "*unknown\n",
           "a: &x 1\n---\nb: *x\n",
       }) {
    ExpectLikeLoadAll(text);
  }
}

// Random texts from YAML's structural characters and a few words: the builder agrees
// with yaml-cpp's on every text yaml-cpp finishes, refusals included.
TEST(YamlTree, BuildsWhatYamlCppBuildsOnRandomTexts) {
  const std::vector<std::string> pieces = {"a",     "b",  "1", ":",     ": ",  " ",     "  ", "\n",  "- ",
                                           "[",     "]",  "{", "}",     "? ",  "&x ",   "*x", "!t ", "'q'",
                                           "\"d\"", "#c", "~", "---\n", "|\n", "...\n", ", "};
  std::mt19937 random(38);
  std::uniform_int_distribution<size_t> length(1, 14), pick(0, pieces.size() - 1);
  std::map<Outcome, int> outcomes;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (size_t n = length(random); n > 0; --n) text += pieces[pick(random)];
    ++outcomes[ExpectLikeLoadAll(text)];
    if (HasFailure()) return;
  }
  // The texts exercise both sides: documents built, refusals, and the stray ','.
  EXPECT_GT(outcomes[Outcome::kBuilt], 2000);
  EXPECT_GT(outcomes[Outcome::kRefusedByBoth], 2000);
  EXPECT_GT(outcomes[Outcome::kNoProgress], 100);
  std::printf("built %d, refused by both %d, no progress %d\n", outcomes[Outcome::kBuilt],
              outcomes[Outcome::kRefusedByBoth], outcomes[Outcome::kNoProgress]);
}

TEST(YamlTree, AStrayCommaIsAProblemNotAnEndlessStream) {
  for (const char* text : {",", "a: 1\n---\n,", "[a], b"}) {
    const YamlStream stream = YamlStream::Parse(text, {});
    ASSERT_TRUE(stream.problem().has_value()) << text;
    EXPECT_EQ(stream.problem()->kind, YamlProblem::Kind::kStream);
    EXPECT_NE(stream.problem()->message.find("unexpected ','"), std::string::npos) << stream.problem()->message;
    EXPECT_TRUE(stream.documents().empty());
  }
}

TEST(YamlTree, BoundsDocumentsAndNodesAsTheyArrive) {
  const YamlStream three = YamlStream::Parse("a\n---\nb\n---\nc\n", {.max_documents = 2});
  ASSERT_TRUE(three.problem().has_value());
  EXPECT_EQ(three.problem()->message, "too many YAML documents in one file (more than 2)");
  EXPECT_EQ(three.problem()->line, 4);  // the third document's '---'
  EXPECT_EQ(YamlStream::Parse("a\n---\nb\n", {.max_documents = 2}).documents().size(), 2u);

  // The map, its key, the list and its first element; the fifth node (the 2) is refused.
  const YamlStream big = YamlStream::Parse("k: [1, 2, 3]\n", {.max_nodes_per_document = 4});
  ASSERT_TRUE(big.problem().has_value());
  EXPECT_EQ(big.problem()->message, "document has more than 4 nodes; refusing it");
  EXPECT_EQ(big.problem()->column, 8);  // at "2"
  EXPECT_FALSE(YamlStream::Parse("k: [1, 2, 3]\n", {.max_nodes_per_document = 6}).problem().has_value());
  // The bound is per document.
  EXPECT_FALSE(YamlStream::Parse("[1, 2]\n---\n[3, 4]\n", {.max_nodes_per_document = 3}).problem().has_value());
}

TEST(YamlTree, DepthBeyondYamlCppsLimitIsItsOwnProblem) {
  const YamlStream deep = YamlStream::Parse(std::string(600, '[') + std::string(600, ']'), {});
  ASSERT_TRUE(deep.problem().has_value());
  EXPECT_EQ(deep.problem()->kind, YamlProblem::Kind::kTooDeep);
}

TEST(YamlTree, FindsTheFirstScalarKeyAndMovingKeepsTheNodes) {
  YamlStream stream = YamlStream::Parse("? [x]\n: 0\nk: 1\nk: 2\n8: eight\n", {});
  const YamlStream moved = std::move(stream);
  ASSERT_EQ(moved.documents().size(), 1u);
  const YamlNode& root = *moved.documents()[0];
  ASSERT_NE(root.Find("k"), nullptr);
  EXPECT_EQ(root.Find("k")->Scalar(), "1");
  EXPECT_EQ(root.Find("8")->Scalar(), "eight");
  EXPECT_EQ(root.Find("x"), nullptr);  // a list key is not the scalar "x"
  EXPECT_EQ(root.Find("missing"), nullptr);
}

}  // namespace
}  // namespace gpufed::config

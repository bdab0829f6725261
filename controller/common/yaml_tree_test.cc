#include "controller/common/yaml_tree.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

namespace gpufed {
namespace {

// yaml-cpp is the oracle: an independent parser of the same texts. Whether the trees
// agree: kind, text, tag, position and children, recursively (to a depth, since an alias
// of an enclosing collection is a cycle in both). An empty value's position differs:
// libyaml puts it where the value would start, yaml-cpp at the next token (often the
// next line), so a null's position is not compared. `why` says where they differ.
bool SameNode(const YamlNode& ours, const YAML::Node& theirs, std::string& why, int depth = 0) {
  if (depth > 20) return true;
  // A tagged empty node ("key: !t") is a scalar with that tag and no text, as YAML says;
  // yaml-cpp makes it a null in some places and such a scalar in others.
  if (ours.IsScalar() && ours.Scalar().empty() && ours.Tag() != "?" && ours.Tag() != "!" && theirs.IsNull()) {
    return true;
  }
  const auto differ = [&](const std::string& what) {
    why = what + " at line " + std::to_string(ours.Mark().line + 1);
    return false;
  };
  if (ours.IsNull() != theirs.IsNull() || ours.IsScalar() != theirs.IsScalar() ||
      ours.IsSequence() != theirs.IsSequence() || ours.IsMap() != theirs.IsMap()) {
    return differ("kind");
  }
  if (ours.Tag() != theirs.Tag()) return differ("tag " + ours.Tag() + " vs " + theirs.Tag());
  if (!ours.IsNull() && (ours.Mark().line != theirs.Mark().line || ours.Mark().column != theirs.Mark().column)) {
    return differ("position");
  }
  if (ours.IsScalar() && ours.Scalar() != theirs.Scalar())
    return differ("text '" + ours.Scalar() + "' vs '" + theirs.Scalar() + "'");
  if (ours.size() != theirs.size()) return differ("size");
  if (ours.IsSequence()) {
    for (size_t i = 0; i < ours.size(); ++i) {
      if (!SameNode(*ours.elements()[i], theirs[i], why, depth + 1)) return false;
    }
  }
  if (ours.IsMap()) {
    size_t i = 0;
    for (auto it = theirs.begin(); it != theirs.end(); ++it, ++i) {
      if (!SameNode(*ours.entries()[i].key, it->first, why, depth + 1) ||
          !SameNode(*ours.entries()[i].value, it->second, why, depth + 1)) {
        return false;
      }
    }
  }
  return true;
}

enum class Outcome { kBuilt, kBuiltDifferently, kRefusedByBoth, kRefusedByLibyamlOnly, kRefusedByYamlCppOnly };

// yaml-cpp 0.7's LoadAll never returns on some texts (a ',' outside any flow collection,
// jbeder/yaml-cpp#1040, and "? ? *x" before a list): its parser starts a new document at
// the same position forever. Its event parser shows that without building anything; such
// texts are not given to LoadAll.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    stuck = stuck || mark.pos == last_;
    last_ = mark.pos;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
  bool stuck = false;

 private:
  int last_ = -1;
};

bool HangsYamlCpp(const std::string& text) {
  std::istringstream in(text);
  DocumentStarts starts;
  try {
    YAML::Parser parser(in);
    while (!starts.stuck && parser.HandleNextDocument(starts)) {
    }
  } catch (const YAML::Exception&) {
    return false;  // a refusal ends yaml-cpp's parse: LoadAll refuses it too, and returns
  }
  return starts.stuck;
}

// Parses `text` both ways; compares the trees when both accept it.
Outcome Compare(const std::string& text, std::string* why = nullptr) {
  const YamlStream ours = YamlStream::Parse(text, {});
  if (ours.problem()) {
    EXPECT_TRUE(ours.documents().empty()) << text;
    EXPECT_GE(ours.problem()->line, 1) << text;
    EXPECT_GE(ours.problem()->column, 1) << text;
    EXPECT_FALSE(ours.problem()->message.empty()) << text;
  }
  std::vector<YAML::Node> theirs;
  try {
    theirs = YAML::LoadAll(text);
  } catch (const YAML::Exception&) {
    return ours.problem() ? Outcome::kRefusedByBoth : Outcome::kRefusedByYamlCppOnly;
  }
  if (ours.problem()) return Outcome::kRefusedByLibyamlOnly;
  if (ours.documents().size() != theirs.size()) {
    if (why != nullptr) *why = "documents";
    return Outcome::kBuiltDifferently;
  }
  std::string differs;
  for (size_t i = 0; i < theirs.size(); ++i) {
    if (!SameNode(*ours.documents()[i], theirs[i], differs)) {
      if (why != nullptr) *why = differs;
      return Outcome::kBuiltDifferently;
    }
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
           "names: [\"two words\", 'it''s']\nk: \"\\u00e9\"\n",
       }) {
    EXPECT_EQ(Compare(text), Outcome::kBuilt) << text;
  }
  for (const char* text : {"a: [1, 2\n", "a: b: c\n", "a:\n\t- b\n", "[a, b}\n"}) {
    EXPECT_EQ(Compare(text), Outcome::kRefusedByBoth) << text;
  }
}

// Random texts from YAML's structural characters and a few words: whenever both parsers
// build a text's documents, the trees agree node for node; every refusal of ours has a
// position and a reason. yaml-cpp 0.7 accepts many texts YAML does not (an unclosed
// "'q", a root block scalar at column 0): those are counted, not compared. Document
// markers start their lines here, since yaml-cpp takes a "---" inside a line for one.
TEST(YamlTree, BuildsWhatYamlCppBuildsOnRandomTexts) {
  const std::vector<std::string> pieces = {"a",     "b",  "1", ":",       ": ",  " ",       "  ", "\n",  "- ",
                                           "[",     "]",  "{", "}",       "? ",  "&x ",     "*x", "!t ", "'q'",
                                           "\"d\"", "#c", "~", "\n---\n", "|\n", "\n...\n", ", "};
  std::mt19937 random(38);
  std::uniform_int_distribution<size_t> length(1, 14), pick(0, pieces.size() - 1);
  std::map<Outcome, int> outcomes;
  int skipped = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    for (size_t n = length(random); n > 0; --n) text += pieces[pick(random)];
    if (HangsYamlCpp(text)) {
      ++skipped;
      const YamlStream ours = YamlStream::Parse(text, {});
      if (ours.problem()) {
        EXPECT_GE(ours.problem()->line, 1) << text;
      }
      continue;
    }
    std::string why;
    const Outcome outcome = Compare(text, &why);
    ++outcomes[outcome];
    // yaml-cpp 0.7 starts a new document at a tag or an anchor on a plain scalar's
    // continuation line ("a\n!t b"), where YAML continues the scalar: the document
    // counts then differ. Every other difference is a fault of ours.
    if (outcome == Outcome::kBuiltDifferently) {
      EXPECT_EQ(why, "documents") << text;
    }
    if (HasFailure()) return;
  }
  EXPECT_GT(outcomes[Outcome::kBuilt], 2000);
  EXPECT_GT(outcomes[Outcome::kRefusedByBoth], 2000);
  std::printf(
      "built %d, built differently %d, refused by both %d, by libyaml only %d, by yaml-cpp only %d, "
      "not given to yaml-cpp %d\n",
      outcomes[Outcome::kBuilt], outcomes[Outcome::kBuiltDifferently], outcomes[Outcome::kRefusedByBoth],
      outcomes[Outcome::kRefusedByLibyamlOnly], outcomes[Outcome::kRefusedByYamlCppOnly], skipped);
}

// `text` is refused as a syntax error whose message holds `reason`, with no documents.
void ExpectSyntaxError(const char* text, const char* reason) {
  const YamlStream stream = YamlStream::Parse(text, {});
  ASSERT_TRUE(stream.problem().has_value()) << text;
  EXPECT_EQ(stream.problem()->kind, YamlProblem::Kind::kSyntax) << text;
  EXPECT_NE(stream.problem()->message.find(reason), std::string::npos) << stream.problem()->message;
  EXPECT_TRUE(stream.documents().empty()) << text;
}

TEST(YamlTree, AStrayCommaIsASyntaxErrorThatSaysWhereCommasGo) {
  for (const char* text : {",", "a: 1\n---\n,", "[a], b"}) ExpectSyntaxError(text, "unexpected ','");
  // Inside a flow collection a misplaced ',' is libyaml's own error.
  const YamlStream flow = YamlStream::Parse("[a, , b]\n", {});
  ASSERT_TRUE(flow.problem().has_value());
  EXPECT_NE(flow.problem()->message.find("flow"), std::string::npos) << flow.problem()->message;
}

TEST(YamlTree, AnAliasToNoAnchorIsRefusedWhereItStands) {
  for (const char* text : {"*unknown\n", "a: &x 1\n---\nb: *x\n", "a: *x\nb: &x 1\n"}) {
    ExpectSyntaxError(text, "refers to no anchor");
  }
  const YamlStream later = YamlStream::Parse("a: &x 1\nb: *x\nc: &x 2\nd: *x\n", {});
  ASSERT_FALSE(later.problem().has_value());
  EXPECT_EQ(later.documents()[0]->Find("b")->Scalar(), "1");
  EXPECT_EQ(later.documents()[0]->Find("d")->Scalar(), "2");  // the latest anchor of the name
}

TEST(YamlTree, NullsTagsAndPositionsAreWhatReadersExpect) {
  const YamlStream stream = YamlStream::Parse("a:\nb: ~\nc: 'null'\nd: !!str null\ne: |\n  x\n\xc3\xa9: [1]\n", {});
  ASSERT_FALSE(stream.problem().has_value()) << stream.problem()->message;
  const YamlNode& root = *stream.documents()[0];
  EXPECT_TRUE(root.Find("a")->IsNull());
  EXPECT_EQ(root.Find("a")->Mark().line, 0);  // an empty value stands on its key's line
  EXPECT_TRUE(root.Find("b")->IsNull());
  EXPECT_EQ(root.Find("c")->Tag(), "!");
  EXPECT_EQ(root.Find("c")->Scalar(), "null");
  EXPECT_EQ(root.Find("d")->Tag(), "tag:yaml.org,2002:str");
  EXPECT_EQ(root.Find("e")->Tag(), "!");
  EXPECT_EQ(root.Find("e")->Scalar(), "x\n");
  const YamlNode* list = root.Find("\xc3\xa9");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->Mark().line, 6);
  EXPECT_EQ(list->Mark().column, 3);  // columns count characters: "é: " is three
}

TEST(YamlTree, TextThatIsNotUtf8IsRefusedAtItsLineAndColumn) {
  const YamlStream stream = YamlStream::Parse("a: 1\nb: x\xff\n", {});
  ASSERT_TRUE(stream.problem().has_value());
  EXPECT_EQ(stream.problem()->kind, YamlProblem::Kind::kSyntax);
  EXPECT_EQ(stream.problem()->line, 2);
  EXPECT_EQ(stream.problem()->column, 5);
  EXPECT_NE(stream.problem()->message.find("UTF-8"), std::string::npos) << stream.problem()->message;
  const YamlStream nul = YamlStream::Parse(std::string("a: 1\0\n", 6), {});
  ASSERT_TRUE(nul.problem().has_value());
  EXPECT_EQ(nul.problem()->column, 5);
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

TEST(YamlTree, NestingBeyondTheLimitIsItsOwnProblem) {
  const std::string at_limit = std::string(kMaxYamlDepth, '[') + std::string(kMaxYamlDepth, ']');
  EXPECT_FALSE(YamlStream::Parse(at_limit, {}).problem().has_value());
  for (const std::string& text :
       {"[" + at_limit + "]", std::string(100000, '[') + std::string(100000, ']'), std::string(100000, '[')}) {
    const YamlStream deep = YamlStream::Parse(text, {});
    ASSERT_TRUE(deep.problem().has_value());
    EXPECT_EQ(deep.problem()->kind, YamlProblem::Kind::kTooDeep);
    EXPECT_EQ(deep.problem()->column, static_cast<int>(kMaxYamlDepth) + 1);  // the first '[' too many
  }
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
}  // namespace gpufed

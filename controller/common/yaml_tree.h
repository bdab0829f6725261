#pragma once
// A YAML stream parsed once into the nodes the loader reads (YamlField), with the bounds
// that keep a hostile text from running away.
//
// libyaml's event parser (the C library PyYAML and Ruby's Psych build on) feeds a builder
// of our own. It replaced yaml-cpp 0.7's event parser, whose regex scanner took 35-45 us
// of a 270-byte API submission (libyaml: 7-8 us; bench/README.md, session 57) and which
// never returned from a stray ',' outside a flow collection (jbeder/yaml-cpp#1040).
// The builder counts each document's nodes as they arrive (scalars, nulls, aliases,
// lists and maps, as written), so a large body is refused before it is built, and the
// documents a text may hold, and it bounds nesting itself (libyaml has no limit of its
// own; its stacks are on the heap, so the bound is what keeps later walks of the tree
// shallow). Syntax errors end the parse with libyaml's reason and position.
//
// What the nodes hold, for the readers (yaml_field.h): an untagged plain scalar has the
// tag "?", an untagged quoted or block scalar "!", an explicit tag its resolved form
// ("!!str" is "tag:yaml.org,2002:str"); an untagged plain "", "~", "null", "Null" or
// "NULL" is a null node; duplicate keys are kept in document order; an alias is the
// anchored node itself, so an alias of an enclosing collection makes a cycle: readers
// bound their walks, as CheckShape does.
#include <cstddef>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpufed {

// A position in the parsed text, 0-based (line and column count characters); a node made
// without one (tests, Missing) has none, and its reader keeps its parent's position.
struct YamlMark {
  int line = -1;
  int column = -1;
  bool IsKnown() const { return line >= 0; }
};

class YamlNode {
 public:
  enum class Kind { kNull, kScalar, kSequence, kMap };
  struct Entry {
    const YamlNode* key;
    const YamlNode* value;
  };

  YamlNode() = default;
  YamlNode(Kind kind, YamlMark mark, std::string tag = "", std::string text = "")
      : kind_(kind), mark_(mark), tag_(std::move(tag)), text_(std::move(text)) {}
  // A plain scalar with no position (tests, and readers of text that is not a document).
  static YamlNode PlainScalar(std::string text) { return YamlNode(Kind::kScalar, YamlMark{}, "?", std::move(text)); }
  // The node a missing key reads as: null, no position (the reader keeps its parent's).
  static const YamlNode& Missing();

  Kind kind() const { return kind_; }
  bool IsNull() const { return kind_ == Kind::kNull; }
  bool IsScalar() const { return kind_ == Kind::kScalar; }
  bool IsSequence() const { return kind_ == Kind::kSequence; }
  bool IsMap() const { return kind_ == Kind::kMap; }
  // The scalar's text ("" for any other node) and tag ("?" plain, "!" quoted or block,
  // or the tag written, resolved; "" for nulls).
  const std::string& Scalar() const { return text_; }
  const std::string& Tag() const { return tag_; }
  const YamlMark& Mark() const { return mark_; }
  // Elements of a list, entries of a map (in document order, duplicates kept).
  std::span<const YamlNode* const> elements() const { return elements_; }
  std::span<const Entry> entries() const { return entries_; }
  size_t size() const { return IsMap() ? entries_.size() : elements_.size(); }
  // The value of the first entry whose key is the scalar `key`; nullptr when none.
  const YamlNode* Find(std::string_view key) const;

 private:
  friend class YamlTreeBuilder;
  Kind kind_ = Kind::kNull;
  YamlMark mark_;
  std::string tag_;
  std::string text_;
  std::vector<const YamlNode*> elements_;
  std::vector<Entry> entries_;
};

// Collections open at once (a list in a map in a list ...): deeper is a kTooDeep problem.
// The loader's own bound (LoadOptions::max_depth) is far lower; this one keeps any walk of
// a parsed tree shallow whoever parses.
inline constexpr size_t kMaxYamlDepth = 500;

struct YamlLimits {
  size_t max_documents = std::numeric_limits<size_t>::max();
  size_t max_nodes_per_document = std::numeric_limits<size_t>::max();
};

struct YamlProblem {
  enum class Kind {
    kStream,  // too many documents or nodes: `message` says which
    kTooDeep,  // nested deeper than kMaxYamlDepth collections
    kSyntax,  // libyaml's reason (with its context), without its position
  };
  Kind kind;
  int line;    // 1-based, within the parsed text
  int column;  // 1-based
  std::string message;
};

// A parsed text: its documents' roots in order (an empty document is a null node), or
// the first problem, in which case there are no documents. Owns its nodes; moving it
// keeps every node where it is.
class YamlStream {
 public:
  // Never throws; whatever the text, the result is documents or a problem.
  static YamlStream Parse(const std::string& text, const YamlLimits& limits);

  const std::vector<const YamlNode*>& documents() const { return documents_; }
  const std::optional<YamlProblem>& problem() const { return problem_; }

 private:
  friend class YamlTreeBuilder;
  std::deque<YamlNode> nodes_;
  std::vector<const YamlNode*> documents_;
  std::optional<YamlProblem> problem_;
};

}  // namespace gpufed

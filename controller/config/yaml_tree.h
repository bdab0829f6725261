#pragma once
// A YAML stream parsed once into the nodes the loader reads (YamlField), with the bounds
// that keep a hostile text from running away.
//
// Why not YAML::LoadAll: Debian 12's yaml-cpp 0.7 never returns from it when a ','
// stands outside any flow collection (",", or "a: 1\n---\n,"): its parser starts a new
// empty document at the same position forever and LoadAll keeps allocating (upstream
// jbeder/yaml-cpp#1040, fixed after 0.8.0). Guarding LoadAll took a second parse of every
// text, 30 % of the loader's time on an API submission (bench/bench_submit_parse.cc).
// Here yaml-cpp's event parser feeds a builder of our own, and the loop between
// documents is ours: two documents that start at the same byte mean no progress, and
// the parse stops there. The builder also counts
// each document's nodes as they arrive (scalars, nulls, aliases, lists and maps, as
// written), so a large body is refused before it is built, and the documents a text may
// hold. yaml-cpp's own depth limit (500) and syntax errors end the parse too.
//
// The nodes mirror what yaml-cpp's node builder makes of the same events (tags, marks,
// duplicate keys kept, an alias being the anchored node itself, so an alias of an
// enclosing collection makes a cycle: readers bound their walks, as CheckShape does).
#include <yaml-cpp/mark.h>

#include <cstddef>
#include <deque>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpufed::config {

class YamlNode {
 public:
  enum class Kind { kNull, kScalar, kSequence, kMap };
  struct Entry {
    const YamlNode* key;
    const YamlNode* value;
  };

  YamlNode() = default;
  YamlNode(Kind kind, YAML::Mark mark, std::string tag = "", std::string text = "")
      : kind_(kind), mark_(mark), tag_(std::move(tag)), text_(std::move(text)) {}
  // A plain scalar with no position (tests, and readers of text that is not a document).
  static YamlNode PlainScalar(std::string text) {
    return YamlNode(Kind::kScalar, YAML::Mark::null_mark(), "?", std::move(text));
  }
  // The node a missing key reads as: null, no position (the reader keeps its parent's).
  static const YamlNode& Missing();

  Kind kind() const { return kind_; }
  bool IsNull() const { return kind_ == Kind::kNull; }
  bool IsScalar() const { return kind_ == Kind::kScalar; }
  bool IsSequence() const { return kind_ == Kind::kSequence; }
  bool IsMap() const { return kind_ == Kind::kMap; }
  // The scalar's text ("" for any other node) and tag ("?" plain, "!" quoted, or the
  // tag written; "" for nulls), as yaml-cpp reports them.
  const std::string& Scalar() const { return text_; }
  const std::string& Tag() const { return tag_; }
  const YAML::Mark& Mark() const { return mark_; }
  // Elements of a list, entries of a map (in document order, duplicates kept).
  std::span<const YamlNode* const> elements() const { return elements_; }
  std::span<const Entry> entries() const { return entries_; }
  size_t size() const { return IsMap() ? entries_.size() : elements_.size(); }
  // The value of the first entry whose key is the scalar `key`; nullptr when none.
  const YamlNode* Find(std::string_view key) const;

 private:
  friend class YamlTreeBuilder;
  Kind kind_ = Kind::kNull;
  YAML::Mark mark_ = YAML::Mark::null_mark();
  std::string tag_;
  std::string text_;
  std::vector<const YamlNode*> elements_;
  std::vector<Entry> entries_;
};

struct YamlLimits {
  size_t max_documents = std::numeric_limits<size_t>::max();
  size_t max_nodes_per_document = std::numeric_limits<size_t>::max();
};

struct YamlProblem {
  enum class Kind {
    kStream,  // no progress, too many documents or nodes: `message` says which
    kTooDeep,  // yaml-cpp's depth limit
    kSyntax,  // yaml-cpp's reason, without its position
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

}  // namespace gpufed::config

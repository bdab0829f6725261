#include "controller/config/yaml_tree.h"

#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

namespace gpufed::config {
namespace {

// Thrown out of the event parser when a document holds more nodes than allowed.
struct TooManyNodes {
  YAML::Mark mark;
};

YamlProblem At(YamlProblem::Kind kind, const YAML::Mark& mark, std::string message) {
  return {kind, mark.line + 1, mark.column + 1, std::move(message)};
}

}  // namespace

const YamlNode& YamlNode::Missing() {
  static const YamlNode missing;
  return missing;
}

const YamlNode* YamlNode::Find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key->IsScalar() && entry.key->Scalar() == key) return entry.value;
  }
  return nullptr;
}

// Builds one document's nodes from the parser's events, into the stream's arena.
class YamlTreeBuilder : public YAML::EventHandler {
 public:
  YamlTreeBuilder(std::deque<YamlNode>& arena, size_t max_nodes) : arena_(arena), max_nodes_(max_nodes) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    start = mark;
    root = nullptr;
    nodes_ = 0;
    open_.clear();
    pending_keys_.clear();
    anchors_.clear();
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Attach(New(YamlNode::Kind::kNull, mark, anchor, "", ""));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Count(mark);
    // The parser looked the anchor up already (an unknown one is its syntax error).
    Attach(anchor < anchors_.size() && anchors_[anchor] != nullptr ? anchors_[anchor] : &YamlNode::Missing());
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    Attach(New(YamlNode::Kind::kScalar, mark, anchor, tag, value));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(New(YamlNode::Kind::kSequence, mark, anchor, tag, ""));
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(New(YamlNode::Kind::kMap, mark, anchor, tag, ""));
  }
  void OnMapEnd() override { Close(); }

  YAML::Mark start = YAML::Mark::null_mark();
  const YamlNode* root = nullptr;

 private:
  void Count(const YAML::Mark& mark) {
    if (++nodes_ > max_nodes_) throw TooManyNodes{mark};
  }

  YamlNode* New(YamlNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor, const std::string& tag,
                const std::string& text) {
    Count(mark);
    YamlNode* node = &arena_.emplace_back(kind, mark, tag, text);
    // Registered before its children, as yaml-cpp's builder does: an alias inside the
    // anchored collection refers to it.
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, nullptr);
      anchors_[anchor] = node;
    }
    return node;
  }

  void Open(YamlNode* collection) {
    Attach(collection);
    open_.push_back(collection);
    pending_keys_.push_back(nullptr);
  }

  void Close() {
    if (open_.empty()) return;
    // A key without a value cannot come from the parser (it sends a null); kept as one.
    if (pending_keys_.back() != nullptr) open_.back()->entries_.push_back({pending_keys_.back(), &YamlNode::Missing()});
    open_.pop_back();
    pending_keys_.pop_back();
  }

  void Attach(const YamlNode* node) {
    if (open_.empty()) {
      if (root == nullptr) root = node;
      return;
    }
    YamlNode* parent = open_.back();
    if (parent->IsSequence()) {
      parent->elements_.push_back(node);
    } else if (pending_keys_.back() == nullptr) {
      pending_keys_.back() = node;
    } else {
      parent->entries_.push_back({pending_keys_.back(), node});
      pending_keys_.back() = nullptr;
    }
  }

  std::deque<YamlNode>& arena_;
  size_t max_nodes_;
  size_t nodes_ = 0;
  std::vector<YamlNode*> open_;
  std::vector<const YamlNode*> pending_keys_;  // per open collection: a map's key awaiting its value
  std::vector<YamlNode*> anchors_;             // by yaml-cpp's anchor number, per document
};

YamlStream YamlStream::Parse(const std::string& text, const YamlLimits& limits) {
  YamlStream stream;
  std::istringstream in(text);
  YamlTreeBuilder builder(stream.nodes_, limits.max_nodes_per_document);
  int previous_start = -1;
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
      if (builder.start.pos == previous_start) {
        const size_t at = static_cast<size_t>(builder.start.pos);
        std::string found = at < text.size() ? std::string("'") + text[at] + "'" : "end of input";
        stream.problem_ =
            At(YamlProblem::Kind::kStream, builder.start,
               "YAML syntax error: unexpected " + found +
                   (at < text.size() && text[at] == ',' ? " outside a flow list or map ('[...]' or '{...}')"
                                                        : ": the parser cannot continue here"));
        break;
      }
      previous_start = builder.start.pos;
      if (stream.documents_.size() == limits.max_documents) {
        stream.problem_ =
            At(YamlProblem::Kind::kStream, builder.start,
               "too many YAML documents in one file (more than " + std::to_string(limits.max_documents) + ")");
        break;
      }
      stream.documents_.push_back(builder.root != nullptr ? builder.root : &YamlNode::Missing());
    }
  } catch (const TooManyNodes& e) {
    stream.problem_ =
        At(YamlProblem::Kind::kStream, e.mark,
           "document has more than " + std::to_string(limits.max_nodes_per_document) + " nodes; refusing it");
  } catch (const YAML::DeepRecursion& e) {
    stream.problem_ = At(YamlProblem::Kind::kTooDeep, e.mark, e.msg);
  } catch (const YAML::Exception& e) {
    stream.problem_ = At(YamlProblem::Kind::kSyntax, e.mark, e.msg);
  } catch (const std::exception& e) {
    stream.problem_ = At(YamlProblem::Kind::kStream, YAML::Mark(), std::string("cannot parse YAML: ") + e.what());
  }
  if (stream.problem_) {
    stream.documents_.clear();
    stream.nodes_.clear();
  }
  return stream;
}

}  // namespace gpufed::config

#include "controller/common/yaml_tree.h"

#include <yaml.h>

#include <string_view>
#include <unordered_map>

namespace gpufed {
namespace {

YamlProblem At(YamlProblem::Kind kind, const YamlMark& mark, std::string message) {
  return {kind, mark.line + 1, mark.column + 1, std::move(message)};
}

YamlMark MarkOf(const yaml_mark_t& mark) { return {static_cast<int>(mark.line), static_cast<int>(mark.column)}; }

std::string_view Text(const yaml_char_t* text) {
  return text == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(text));
}

// libyaml's parser over one text, and one event: each freed however the parse ends.
class LibyamlParser {
 public:
  explicit LibyamlParser(const std::string& text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    }
  }
  ~LibyamlParser() {
    if (ok_) yaml_parser_delete(&parser_);
  }
  LibyamlParser(const LibyamlParser&) = delete;
  LibyamlParser& operator=(const LibyamlParser&) = delete;

  bool ok() const { return ok_; }
  yaml_parser_t* get() { return &parser_; }

 private:
  yaml_parser_t parser_{};
  bool ok_ = false;
};

class LibyamlEvent {
 public:
  LibyamlEvent() = default;
  ~LibyamlEvent() { yaml_event_delete(&event_); }
  LibyamlEvent(const LibyamlEvent&) = delete;
  LibyamlEvent& operator=(const LibyamlEvent&) = delete;

  yaml_event_t* get() { return &event_; }
  const yaml_event_t& operator*() const { return event_; }

 private:
  yaml_event_t event_{};
};

// The line and column (0-based, in characters) of a byte offset: libyaml reports a
// reader error (bad UTF-8, a control character) by offset only.
YamlMark MarkAtOffset(const std::string& text, size_t offset) {
  YamlMark mark{0, 0};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++mark.column;
    }
  }
  return mark;
}

// The byte at a mark (libyaml counts characters); text.size() when it lies past the end.
size_t ByteOffsetOf(const std::string& text, const YamlMark& mark) {
  size_t at = 0;
  for (int line = 0; line < mark.line; ++line) {
    at = text.find('\n', at);
    if (at == std::string::npos) return text.size();
    ++at;
  }
  for (int column = 0; column < mark.column && at < text.size() && text[at] != '\n'; ++column) {
    do {
      ++at;
    } while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80);
  }
  return at;
}

// libyaml's reason for refusing the text, at the position it names. A ',' where no flow
// collection is open gets a reason of its own: libyaml's ("did not find expected node
// content") does not say that a ',' only separates the items of '[...]' or '{...}'.
YamlProblem SyntaxProblem(const yaml_parser_t& parser, const std::string& text) {
  if (parser.error == YAML_MEMORY_ERROR) {
    return At(YamlProblem::Kind::kStream, YamlMark{0, 0}, "cannot parse YAML: out of memory");
  }
  if (parser.error == YAML_READER_ERROR) {
    std::string message = std::string(Text(reinterpret_cast<const yaml_char_t*>(parser.problem)));
    if (parser.problem_value != -1) message += " (byte " + std::to_string(parser.problem_value) + ")";
    return At(YamlProblem::Kind::kSyntax, MarkAtOffset(text, parser.problem_offset), message);
  }
  const YamlMark mark = MarkOf(parser.problem_mark);
  const std::string_view context = parser.context != nullptr ? std::string_view(parser.context) : "";
  const size_t at = ByteOffsetOf(text, mark);
  if (at < text.size() && text[at] == ',' && context.find("flow") == std::string_view::npos) {
    return At(YamlProblem::Kind::kSyntax, mark, "unexpected ',' outside a flow list or map ('[...]' or '{...}')");
  }
  std::string message = parser.problem != nullptr ? parser.problem : "cannot parse YAML";
  if (!context.empty()) message += " " + std::string(context);
  return At(YamlProblem::Kind::kSyntax, mark, std::move(message));
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

// Builds one document's nodes from libyaml's events, into the stream's arena. Each
// event either adds to the tree or sets `problem`, after which the parse stops.
class YamlTreeBuilder {
 public:
  YamlTreeBuilder(std::deque<YamlNode>& arena, size_t max_nodes) : arena_(arena), max_nodes_(max_nodes) {}

  void StartDocument() {
    root = nullptr;
    nodes_ = 0;
    open_.clear();
    pending_keys_.clear();
    anchors_.clear();
  }

  void Scalar(const yaml_event_t& event) {
    const auto& scalar = event.data.scalar;
    const std::string_view value(reinterpret_cast<const char*>(scalar.value), scalar.length);
    const bool plain = scalar.tag == nullptr && scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (plain && (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL")) {
      Attach(New(YamlNode::Kind::kNull, event.start_mark, scalar.anchor, "", ""));
    } else {
      const std::string_view tag = scalar.tag != nullptr ? Text(scalar.tag) : plain ? "?" : "!";
      Attach(New(YamlNode::Kind::kScalar, event.start_mark, scalar.anchor, tag, value));
    }
  }

  void Alias(const yaml_event_t& event) {
    if (!Count(event.start_mark)) return;
    const std::string_view name = Text(event.data.alias.anchor);
    const auto anchored = anchors_.find(std::string(name));
    if (anchored == anchors_.end()) {
      problem = At(YamlProblem::Kind::kSyntax, MarkOf(event.start_mark),
                   "the alias '*" + std::string(name) + "' refers to no anchor defined before it in this document");
      return;
    }
    Attach(anchored->second);
  }

  void OpenCollection(YamlNode::Kind kind, const yaml_event_t& event, const yaml_char_t* anchor,
                      const yaml_char_t* tag) {
    if (open_.size() == kMaxYamlDepth) {
      problem = At(YamlProblem::Kind::kTooDeep, MarkOf(event.start_mark),
                   "nested deeper than " + std::to_string(kMaxYamlDepth) + " lists and maps");
      return;
    }
    YamlNode* collection = New(kind, event.start_mark, anchor, tag != nullptr ? Text(tag) : "?", "");
    if (collection == nullptr) return;
    Attach(collection);
    open_.push_back(collection);
    pending_keys_.push_back(nullptr);
  }

  void CloseCollection() {
    if (open_.empty()) return;
    // A key without a value cannot come from the parser (it sends a null); kept as one.
    if (pending_keys_.back() != nullptr) open_.back()->entries_.push_back({pending_keys_.back(), &YamlNode::Missing()});
    open_.pop_back();
    pending_keys_.pop_back();
  }

  const YamlNode* root = nullptr;
  std::optional<YamlProblem> problem;

 private:
  bool Count(const yaml_mark_t& mark) {
    if (++nodes_ <= max_nodes_) return true;
    problem = At(YamlProblem::Kind::kStream, MarkOf(mark),
                 "document has more than " + std::to_string(max_nodes_) + " nodes; refusing it");
    return false;
  }

  // The new node, or nullptr once the document holds too many.
  YamlNode* New(YamlNode::Kind kind, const yaml_mark_t& mark, const yaml_char_t* anchor, std::string_view tag,
                std::string_view text) {
    if (!Count(mark)) return nullptr;
    YamlNode* node = &arena_.emplace_back(kind, MarkOf(mark), std::string(tag), std::string(text));
    // Registered before its children: an alias inside the anchored collection refers to
    // it. A later anchor of the same name replaces it for the aliases after it.
    if (anchor != nullptr) anchors_[std::string(Text(anchor))] = node;
    return node;
  }

  void Attach(const YamlNode* node) {
    if (node == nullptr) return;
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
  std::unordered_map<std::string, YamlNode*> anchors_;  // by name, this document's
};

YamlStream YamlStream::Parse(const std::string& text, const YamlLimits& limits) {
  YamlStream stream;
  YamlTreeBuilder builder(stream.nodes_, limits.max_nodes_per_document);
  LibyamlParser parser(text);
  if (!parser.ok()) {
    stream.problem_ = At(YamlProblem::Kind::kStream, YamlMark{0, 0}, "cannot parse YAML: out of memory");
  }
  for (bool done = !parser.ok(); !done && !builder.problem;) {
    LibyamlEvent event;
    if (yaml_parser_parse(parser.get(), event.get()) == 0) {
      builder.problem = SyntaxProblem(*parser.get(), text);
      break;
    }
    switch ((*event).type) {
      case YAML_STREAM_END_EVENT: done = true; break;
      case YAML_DOCUMENT_START_EVENT:
        if (stream.documents_.size() == limits.max_documents) {
          builder.problem =
              At(YamlProblem::Kind::kStream, MarkOf((*event).start_mark),
                 "too many YAML documents in one file (more than " + std::to_string(limits.max_documents) + ")");
        }
        builder.StartDocument();
        break;
      case YAML_DOCUMENT_END_EVENT:
        stream.documents_.push_back(builder.root != nullptr ? builder.root : &YamlNode::Missing());
        break;
      case YAML_SCALAR_EVENT: builder.Scalar(*event); break;
      case YAML_ALIAS_EVENT: builder.Alias(*event); break;
      case YAML_SEQUENCE_START_EVENT:
        builder.OpenCollection(YamlNode::Kind::kSequence, *event, (*event).data.sequence_start.anchor,
                               (*event).data.sequence_start.tag);
        break;
      case YAML_MAPPING_START_EVENT:
        builder.OpenCollection(YamlNode::Kind::kMap, *event, (*event).data.mapping_start.anchor,
                               (*event).data.mapping_start.tag);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: builder.CloseCollection(); break;
      case YAML_STREAM_START_EVENT:
      case YAML_NO_EVENT: break;
    }
  }
  if (builder.problem) {
    stream.problem_ = std::move(builder.problem);
  }
  if (stream.problem_) {
    stream.documents_.clear();
    stream.nodes_.clear();
  }
  return stream;
}

}  // namespace gpufed

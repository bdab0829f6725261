#include "controller/config/yaml_guard.h"

#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace gpufed::config {
namespace {

// Thrown out of the event parser when a document holds more nodes than allowed.
struct TooManyNodes {
  YAML::Mark mark;
};

// Document starts, and each document's nodes counted as the parser meets them; no nodes
// are built, so memory stays flat however large the text.
class DocumentStarts : public YAML::EventHandler {
 public:
  explicit DocumentStarts(size_t max_nodes) : max_nodes_(max_nodes) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    last = mark;
    nodes_ = 0;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Count(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnMapEnd() override {}

  YAML::Mark last = YAML::Mark::null_mark();

 private:
  void Count(const YAML::Mark& mark) {
    if (++nodes_ > max_nodes_) throw TooManyNodes{mark};
  }
  size_t max_nodes_;
  size_t nodes_ = 0;
};

YamlStreamProblem At(const YAML::Mark& mark, std::string message) {
  return {true, mark.line + 1, mark.column + 1, std::move(message)};
}

}  // namespace

YamlStreamProblem CheckYamlStream(const std::string& text, size_t max_documents, size_t max_nodes_per_document) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler(max_nodes_per_document);
  int previous_start = -1;
  size_t documents = 0;
  try {
    while (parser.HandleNextDocument(handler)) {
      if (handler.last.pos == previous_start) {
        const size_t at = static_cast<size_t>(handler.last.pos);
        std::string found = at < text.size() ? std::string("'") + text[at] + "'" : "end of input";
        return At(handler.last, "YAML syntax error: unexpected " + found +
                                    (at < text.size() && text[at] == ','
                                         ? " outside a flow list or map ('[...]' or '{...}')"
                                         : ": the parser cannot continue here"));
      }
      previous_start = handler.last.pos;
      if (++documents > max_documents) {
        return At(handler.last, "too many YAML documents in one file (more than " + std::to_string(max_documents) + ")");
      }
    }
  } catch (const TooManyNodes& e) {
    return At(e.mark, "document has more than " + std::to_string(max_nodes_per_document) + " nodes; refusing it");
  } catch (const YAML::Exception&) {
    // A syntax error: the real parse reports it with its position.
  }
  return {};
}

}  // namespace gpufed::config

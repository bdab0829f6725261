#include "controller/config/yaml_guard.h"

#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

namespace gpufed::config {
namespace {

// Only document starts matter; no nodes are built, so memory stays flat.
class DocumentStarts : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { last = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark last = YAML::Mark::null_mark();
};

YamlStreamProblem At(const YAML::Mark& mark, std::string message) {
  return {true, mark.line + 1, mark.column + 1, std::move(message)};
}

}  // namespace

YamlStreamProblem CheckYamlStream(const std::string& text, size_t max_documents) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
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
  } catch (const YAML::Exception&) {
    // A syntax error: the real parse reports it with its position.
  }
  return {};
}

}  // namespace gpufed::config

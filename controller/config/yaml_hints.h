#pragma once
// What is likely wrong at a YAML syntax error. The parser says what it could not parse
// ("mapping values are not allowed in this context"), not why; the usual causes can be seen in the text: a tab in
// the indentation, a line indented unlike its siblings, a bracket that is never closed.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpufed::config {

struct SyntaxHint {
  int line = 0;     // 1-based, in the file: where to fix it
  int column = 0;   // 1-based
  std::string text; // "line 7 is indented with a tab; YAML indents with spaces only"
};

// A hint for a syntax error the parser (yaml_tree.h) reported at `error_line` (1-based, in `text`) with
// `message`, or nothing when the text shows no likely cause. `text` starts after
// `first_line` lines of its file: the hint's line and the lines it names are the file's.
std::optional<SyntaxHint> ExplainSyntaxError(std::string_view text, int error_line, std::string_view message,
                                             int first_line = 0);

// One YAML document of a file, with the lines before it, so the documents of a file
// parse on their own and an error in one does not hide the others.
struct DocumentText {
  std::string text;
  int first_line = 0;  // lines of the file before `text`
};
// Splits at document markers ("---" at the start of a line). Comments, blank lines and
// directives before a marker stay with the document that follows.
std::vector<DocumentText> SplitDocuments(std::string_view text);

}  // namespace gpufed::config

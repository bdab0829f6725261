#include "controller/config/yaml_hints.h"

#include <algorithm>

namespace gpufed::config {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

size_t Indent(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// Blank, or only a comment: says nothing about structure.
bool Insignificant(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\r\n");
  return i == std::string_view::npos || line[i] == '#';
}

// The line without a trailing comment (a '#' after a space, outside quotes).
std::string_view StripComment(std::string_view line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      line = line.substr(0, i);
      break;
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return line;
}

std::optional<SyntaxHint> TabHint(const std::vector<std::string_view>& lines, int error_line, int first) {
  for (int l = std::min<int>(error_line, static_cast<int>(lines.size())); l >= 1; --l) {
    std::string_view line = lines[l - 1];
    size_t lead = line.find_first_not_of(" \t");
    size_t tab = line.find('\t');
    if (tab != std::string_view::npos && (lead == std::string_view::npos || tab < lead)) {
      return SyntaxHint{first + l, static_cast<int>(tab) + 1,
                        "line " + std::to_string(first + l) + " is indented with a tab; YAML indents with spaces only"};
    }
  }
  return std::nullopt;
}

// A '[' or '{' that opens a flow collection and is never closed.
std::optional<SyntaxHint> BracketHint(const std::vector<std::string_view>& lines, int first) {
  struct Open {
    char c;
    int line, column;
  };
  std::vector<Open> open;
  for (size_t l = 0; l < lines.size(); ++l) {
    std::string_view line = StripComment(lines[l]);
    char quote = 0;
    bool value_start = true;  // at a place where a flow collection may begin
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quote != 0) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == ' ') continue;
      if ((c == '"' || c == '\'') && (value_start || !open.empty())) {
        quote = c;
      } else if ((c == '[' || c == '{') && (value_start || !open.empty())) {
        open.push_back({c, first + static_cast<int>(l) + 1, static_cast<int>(i) + 1});
      } else if ((c == ']' || c == '}') && !open.empty()) {
        if ((c == ']') != (open.back().c == '[')) break;  // closed by the wrong bracket: that one
        open.pop_back();
      }
      value_start = c == ':' || c == '-' || c == ',' || c == '[' || c == '{';
    }
  }
  if (open.empty()) return std::nullopt;
  const Open& o = open.back();
  return SyntaxHint{o.line, o.column,
                    std::string("the '") + o.c + "' opened at line " + std::to_string(o.line) + " is never closed"};
}

// Flow brackets opened minus closed on a line (outside quotes): a flow collection that
// continues on the next lines makes their indentation free.
int FlowDelta(std::string_view line) {
  int delta = 0;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++delta;
    } else if (c == ']' || c == '}') {
      --delta;
    }
  }
  return delta;
}

// The last line up to `error_line` whose indentation fits no level around it: deeper
// than its previous line although that line opens no block, or shallower but matching
// no enclosing level.
std::optional<SyntaxHint> IndentHint(const std::vector<std::string_view>& lines, int error_line, int first) {
  std::vector<size_t> levels;  // indentation of the enclosing blocks, innermost last
  std::optional<SyntaxHint> hint;
  size_t previous = 0;          // content column of the previous significant line
  int previous_line = 0;        // and its number
  bool previous_opens = true;   // it ends with ':' (a block follows)
  size_t block_scalar = std::string_view::npos;  // inside `key: |`: lines deeper than this
  int flow = 0;                 // flow brackets still open at the start of the line
  const int last = std::min<int>(error_line + 1, static_cast<int>(lines.size()));
  for (int l = 1; l <= last; ++l) {
    std::string_view raw = lines[l - 1];
    const size_t indent = Indent(raw);
    if (Insignificant(raw) || raw.find('\t') <= indent) continue;  // tabs: TabHint's case
    if (block_scalar != std::string_view::npos && indent > block_scalar) continue;
    block_scalar = std::string_view::npos;
    std::string_view line = StripComment(raw);
    const bool in_flow = flow > 0;
    flow = std::max(0, flow + FlowDelta(line));
    if (in_flow) continue;
    if (line.substr(indent).starts_with("---") || line.substr(indent).starts_with("...")) continue;
    // A list item's content starts after "- ": its mapping keys continue at that column.
    size_t content = indent;
    while (line.compare(content, 2, "- ") == 0) content += 2;
    if (l > 1 && !levels.empty()) {
      std::string problem;
      if (indent > previous && !previous_opens) {
        problem = "is indented " + std::to_string(indent) + " spaces, more than line " +
                  std::to_string(first + previous_line) + " (" + std::to_string(previous) +
                  "), which opens no block: indent it like its siblings";
      } else if (indent < previous && std::find(levels.begin(), levels.end(), indent) == levels.end()) {
        std::string known;
        for (size_t level : levels) known += (known.empty() ? "" : ", ") + std::to_string(level);
        problem = "is indented " + std::to_string(indent) + " spaces, which matches no enclosing level (" + known + ")";
      }
      if (!problem.empty() && l <= error_line + 1) {
        hint = SyntaxHint{first + l, static_cast<int>(indent) + 1, "line " + std::to_string(first + l) + " " + problem};
      }
    }
    while (!levels.empty() && levels.back() > indent) levels.pop_back();
    if (levels.empty() || levels.back() != indent) levels.push_back(indent);
    if (content != indent) levels.push_back(content);
    previous = content;
    previous_line = l;
    previous_opens = line.ends_with(":") || line.substr(indent) == "-";
    if (line.ends_with("|") || line.ends_with(">") || line.ends_with("|-") || line.ends_with(">-")) {
      block_scalar = indent;
    }
  }
  return hint;
}

// Whether `s` has a ':' that makes it a mapping key (followed by a space or the end),
// outside quotes.
bool HasKeyColon(std::string_view s) {
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ':' && (i + 1 == s.size() || s[i + 1] == ' ')) {
      return true;
    }
  }
  return false;
}

// A key written without its ':' ("spec" above an indented block, "tenant team-a" among
// keys): the parser reports the line after it. The hint names the line to fix and how.
std::optional<SyntaxHint> ColonHint(const std::vector<std::string_view>& lines, int error_line, int first) {
  const int last = std::min<int>(error_line, static_cast<int>(lines.size()));
  // The significant line at or before the error, and the one before that.
  int at = last;
  while (at >= 1 && Insignificant(lines[at - 1])) --at;
  int before = at - 1;
  while (before >= 1 && Insignificant(lines[before - 1])) --before;
  if (at < 1 || before < 1) return std::nullopt;
  const std::string_view error_text = StripComment(lines[at - 1]);
  const std::string_view text = StripComment(lines[before - 1]);
  const size_t indent = Indent(text);
  size_t content = indent;
  while (text.compare(content, 2, "- ") == 0) content += 2;
  const std::string_view key = text.substr(content);
  if (key.empty() || HasKeyColon(key) || key.find_first_of("{}[]\"'|>&*!%@`#") != std::string_view::npos) {
    return std::nullopt;
  }
  const size_t error_indent = Indent(error_text);
  const bool opens = error_indent > indent;                            // "spec" above a block
  const bool sibling = error_indent == indent && HasKeyColon(error_text);  // "tenant team-a" among keys
  if (!opens && !sibling) return std::nullopt;
  std::string fixed(key);
  const size_t space = fixed.find(' ');
  if (space == std::string::npos) {
    fixed += ":";
  } else {
    fixed.insert(space, ":");
  }
  return SyntaxHint{first + before, static_cast<int>(content) + 1,
                    "line " + std::to_string(first + before) + " has no ':' after its key: write '" + fixed + "'"};
}

bool IsMarker(std::string_view line) {
  return line.starts_with("---") &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' || line[3] == '\n');
}

}  // namespace

std::optional<SyntaxHint> ExplainSyntaxError(std::string_view text, int error_line, std::string_view message,
                                             int first_line) {
  const std::vector<std::string_view> lines = Lines(text);
  if (auto tab = TabHint(lines, error_line + 1, first_line)) return tab;
  if (message.find("flow") != std::string_view::npos || message.find("end of") != std::string_view::npos) {
    if (auto bracket = BracketHint(lines, first_line)) return bracket;
  }
  if (auto colon = ColonHint(lines, error_line, first_line)) return colon;
  return IndentHint(lines, error_line, first_line);
}

std::vector<DocumentText> SplitDocuments(std::string_view text) {
  std::vector<DocumentText> documents(1);
  bool has_content = false;  // the current document holds more than comments and directives
  int line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    std::string_view line = text.substr(start, end - start);
    if (IsMarker(line) && has_content) {
      documents.push_back({"", line_number});
      has_content = false;
    }
    documents.back().text.append(line);
    if (!Insignificant(line) && !line.starts_with("%") && !IsMarker(line)) has_content = true;
    if (IsMarker(line) && !Insignificant(StripComment(line.substr(3)))) has_content = true;  // "--- {a: 1}"
    ++line_number;
    start = end;
  }
  return documents;
}

}  // namespace gpufed::config

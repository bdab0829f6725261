#include "controller/config/diagnostics.h"

#include <algorithm>
#include <tuple>

namespace gpufed::config {

std::string Diagnostic::ToString() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += severity == Severity::kNote ? ": note: " : ": error: ";
  if (!field.empty()) out += field + ": ";
  return out + message;
}

size_t Diagnostics::errors() const {
  return static_cast<size_t>(std::count_if(items_.begin(), items_.end(),
                                           [](const Diagnostic& d) { return d.severity == Severity::kError; }));
}

void Diagnostics::Sort() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
}

}  // namespace gpufed::config

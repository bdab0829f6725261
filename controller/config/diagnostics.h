#pragma once
// Errors found while loading a policy repository. Loading collects every error of a
// repo in one pass, so users fix them all at once.
#include <string>
#include <vector>

namespace gpufed::config {

struct Diagnostic {
  std::string file;
  int line = 0;     // 1-based; 0 when the error concerns the whole file
  int column = 0;   // 1-based
  std::string field;  // e.g. "spec.resources.gpuMemory"; empty for file-level errors
  std::string message;

  // "file:line:col: error: field: message" (the format editors and CI annotate).
  std::string ToString() const;
};

class Diagnostics {
 public:
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Sorted by file, line, column, so output is stable whatever the walk order.
  void Sort();

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace gpufed::config

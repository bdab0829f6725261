#pragma once
// Errors found while loading a policy repository. Loading collects every error of a
// repo in one pass, so users fix them all at once.
#include <string>
#include <vector>

namespace gpufed::config {

enum class Severity {
  kError,
  kNote,  // context for an error elsewhere ("not checked: file x.yaml did not parse")
};

struct Diagnostic {
  std::string file;
  int line = 0;     // 1-based; 0 when the error concerns the whole file
  int column = 0;   // 1-based
  std::string field;  // e.g. "spec.resources.gpuMemory"; empty for file-level errors
  std::string message;
  Severity severity = Severity::kError;

  // "file:line:col: error: field: message" (the format editors and CI annotate);
  // "note:" for notes.
  std::string ToString() const;
};

class Diagnostics {
 public:
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  bool empty() const { return items_.empty(); }
  // Diagnostics of severity error (notes do not make a repository invalid).
  size_t errors() const;
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Sorted by file, line, column, so output is stable whatever the walk order.
  void Sort();
  // Keeps only the diagnostics `keep` returns true for.
  template <typename Predicate>
  void Filter(Predicate keep) {
    std::erase_if(items_, [&](const Diagnostic& d) { return !keep(d); });
  }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace gpufed::config

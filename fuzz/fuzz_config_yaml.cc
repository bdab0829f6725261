// The policy repository loader on one file's text: single resources and '---'-separated
// multi-document files (config::LoadText runs the same per-file steps LoadRepository runs
// on every file it reads). Whatever the text, the loader returns diagnostics: it never
// throws, crashes or hangs (yaml_tree bounds libyaml's events: nodes, documents, nesting).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "controller/common/yaml_tree.h"
#include "controller/config/loader.h"
#include "policies/stdlib/stdlib.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64u << 10)) return 0;  // bigger inputs only slow the search down
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpufed::config::LoadOptions options;
  options.library = &gpufed::stdlib::Files();  // imports resolve as in the product
  gpufed::config::LoadResult loaded = gpufed::config::LoadText(text, "fuzz/repo.yaml", nullptr, options);
  // The parse's bounds hold for any text: never more documents than allowed, and a text
  // the loader accepts with more than 2 documents is refused by a parse allowing 2.
  const gpufed::YamlStream bounded = gpufed::YamlStream::Parse(text, {.max_documents = 2});
  if (bounded.documents().size() > 2) std::abort();
  if (loaded.ok() && loaded.documents > 2 && !bounded.problem()) std::abort();
  return 0;
}

// The policy repository loader on one file's text: single resources and '---'-separated
// multi-document files (config::LoadText runs the same per-file steps LoadRepository runs
// on every file it reads). Whatever the text, the loader returns diagnostics: it never
// throws, crashes or hangs (yaml_guard stops yaml-cpp 0.7's LoadAll loop on a stray ',').
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "controller/config/loader.h"
#include "controller/config/yaml_guard.h"
#include "policies/stdlib/stdlib.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (64u << 10)) return 0;  // bigger inputs only slow the search down
  const std::string text(reinterpret_cast<const char*>(data), size);
  gpufed::config::LoadOptions options;
  options.library = &gpufed::stdlib::Files();  // imports resolve as in the product
  gpufed::config::LoadResult loaded = gpufed::config::LoadText(text, "fuzz/repo.yaml", nullptr, options);
  // The guard's document bound holds for any text (it runs before yaml-cpp builds nodes).
  gpufed::config::YamlStreamProblem problem = gpufed::config::CheckYamlStream(text, 2);
  if (loaded.ok() && loaded.documents > 2 && !problem.found) std::abort();
  return 0;
}

#pragma once
// Internal to policies/runtime: making policy-supplied text safe to store and log.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpufed::policy::internal {

// Returns `text` with invalid UTF-8 replaced by U+FFFD (so JSON encoders downstream
// never choke on a reason), cut at a character boundary to at most `max_bytes` bytes,
// ending in "…" when it was cut. max_bytes < 4 keeps nothing but the ellipsis.
std::string SanitizeText(std::string_view text, size_t max_bytes);

}  // namespace gpufed::policy::internal

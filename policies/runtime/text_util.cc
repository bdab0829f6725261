#include "policies/runtime/text_util.h"

#include <algorithm>

#include "controller/common/utf8.h"

namespace gpufed::policy::internal {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // …
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string SanitizeText(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + kEllipsis.size());
  // Stop early on huge inputs: only the first max_bytes + 1 bytes matter.
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const size_t len = Utf8SequenceLength(text, i);
    out += len > 0 ? text.substr(i, len) : kReplacement;
    i += len > 0 ? len : 1;
  }
  if (out.size() <= max_bytes) return out;
  size_t cut = max_bytes >= kEllipsis.size() ? max_bytes - kEllipsis.size() : 0;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  out += kEllipsis;
  return out;
}

}  // namespace gpufed::policy::internal

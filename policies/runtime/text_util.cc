#include "policies/runtime/text_util.h"

#include <algorithm>

namespace gpufed::policy::internal {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // …
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence at text[i], or 0 if it is invalid.
size_t ValidSequence(std::string_view text, size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  unsigned min, cp;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string SanitizeText(std::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + kEllipsis.size());
  // Stop early on huge inputs: only the first max_bytes + 1 bytes matter.
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const size_t len = ValidSequence(text, i);
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

#include "controller/common/utf8.h"

namespace gpufed {

size_t Utf8SequenceLength(std::string_view text, size_t i) {
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

std::optional<size_t> FirstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t len = Utf8SequenceLength(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string BoundedUtf8(std::string_view text, size_t max_bytes, Controls controls) {
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // …
  static constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  // Only the first max_bytes + 1 bytes of the result matter: stop reading there.
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const size_t len = Utf8SequenceLength(text, i);
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (len == 0) {
      out += kReplacement;
    } else if (len == 1 && controls == Controls::kToSpaces && (c < 0x20 || c == 0x7F)) {
      out += ' ';
    } else {
      out += text.substr(i, len);
    }
    i += len > 0 ? len : 1;
  }
  if (out.size() <= max_bytes) return out;
  if (max_bytes < kEllipsis.size()) return "";
  // `out` is valid UTF-8 now: step back from the cut to the start of a character.
  size_t cut = max_bytes - kEllipsis.size();
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  out += kEllipsis;
  return out;
}

}  // namespace gpufed

#include "connectors/http/peer_text.h"

#include "controller/common/utf8.h"

namespace gpufed::connectors::http {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // …
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string PeerText(std::string_view text, size_t max_bytes) {
  std::string out;
  // Only the first max_bytes + 1 bytes of the result matter: stop reading there.
  for (size_t i = 0; i < text.size() && out.size() <= max_bytes;) {
    const size_t len = Utf8SequenceLength(text, i);
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (len == 0) {
      out += kReplacement;
    } else if (len == 1 && (c < 0x20 || c == 0x7F)) {
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

}  // namespace gpufed::connectors::http

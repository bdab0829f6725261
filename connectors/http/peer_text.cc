#include "connectors/http/peer_text.h"

#include "controller/common/utf8.h"

namespace gpufed::connectors::http {

std::string PeerText(std::string_view text, size_t max_bytes) {
  return BoundedUtf8(text, max_bytes, Controls::kToSpaces);
}

}  // namespace gpufed::connectors::http

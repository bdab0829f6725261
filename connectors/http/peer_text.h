#pragma once
// Text a peer sent (an API error message, a body excerpt, a Location header) made safe
// to keep in a Status: the messages end up in the store, the journal and JSON answers,
// whose encoder throws on invalid UTF-8 (controller/common/utf8.h).
#include <cstddef>
#include <string>
#include <string_view>

namespace gpufed::connectors::http {

// `text` cut to at most `max_bytes` bytes on a UTF-8 character boundary (never inside a
// sequence), with invalid sequences replaced by U+FFFD and control characters (newlines,
// escapes that could forge log lines) by spaces; "…" marks a cut. Reads at most about
// `max_bytes` of `text`, however long it is.
std::string PeerText(std::string_view text, size_t max_bytes);

}  // namespace gpufed::connectors::http

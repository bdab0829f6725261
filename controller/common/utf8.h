#pragma once
// UTF-8 validity, shared by everything that turns outside text into JSON: nlohmann's
// dump() throws on invalid UTF-8, so text must be checked (or repaired) before it is
// stored, journaled or answered.
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gpufed {

// Length (1-4) of the valid UTF-8 sequence that starts at text[i], or 0 when the bytes
// there are not one: a stray continuation byte, a truncated sequence, an overlong form,
// a surrogate or a value past U+10FFFF. Requires i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);

// Byte offset of the first invalid sequence, or nullopt when all of `text` is UTF-8.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

// Outside text made fit to keep and show: every invalid sequence becomes U+FFFD, ASCII
// control characters become spaces when `controls` says so, and text longer than
// `max_bytes` is cut at a character boundary and ends in an ellipsis (the result is at
// most max_bytes long). The one home of this repair: peers' replies, Lua's reasons and
// the store's reasons all go through it.
enum class Controls { kKeep, kToSpaces };
std::string BoundedUtf8(std::string_view text, size_t max_bytes = std::numeric_limits<size_t>::max(),
                        Controls controls = Controls::kKeep);

}  // namespace gpufed

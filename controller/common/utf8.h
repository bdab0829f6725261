#pragma once
// UTF-8 validity, shared by everything that turns outside text into JSON: nlohmann's
// dump() throws on invalid UTF-8, so text must be checked (or repaired) before it is
// stored, journaled or answered.
#include <cstddef>
#include <optional>
#include <string_view>

namespace gpufed {

// Length (1-4) of the valid UTF-8 sequence that starts at text[i], or 0 when the bytes
// there are not one: a stray continuation byte, a truncated sequence, an overlong form,
// a surrogate or a value past U+10FFFF. Requires i < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t i);

// Byte offset of the first invalid sequence, or nullopt when all of `text` is UTF-8.
std::optional<size_t> FirstInvalidUtf8(std::string_view text);

}  // namespace gpufed

#pragma once
// Small text helpers shared by the loader and the CLI.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpufed {

// Levenshtein distance, bounded: returns limit+1 as soon as the distance exceeds limit.
size_t EditDistance(std::string_view a, std::string_view b, size_t limit);

// The closest candidate within a distance that scales with the word's length, or "".
std::string ClosestMatch(std::string_view word, std::span<const std::string_view> candidates);

std::string Join(const std::vector<std::string>& parts, std::string_view separator);

// One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote
// or a line break; as is otherwise.
std::string CsvField(std::string_view field);

}  // namespace gpufed

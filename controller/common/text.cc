#include "controller/common/text.h"

#include <algorithm>
#include <cctype>

namespace gpufed {

size_t EditDistance(std::string_view a, std::string_view b, size_t limit) {
  if (a.size() > b.size()) std::swap(a, b);
  if (b.size() - a.size() > limit) return limit + 1;
  std::vector<size_t> row(a.size() + 1);
  for (size_t i = 0; i <= a.size(); ++i) row[i] = i;
  for (size_t j = 1; j <= b.size(); ++j) {
    size_t diagonal = row[0];
    row[0] = j;
    size_t row_min = row[0];
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t above = row[i];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[i] = std::min({row[i] + 1, row[i - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
      row_min = std::min(row_min, row[i]);
    }
    if (row_min > limit) return limit + 1;
  }
  return row[a.size()];
}

std::string ClosestMatch(std::string_view word, std::span<const std::string_view> candidates) {
  // Two edits cover a swapped pair of letters ("hihg" -> "high"), the most common typo.
  size_t limit = std::max<size_t>(word.size() > 3 ? 2 : 1, word.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (std::string_view candidate : candidates) {
    size_t d = EditDistance(word, candidate, limit);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(candidate);
    }
  }
  return best;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  return out;
}

std::string CsvField(std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace gpufed

#include "connectors/http/token_bucket.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

namespace gpufed::connectors::http {

std::optional<int64_t> ParseHttpDate(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

std::optional<Duration> ParseRetryAfter(const std::string& value, const std::string& date_header) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (value.size() > 9) return std::nullopt;  // over 30 years: not a real hint
    return Duration::FromSeconds(std::stoll(value));
  }
  std::optional<int64_t> at = ParseHttpDate(value);
  std::optional<int64_t> now = ParseHttpDate(date_header);
  if (!at || !now) return std::nullopt;
  return Duration::FromSeconds(std::max<int64_t>(0, *at - *now));
}

}  // namespace gpufed::connectors::http

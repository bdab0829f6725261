#pragma once
// Times as text: RFC 3339 in UTC with microseconds, the form the audit journal, the API
// and the dashboard write.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpufed {

// "2026-11-22T10:00:00.000000Z" <-> microseconds since the epoch. Parse also takes fewer
// fraction digits and a bare date "YYYY-MM-DD" (midnight UTC); nullopt for anything else.
std::string FormatTimeMicros(int64_t micros);
std::optional<int64_t> ParseTimeMicros(std::string_view text);

}  // namespace gpufed

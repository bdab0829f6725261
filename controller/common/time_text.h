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

// The controller's clock reads milliseconds since the Unix epoch on the wall clock and
// since the run's start in a simulated federation. A value below this is virtual time:
// a wall clock passed it in 2001, a virtual run would need 31 years to reach it.
inline constexpr int64_t kVirtualClockLimitMillis = 1000000000000;  // 2001-09-09T01:46:40Z

// "+26:15:00" or "+26:15:00.250": hours (past 24), minutes and seconds since the run's
// virtual start, like `gpufed run`'s view.
std::string FormatVirtualMillis(int64_t millis);

// A controller time as people read it: "+26:15:00" in a simulated run, else RFC 3339
// UTC to the second ("2026-11-27T20:15:03Z").
std::string FormatControllerMillis(int64_t millis);

}  // namespace gpufed

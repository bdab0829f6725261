#include "controller/common/time_text.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

namespace gpufed {
namespace {

// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (era arithmetic: 400-year
// cycles of 146097 days). Linear in `d`, like timegm's normalisation of a day past the
// month's end.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The journal's own time text "YYYY-MM-DDTHH:MM:SS.ffffffZ" without sscanf and timegm
// (every reader, verifier and shipper parses one per record). nullopt: not exactly that
// shape; the general parser decides.
std::optional<int64_t> ParseCanonicalTime(std::string_view t) {
  if (t.size() != 27 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.' ||
      t[26] != 'Z') {
    return std::nullopt;
  }
  auto num = [&](size_t at, size_t n, int64_t* v) {
    *v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (t[i] < '0' || t[i] > '9') return false;
      *v = *v * 10 + (t[i] - '0');
    }
    return true;
  };
  int64_t year, mon, day, hh, mm, ss, frac;
  if (!num(0, 4, &year) || !num(5, 2, &mon) || !num(8, 2, &day) || !num(11, 2, &hh) || !num(14, 2, &mm) ||
      !num(17, 2, &ss) || !num(20, 6, &frac) || mon < 1 || mon > 12) {
    return std::nullopt;
  }
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  return ((days * 24 + hh) * 60 + mm) * 60 * 1000000 + ss * 1000000 + frac;
}

}  // namespace

std::string FormatTimeMicros(int64_t micros) {
  int64_t secs = micros >= 0 ? micros / 1000000 : (micros - 999999) / 1000000;
  int64_t frac = micros - secs * 1000000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(frac));
  return buf;
}

std::string FormatVirtualMillis(int64_t millis) {
  const int64_t ms = std::max<int64_t>(0, millis);
  const int64_t s = ms / 1000;
  char buf[48];
  if (ms % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "+%02lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "+%02lld:%02lld:%02lld.%03lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60),
                  static_cast<long long>(ms % 1000));
  }
  return buf;
}

std::string FormatControllerMillis(int64_t millis) {
  if (millis < kVirtualClockLimitMillis) return FormatVirtualMillis(millis);
  std::string text = FormatTimeMicros(millis / 1000 * 1000000);  // to the second
  return text.substr(0, 19) + "Z";
}

std::optional<int64_t> ParseTimeMicros(std::string_view text) {
  // Accepts "YYYY-MM-DDTHH:MM:SS[.ffffff]Z" and a bare date "YYYY-MM-DD" (midnight UTC).
  if (std::optional<int64_t> fast = ParseCanonicalTime(text)) return fast;
  std::tm tm{};
  int frac = 0;
  std::string s(text);
  if (s.size() == 10) s += "T00:00:00Z";
  int year, mon, day, hh, mm, ss;
  char tail[16] = {0};
  int n = std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%15s", &year, &mon, &day, &hh, &mm, &ss, tail);
  if (n < 6) return std::nullopt;
  std::string_view rest = tail;
  if (!rest.empty() && rest[0] == '.') {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
      if (digits < 6) {
        frac = frac * 10 + (rest[0] - '0');
        ++digits;
      }
      rest.remove_prefix(1);
    }
    while (digits++ < 6) frac *= 10;
  }
  if (rest != "Z" && !(n == 6 && rest.empty())) return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hh;
  tm.tm_min = mm;
  tm.tm_sec = ss;
  return static_cast<int64_t>(timegm(&tm)) * 1000000 + frac;
}

}  // namespace gpufed

#include "controller/audit/record_time.h"

#include <algorithm>
#include <cstdio>

#include "controller/audit/record.h"
#include "controller/audit/typed_members.h"
#include "controller/common/duration.h"

namespace gpufed::audit {
namespace {

using typed::Str;
// Absent (not 0) when missing.
std::optional<int64_t> Int(const nlohmann::json& j, const char* key) { return typed::OptionalInt(j, key); }

}  // namespace

std::optional<int64_t> ControllerClockMillis(const nlohmann::json& r) {
  const std::string kind = Str(r, "kind");
  if (kind == "decision") return Int(r, "decidedAtMillis");
  if (kind == "attempt-metered") return Int(r, "bookedAtMillis");
  if (kind == "workload-submitted") return Int(r, "acceptedAtMillis");
  if (kind == "workload-cancelled") return Int(r, "cancelledAtMillis");
  return std::nullopt;
}

RecordTime RecordTimeline::Next(const nlohmann::json& r) {
  std::optional<int64_t> own = ControllerClockMillis(r);
  if (own && *own >= 0 && *own < kVirtualClockLimitMillis) {
    // Monotonic: an attempt booked late never moves the run's time back.
    virtual_millis_ = std::max(virtual_millis_.value_or(0), *own);
  }
  RecordTime t;
  if (virtual_millis_) {
    const int64_t ms = own && *own >= 0 && *own < kVirtualClockLimitMillis ? *own : *virtual_millis_;
    t.is_virtual = true;
    t.micros = ms * 1000;
    t.text = FormatVirtualMillis(ms);
    t.day = "day " + std::to_string(ms / 86400000 + 1);
    return t;
  }
  t.text = Str(r, "time");
  t.micros = ParseTimeMicros(t.text).value_or(0);
  t.day = t.text.substr(0, 10);
  return t;
}

std::optional<TimeBound> ParseTimeBound(std::string_view text) {
  if (std::optional<int64_t> wall = ParseTimeMicros(text)) return TimeBound{false, *wall};
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  Result<Duration> since_start = Duration::Parse(text);
  if (!since_start.ok()) return std::nullopt;
  return TimeBound{true, since_start->millis() * 1000};
}

}  // namespace gpufed::audit

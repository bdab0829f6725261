#pragma once
// What time a record shows in `gpufed audit query` and `audit report`, and which day it
// counts for.
//
// A record's header `time` is when the journal committed it, on the wall clock: the
// chain's time, which verification and shipping use. The controller's own clock is
// another one in a simulated federation (virtual time, milliseconds since the run's
// start), where a simulated day passes in a second of wall time, so every header time of
// a run is the same. Records the loop writes therefore carry the controller clock too
// (`decidedAtMillis`, `bookedAtMillis`). A value below kVirtualClockLimitMillis is virtual
// time: a wall clock passed it in 2001, a virtual run would need 31 years to reach it.
// In a journal with virtual times, each record shows the latest controller time at or
// before it (a connector action: its pass's), so the TIME column reads as the run did.
// Wall-clock journals show header times, as before.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/common/time_text.h"

namespace gpufed::audit {

// The controller clock a record carries (decision: decidedAtMillis; attempt-metered:
// bookedAtMillis; workload-submitted: acceptedAtMillis; workload-cancelled:
// cancelledAtMillis), if any.
std::optional<int64_t> ControllerClockMillis(const nlohmann::json& record);

// The virtual/wall boundary and the "+26:15:00" form are common/time_text.h's.
using gpufed::FormatVirtualMillis;
using gpufed::kVirtualClockLimitMillis;

struct RecordTime {
  bool is_virtual = false;
  int64_t micros = 0;  // virtual: since the run's start; wall: since the Unix epoch
  std::string text;    // what a TIME column shows
  std::string day;     // "2026-11-23" (UTC), or "day 2" of a virtual run (day 1 starts at +00:00:00)
};

// Follows a journal in sequence order and gives each record its time. Feed every
// record (also those a filter drops), so the virtual time carries across them.
class RecordTimeline {
 public:
  RecordTime Next(const nlohmann::json& record);

 private:
  std::optional<int64_t> virtual_millis_;  // the latest controller time seen, once virtual
};

// A --from/--to bound. A date (2026-11-01) or RFC 3339 UTC time compares with the
// records' header (wall-clock) time, as always; a duration, optionally with a leading
// "+" ("6h", "+1d2h"), with a virtual run's time since its start (records of a journal
// without virtual times never match it).
struct TimeBound {
  bool is_virtual = false;
  int64_t micros = 0;
};
std::optional<TimeBound> ParseTimeBound(std::string_view text);

}  // namespace gpufed::audit

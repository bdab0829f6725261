#include "controller/runtime/virtual_pacer.h"

#include <algorithm>
#include <cmath>

namespace gpufed::runtime {

namespace {
// --speed's range (the CLI's too): beyond it a double's product with a wall time would
// stop meaning milliseconds.
constexpr double kMinSpeed = 1e-9;
constexpr double kMaxSpeed = 1e9;
}  // namespace

VirtualPacer::VirtualPacer(double speed, Duration virtual_start, WallClock wall)
    : speed_(std::isnan(speed) ? kMinSpeed : std::clamp(speed, kMinSpeed, kMaxSpeed)),
      wall_(wall ? std::move(wall) : WallClock([] { return std::chrono::steady_clock::now(); })),
      virtual_anchor_(virtual_start),
      wall_anchor_(wall_()) {}

VirtualPacer::Step VirtualPacer::Toward(Duration now, Duration next) {
  if (next <= now) return {now, {}};
  const double wall_seconds = std::chrono::duration<double>(wall_() - wall_anchor_).count();
  // In doubles until it is known to be short of `next`, so neither a long run nor a
  // far event overflows the millisecond count.
  const double allowed_ms = static_cast<double>(virtual_anchor_.millis()) + wall_seconds * speed_ * 1000.0;
  if (allowed_ms >= static_cast<double>(next.millis())) return {next, {}};
  const Duration allowed =
      std::clamp(Duration::FromMillis(static_cast<int64_t>(std::floor(std::max(allowed_ms, 0.0)))), now, next);
  // Wait until the wall clock allows the next event, at most kMaxWait at a time.
  const double wait_ms = std::ceil(static_cast<double>(next.millis() - allowed.millis()) / speed_);
  const auto wait = std::chrono::milliseconds(static_cast<int64_t>(std::min<double>(wait_ms, kMaxWait.count())));
  return {allowed, std::max(wait, std::chrono::milliseconds(1))};
}

}  // namespace gpufed::runtime

#include "bench/replay/metrics.h"

#include <cfenv>
#include <cmath>

namespace gpufed::replay {

int ArrivedLevel(double arrived_pct) {
  // nearbyint follows the current rounding mode, which is to-nearest-even unless
  // someone changed it; say so explicitly to match Python's round().
  const int old_mode = std::fegetround();
  std::fesetround(FE_TONEAREST);
  const double r = std::nearbyint(arrived_pct);
  std::fesetround(old_mode);
  if (!(r >= 0) || r > kMaxLevel) return -1;
  return static_cast<int>(r);
}

void LevelCurve::Record(int64_t arrived_milli, int64_t allocated_milli, int64_t capacity_milli) {
  const double cap = static_cast<double>(capacity_milli);
  const int level = ArrivedLevel(static_cast<double>(arrived_milli) * 100.0 / cap);
  if (level < 0) return;
  sum_[static_cast<size_t>(level)] += static_cast<double>(allocated_milli) * 100.0 / cap;
  ++count_[static_cast<size_t>(level)];
}

std::vector<double> LevelCurve::Levels() const {
  std::vector<double> out(kNumLevels, 0.0);
  double carry = 0;
  for (size_t l = 0; l < out.size(); ++l) {
    if (count_[l] > 0) carry = sum_[l] / static_cast<double>(count_[l]);
    out[l] = carry;
  }
  return out;
}

std::vector<double> MeanCurve(const std::vector<std::vector<double>>& curves) {
  if (curves.empty()) return {};
  std::vector<double> out(curves.front().size(), 0.0);
  for (const auto& c : curves) {
    for (size_t i = 0; i < out.size() && i < c.size(); ++i) out[i] += c[i];
  }
  for (double& v : out) v /= static_cast<double>(curves.size());
  return out;
}

}  // namespace gpufed::replay

#pragma once
// Allocation-versus-arrival curves, computed the way the FGD authors' merge
// script does: after every arrival (placed or failed) take arrived% (cumulative
// GPU request / capacity) and allocated% (GPU milli in use / capacity); the value
// at level L is the mean allocated% over arrivals whose arrived% rounds to L
// (half to even, as Python's round does).
//
// One deliberate difference: where the reference falls back to a +-1 window or
// leaves a gap for a level no arrival rounds to, we carry the previous level's
// value (0 before the first arrival), so every curve has all 131 levels.
#include <array>
#include <cstdint>
#include <vector>

namespace gpufed::replay {

inline constexpr int kMaxLevel = 130;
inline constexpr int kNumLevels = kMaxLevel + 1;

// Level of an arrived percentage, or -1 when outside 0..130.
int ArrivedLevel(double arrived_pct);

class LevelCurve {
 public:
  // Records the state after one arrival. capacity_milli must be > 0.
  void Record(int64_t arrived_milli, int64_t allocated_milli, int64_t capacity_milli);
  // Mean allocated% per level 0..130, gaps carried forward.
  std::vector<double> Levels() const;

 private:
  std::array<double, kNumLevels> sum_{};
  std::array<int64_t, kNumLevels> count_{};
};

// Element-wise mean of equally long curves (one per seed). Empty input -> empty.
std::vector<double> MeanCurve(const std::vector<std::vector<double>>& curves);

}  // namespace gpufed::replay

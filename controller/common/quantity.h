#pragma once
// Kubernetes-style quantities ("80Gi", "500m", "2", "1.5", "4G") held exactly as
// milli-units in an int64. Binary suffixes Ki..Pi, decimal k..P, and m (milli).
// Exponent notation ("1e3") is accepted. Values beyond int64 milli-units are rejected.
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity FromMilli(int64_t milli) { return Quantity(milli); }
  static constexpr Quantity FromUnits(int64_t units) { return Quantity(units * 1000); }

  // Parses Kubernetes notation. Errors name what is wrong with the text.
  static Result<Quantity> Parse(std::string_view text);

  constexpr int64_t milli() const { return milli_; }
  // Whole units, rounded up (a quantity of 500m CPU needs one whole core's slot).
  constexpr int64_t units_ceil() const { return (milli_ + 999) / 1000; }
  double units() const { return static_cast<double>(milli_) / 1000.0; }
  // Canonical text: binary suffix when exact ("80Gi"), else plain or milli ("500m").
  std::string ToString() const;

  friend constexpr auto operator<=>(Quantity, Quantity) = default;
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.milli_ + b.milli_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.milli_ - b.milli_); }

 private:
  constexpr explicit Quantity(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

inline constexpr int64_t kGiB = int64_t{1} << 30;
inline constexpr int64_t kMiB = int64_t{1} << 20;

}  // namespace gpufed

#pragma once
// Kubernetes-style quantities ("80Gi", "500m", "2", "1.5", "4G", "1.5e3") held as
// milli-units in an int64.
//
// Grammar: [+-] digits [. digits] (suffix | exponent), at most kMaxTextLength characters;
// suffixes m, k, M, G, T, P, E (decimal) and Ki, Mi, Gi, Ti, Pi, Ei (binary); exponent
// `e`/`E` [+-] digits, any size (1e-400 and 1e400 are read, then judged by value).
//
// Range: |value| <= INT64_MAX milli-units. INT64_MIN is out of range, so a quantity can
// always be negated. Anything larger, at any step (digits, exponent, suffix), is an error.
//
// Finer than a milli-unit: Kubernetes rounds such amounts up ("0.1m will be rounded up
// to 1m"), and so does Parse, away from zero, for amounts of at least 1m: "1.0001" is
// 1001m, "1.5m" is 2m, "-1.0001" is -1001m. A non-zero amount below 1m ("0.0001",
// "1e-128", "0.5m") is an error rather than 1m: rounding would inflate it at least
// two-fold (10^125-fold for 1e-128), which is a typo far more often than a wish.
// Exact amounts (every amount whose milli-units are whole) are never changed.
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

class Quantity {
 public:
  static constexpr size_t kMaxTextLength = 64;

  constexpr Quantity() = default;
  static constexpr Quantity FromMilli(int64_t milli) { return Quantity(milli); }
  // Saturates at +-INT64_MAX milli-units.
  static constexpr Quantity FromUnits(int64_t units) {
    int64_t milli = 0;
    if (__builtin_mul_overflow(units, int64_t{1000}, &milli)) return Quantity(units < 0 ? -kMax : kMax);
    return Quantity(milli);
  }

  // Parses the grammar above. Errors (InvalidArgument) quote the text and say what is
  // wrong: no digits, unknown suffix, out of range, below 1m, too long.
  static Result<Quantity> Parse(std::string_view text);

  constexpr int64_t milli() const { return milli_; }
  // Whole units, rounded up (a quantity of 500m CPU needs one whole core's slot).
  constexpr int64_t units_ceil() const { return milli_ / 1000 + (milli_ % 1000 > 0 ? 1 : 0); }
  double units() const { return static_cast<double>(milli_) / 1000.0; }
  // Canonical text: binary suffix when exact ("80Gi"), else plain or milli ("500m").
  // Parse reads it back to the same value.
  std::string ToString() const;

  friend constexpr auto operator<=>(Quantity, Quantity) = default;
  // Sums and differences saturate at +-INT64_MAX milli-units instead of overflowing.
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Saturate(a.milli_, b.milli_, false); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Saturate(a.milli_, b.milli_, true); }

 private:
  static constexpr int64_t kMax = INT64_MAX;
  constexpr explicit Quantity(int64_t milli) : milli_(milli) {}
  static constexpr Quantity Saturate(int64_t a, int64_t b, bool subtract) {
    int64_t out = 0;
    const bool overflow = subtract ? __builtin_sub_overflow(a, b, &out) : __builtin_add_overflow(a, b, &out);
    if (overflow) return Quantity(a < 0 ? -kMax : kMax);
    return Quantity(out == INT64_MIN ? -kMax : out);
  }
  int64_t milli_ = 0;
};

inline constexpr int64_t kGiB = int64_t{1} << 30;
inline constexpr int64_t kMiB = int64_t{1} << 20;

}  // namespace gpufed

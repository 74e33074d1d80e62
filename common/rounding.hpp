// SPDX-License-Identifier: MIT
#pragma once
// Rounding without libm. The gpurent executable links only libc: loading libm.so costs every
// start about 14 page faults and a fifth of a millisecond (docs/benchmarks.md, "Start-up"), and
// these few functions are all gpurent needed from it.
#include <cstdint>
#include <limits>

namespace gpurent {

inline constexpr double k_two_pow_52 = 4503599627370496.0;  // every double at or above is an integer

// Like std::round: halves away from zero. NaN and infinities come back unchanged.
[[nodiscard]] constexpr double round_half_away(double x) noexcept
{
  if (!(x < k_two_pow_52 && x > -k_two_pow_52)) {
    return x;
  }
  double t = static_cast<double>(static_cast<std::int64_t>(x));  // truncated toward zero
  const double rest = x - t;                                       // exact for |x| < 2^52
  if (rest >= 0.5) {
    t += 1.0;
  } else if (rest <= -0.5) {
    t -= 1.0;
  }
  return t;
}

// Like std::ceil for finite values; NaN and infinities come back unchanged.
[[nodiscard]] constexpr double ceil_up(double x) noexcept
{
  if (!(x < k_two_pow_52 && x > -k_two_pow_52)) {
    return x;
  }
  double t = static_cast<double>(static_cast<std::int64_t>(x));
  if (t < x) {
    t += 1.0;
  }
  return t;
}

// Like std::llround, but saturating at the int64 limits and 0 for NaN instead of undefined.
[[nodiscard]] constexpr std::int64_t round_to_i64(double x) noexcept
{
  if (x != x) {
    return 0;
  }
  if (x >= 9.2233720368547758e18) {
    return std::numeric_limits<std::int64_t>::max();
  }
  if (x <= -9.2233720368547758e18) {
    return std::numeric_limits<std::int64_t>::min();
  }
  return static_cast<std::int64_t>(round_half_away(x));
}

// `v` rounded to `decimals` places (0..9), halves away from zero.
[[nodiscard]] constexpr double round_to_places(double v, int decimals) noexcept
{
  double scale = 1.0;
  for (int i = 0; i < decimals && i < 9; ++i) {
    scale *= 10.0;
  }
  return round_half_away(v * scale) / scale;
}

}  // namespace gpurent

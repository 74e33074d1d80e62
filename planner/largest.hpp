// SPDX-License-Identifier: MIT
#pragma once
// A binary search the planner runs for the most of something that still works (the context a
// recipe keeps, the sequences a server holds).
#include <cstdint>
#include <optional>

namespace gpurent {

// The largest v in [lo, hi] with ok(v), `ok` true up to some point and false after it; nullopt
// when it fails at lo.
template <class F>
std::optional<std::uint32_t> largest(std::uint32_t lo, std::uint32_t hi, F ok)
{
  if (lo > hi || !ok(lo)) {
    return std::nullopt;
  }
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo + 1) / 2;
    if (ok(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace gpurent

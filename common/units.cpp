// SPDX-License-Identifier: MIT
#include "common/units.hpp"

#include "common/rounding.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace gpurent {

Bytes gib_to_bytes(double gib) noexcept
{
  if (!(gib > 0.0)) {
    return Bytes{0};
  }
  const double bytes = round_half_away(gib * static_cast<double>(k_gib));
  if (bytes >= 1.8e19) {
    return Bytes{UINT64_MAX};
  }
  return Bytes{static_cast<std::uint64_t>(bytes)};
}

double round2(double v) noexcept { return round_to_places(v, 2); }

std::string format_bytes(std::uint64_t b)
{
  const double v = static_cast<double>(b);
  char buf[48];
  if (b >= k_gib) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", v / static_cast<double>(k_gib));
  } else if (b >= k_mib) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", v / static_cast<double>(k_mib));
  } else if (b >= k_kib) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", v / static_cast<double>(k_kib));
  } else {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  }
  return buf;
}

MicroUsd round_to_cents(MicroUsd m) noexcept
{
  const std::int64_t cent = k_micro_per_unit / 100;
  const std::int64_t sign = m.n < 0 ? -1 : 1;
  const std::int64_t a = std::llabs(m.n);
  return MicroUsd{sign * ((a + cent / 2) / cent) * cent};
}

std::string format_usd(MicroUsd m, int decimals)
{
  if (decimals < 0) {
    decimals = 0;
  }
  if (decimals > 6) {
    decimals = 6;
  }
  std::int64_t scale = 1;
  for (int i = 0; i < 6 - decimals; ++i) {
    scale *= 10;
  }
  const bool negative = m.n < 0;
  std::int64_t a = std::llabs(m.n);
  a = (a + scale / 2) / scale;  // now in units of 10^-decimals
  std::int64_t unit_scale = 1;
  for (int i = 0; i < decimals; ++i) {
    unit_scale *= 10;
  }
  char buf[64];
  if (decimals == 0) {
    std::snprintf(buf, sizeof buf, "%s$%lld", negative ? "-" : "", static_cast<long long>(a));
  } else {
    std::snprintf(buf, sizeof buf, "%s$%lld.%0*lld", negative ? "-" : "", static_cast<long long>(a / unit_scale),
                  decimals, static_cast<long long>(a % unit_scale));
  }
  return buf;
}

double to_units(MicroUsd m, int decimals) noexcept
{
  const double v = static_cast<double>(m.n) / static_cast<double>(k_micro_per_unit);
  return round_to_places(v, decimals);
}

}  // namespace gpurent

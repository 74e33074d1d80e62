// SPDX-License-Identifier: MIT
#pragma once
// Integer value types: bytes and money are never floating point.
#include <compare>
#include <cstdint>
#include <string>

namespace gpurent {

struct Bytes {
  std::uint64_t n = 0;
  auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const noexcept { return Bytes{n + o.n}; }
  constexpr Bytes operator-(Bytes o) const noexcept { return Bytes{n > o.n ? n - o.n : 0}; }
  constexpr Bytes& operator+=(Bytes o) noexcept { n += o.n; return *this; }
};

inline constexpr std::uint64_t k_kib = 1024ULL;
inline constexpr std::uint64_t k_mib = 1024ULL * 1024ULL;
inline constexpr std::uint64_t k_gib = 1024ULL * 1024ULL * 1024ULL;

// GiB (2^30) as a double, for display and JSON only.
[[nodiscard]] constexpr double to_gib(Bytes b) noexcept { return static_cast<double>(b.n) / static_cast<double>(k_gib); }
[[nodiscard]] Bytes gib_to_bytes(double gib) noexcept;  // rounds to nearest byte, clamps negatives to 0
// Rounded to 2 decimals, as the text views and --json print sizes.
[[nodiscard]] double round2(double v) noexcept;
// "512 B", "1.5 KiB", "20.0 MiB", "1.25 GiB": a size for people (progress and reports).
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// Money in millionths of the currency unit (micro-USD).
struct MicroUsd {
  std::int64_t n = 0;
  auto operator<=>(const MicroUsd&) const = default;
  constexpr MicroUsd operator+(MicroUsd o) const noexcept { return MicroUsd{n + o.n}; }
  constexpr MicroUsd& operator+=(MicroUsd o) noexcept { n += o.n; return *this; }
};

inline constexpr std::int64_t k_micro_per_unit = 1'000'000;
// "$1.23"-style rendering with the given number of decimals (rounded half up).
[[nodiscard]] std::string format_usd(MicroUsd m, int decimals = 2);
// Exact decimal value for JSON (e.g. 1.234567), rounded to `decimals`.
[[nodiscard]] double to_units(MicroUsd m, int decimals = 6) noexcept;
// Rounds to whole cents (half up), used wherever a bill is shown "exact to the cent".
[[nodiscard]] MicroUsd round_to_cents(MicroUsd m) noexcept;

}  // namespace gpurent

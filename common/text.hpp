// SPDX-License-Identifier: MIT
#pragma once
// Small pure string helpers shared by parsers.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

[[nodiscard]] std::string to_lower(std::string_view s);
[[nodiscard]] std::string_view trim(std::string_view s) noexcept;
[[nodiscard]] std::vector<std::string_view> split(std::string_view s, char sep);
[[nodiscard]] bool iequals(std::string_view a, std::string_view b) noexcept;
// Lower-case and drop everything but letters and digits: "RTX-4090 " -> "rtx4090".
[[nodiscard]] std::string normalize_key(std::string_view s);
// Strict decimal parsing: the whole string must be a finite number.
[[nodiscard]] std::optional<double> parse_double(std::string_view s) noexcept;

// The grammar of std::from_chars for doubles in fixed or scientific form: an optional '-',
// digits with at most one '.', at least one digit, an optional exponent ("e-3"). No spaces,
// no '+', no hex, no inf/nan. Parsed with strtod in the "C" locale, which gpurent never
// changes, instead of std::from_chars, whose libstdc++ 12 implementation pulls in libm.
struct Decimal {
  double value = 0.0;
  bool out_of_range = false;  // overflow or underflow: `value` is then not to be used
};
[[nodiscard]] std::optional<Decimal> parse_decimal(std::string_view s) noexcept;
[[nodiscard]] std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept;

}  // namespace gpurent

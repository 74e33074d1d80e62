// SPDX-License-Identifier: MIT
#pragma once
// Small pure string helpers shared by parsers.
#include <cstdint>
#include <expected>
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
// Whether a name given on the command line or in a file is printable ASCII (no control byte, no
// byte >= 0x80): card and provider names are, and normalize_key would otherwise drop such bytes
// silently (`$'\xfflambda\x01'` read as `lambda`).
[[nodiscard]] bool printable_ascii(std::string_view s) noexcept;
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

// Durations as the flags take them: "1h30m", "90s", "2d" (whole numbers, each followed by s, m, h
// or d). A number with no unit is `bare_unit` seconds when it is the whole text, and seconds after
// a unit ("1h30") when `trailing_seconds`; otherwise malformed. A part above 10,000,000 is too long.
enum class DurationError { empty, malformed, too_long, zero };
[[nodiscard]] std::expected<std::int64_t, DurationError> read_duration(std::string_view text, std::int64_t bare_unit,
                                                                       bool trailing_seconds) noexcept;

// Whether text may use UTF-8 glyphs: the first set of LC_ALL, LC_CTYPE, LANG (as POSIX orders
// them) names a UTF-8 codeset ("en_US.UTF-8", "C.utf8"). None set is the "C" locale: ASCII.
[[nodiscard]] bool locale_is_utf8(std::string_view lc_all, std::string_view lc_ctype, std::string_view lang) noexcept;

// The glyphs of a bar chart: a filled cell and a cell before the bar starts.
struct BarGlyphs {
  std::string_view filled;
  std::string_view before;
};
[[nodiscard]] constexpr BarGlyphs bar_glyphs(bool utf8) noexcept
{
  return utf8 ? BarGlyphs{"\u2588", "\u00b7"} : BarGlyphs{"#", "."};
}

}  // namespace gpurent

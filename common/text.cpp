// SPDX-License-Identifier: MIT
#include "common/text.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace gpurent {

std::string to_lower(std::string_view s)
{
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string_view trim(std::string_view s) noexcept
{
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep)
{
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

bool iequals(std::string_view a, std::string_view b) noexcept
{
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool printable_ascii(std::string_view s) noexcept
{
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      return false;
    }
  }
  return true;
}

std::string normalize_key(std::string_view s)
{
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      out.push_back(static_cast<char>(std::tolower(u)));
    }
  }
  return out;
}

namespace {

bool is_decimal_digit(char c) noexcept { return c >= '0' && c <= '9'; }

bool matches_decimal_grammar(std::string_view s) noexcept
{
  std::size_t p = 0;
  if (p < s.size() && s[p] == '-') {
    ++p;
  }
  std::size_t digits = 0;
  while (p < s.size() && is_decimal_digit(s[p])) {
    ++p;
    ++digits;
  }
  if (p < s.size() && s[p] == '.') {
    ++p;
    while (p < s.size() && is_decimal_digit(s[p])) {
      ++p;
      ++digits;
    }
  }
  if (digits == 0) {
    return false;
  }
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) {
      ++p;
    }
    const std::size_t exponent_start = p;
    while (p < s.size() && is_decimal_digit(s[p])) {
      ++p;
    }
    if (p == exponent_start) {
      return false;
    }
  }
  return p == s.size();
}

}  // namespace

std::optional<Decimal> parse_decimal(std::string_view s) noexcept
{
  if (!matches_decimal_grammar(s)) {
    return std::nullopt;
  }
  // strtod needs a terminated string; numbers longer than the buffer are not plausible input.
  char buffer[128];
  if (s.size() >= sizeof buffer) {
    return std::nullopt;
  }
  std::memcpy(buffer, s.data(), s.size());
  buffer[s.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(buffer, &end);
  if (end != buffer + s.size()) {
    return std::nullopt;
  }
  // strtod also says ERANGE for a subnormal result; like std::from_chars, only overflow and an
  // underflow to zero count as out of range.
  return Decimal{v, errno == ERANGE && (std::isinf(v) || v == 0.0)};
}

std::optional<double> parse_double(std::string_view s) noexcept
{
  const auto d = parse_decimal(trim(s));
  if (!d || d->out_of_range || !std::isfinite(d->value)) {
    return std::nullopt;
  }
  return d->value;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept
{
  s = trim(s);
  if (s.empty()) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  const auto* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || ptr != end) {
    return std::nullopt;
  }
  return v;
}

bool locale_is_utf8(std::string_view lc_all, std::string_view lc_ctype, std::string_view lang) noexcept
{
  std::string_view value = !lc_all.empty() ? lc_all : (!lc_ctype.empty() ? lc_ctype : lang);
  const auto dot = value.find('.');
  if (dot == std::string_view::npos) {
    return false;
  }
  std::string_view codeset = value.substr(dot + 1);
  codeset = codeset.substr(0, codeset.find('@'));  // "de_DE.UTF-8@euro"
  return iequals(codeset, "utf-8") || iequals(codeset, "utf8");
}

}  // namespace gpurent

namespace gpurent {

std::expected<std::int64_t, DurationError> read_duration(std::string_view text, std::int64_t bare_unit,
                                                         bool trailing_seconds) noexcept
{
  std::int64_t total = 0;
  std::int64_t cur = -1;
  bool any_unit = false;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > 10'000'000) {
        return std::unexpected(DurationError::too_long);
      }
      continue;
    }
    const std::int64_t unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : 0;
    if (unit == 0 || cur < 0) {
      return std::unexpected(DurationError::malformed);
    }
    total += cur * unit;
    cur = -1;
    any_unit = true;
  }
  if (cur >= 0) {
    if (any_unit && !trailing_seconds) {
      return std::unexpected(DurationError::malformed);
    }
    total += any_unit ? cur : cur * bare_unit;
  } else if (!any_unit) {
    return std::unexpected(DurationError::empty);
  }
  if (total <= 0) {
    return std::unexpected(DurationError::zero);
  }
  return total;
}

}  // namespace gpurent

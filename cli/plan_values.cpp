// SPDX-License-Identifier: MIT
// The value parsers of `gpurent plan` (cli/plan_options.hpp): parameter counts, hours, GPU memory
// utilization, prices, context lengths and counts, each read exactly as a decimal.
#include <fmt/format.h>

#include <limits>

#include "cli/plan_options.hpp"
#include "common/text.hpp"

namespace gpurent {
namespace {


// A decimal number m x 10^e read exactly: digits, an optional fraction, an optional exponent.
struct Decimal {
  std::uint64_t mantissa = 0;
  int exp10 = 0;
};

std::optional<Decimal> read_decimal(std::string_view s)
{
  Decimal d;
  std::size_t i = 0;
  int digits = 0;
  int significant = 0;
  bool dot = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') {
      break;
    }
    ++digits;
    if (d.mantissa == 0 && c == '0') {
      if (dot) {
        --d.exp10;
      }
      continue;
    }
    if (++significant > 18) {
      return std::nullopt;  // more precision than any of our values needs
    }
    d.mantissa = d.mantissa * 10 + static_cast<std::uint64_t>(c - '0');
    if (dot) {
      --d.exp10;
    }
  }
  if (digits == 0) {
    return std::nullopt;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      negative = s[i] == '-';
      ++i;
    }
    const auto exp = parse_u64(s.substr(i));
    if (!exp || *exp > 40) {
      return std::nullopt;
    }
    d.exp10 += negative ? -static_cast<int>(*exp) : static_cast<int>(*exp);
    i = s.size();
  }
  if (i != s.size()) {
    return std::nullopt;
  }
  return d;
}

struct Scaled {
  std::uint64_t value = 0;  // rounded toward zero
  bool exact = true;
  bool half_or_more = false;  // the dropped part was >= 0.5
};

// d x 10^scale as an integer; nullopt on overflow.
std::optional<Scaled> scale(Decimal d, int scale10)
{
  const int e = d.exp10 + scale10;
  Scaled r;
  if (e >= 0) {
    std::uint64_t v = d.mantissa;
    for (int k = 0; k < e && v != 0; ++k) {
      if (v > std::numeric_limits<std::uint64_t>::max() / 10) {
        return std::nullopt;
      }
      v *= 10;
    }
    r.value = v;
    return r;
  }
  if (-e > 19) {
    r.exact = d.mantissa == 0;
    return r;
  }
  std::uint64_t div = 1;
  for (int k = 0; k < -e; ++k) {
    div *= 10;
  }
  r.value = d.mantissa / div;
  const std::uint64_t rem = d.mantissa % div;
  r.exact = rem == 0;
  r.half_or_more = rem >= div - rem;
  return r;
}

std::string quoted(std::string_view s) { return fmt::format("'{}'", s); }

}  // namespace

namespace {

// A decimal count with an optional k/M/B/T suffix ("7B", "1.2B", "350M", "70e9"), rounded to the
// nearest whole; nullopt when it is not one; `huge` when it overflows.
struct ScaledCount {
  std::optional<std::uint64_t> value;
  bool huge = false;
};

ScaledCount read_scaled_count(std::string_view s)
{
  const std::string_view t = trim(s);
  if (t.empty()) {
    return {};
  }
  int suffix = 0;
  std::string_view number = t;
  switch (t.back()) {
  case 'k': case 'K': suffix = 3; break;
  case 'm': case 'M': suffix = 6; break;
  case 'b': case 'B': suffix = 9; break;
  case 't': case 'T': suffix = 12; break;
  default: break;
  }
  if (suffix != 0) {
    number = t.substr(0, t.size() - 1);
  }
  const auto d = read_decimal(number);
  if (!d) {
    return {};
  }
  const auto v = scale(*d, suffix);
  if (!v) {
    return {std::nullopt, true};
  }
  return {v->value + (v->half_or_more && !v->exact ? 1 : 0), false};
}

}  // namespace

Result<std::uint64_t> parse_param_count(std::string_view s)
{
  const ScaledCount c = read_scaled_count(s);
  if (c.huge) {
    return fail(Errc::usage, fmt::format("parameter count {} is absurdly large; the limit is 100T", quoted(s)));
  }
  if (!c.value) {
    return fail(Errc::usage, fmt::format("bad parameter count {}; write e.g. 7B, 8.03B, 350M, 1.5T or 70e9", quoted(s)));
  }
  const std::uint64_t n = *c.value;
  if (n < 1'000'000ULL || n > 100'000'000'000'000ULL) {
    return fail(Errc::usage, fmt::format("parameter count {} is out of range; give 1M to 100T (e.g. 7B)", quoted(s)));
  }
  return n;
}

Result<std::uint64_t> parse_token_count(std::string_view s, std::string_view flag)
{
  const ScaledCount c = read_scaled_count(s);
  if (!c.value || c.huge || *c.value == 0 || *c.value > 1'000'000'000'000'000ULL) {
    return fail(Errc::usage, fmt::format("{}: bad count {}; give 1 to 1000T, e.g. 50M, 1.2B or 10000", flag, quoted(s)));
  }
  return *c.value;
}

Result<double> parse_positive(std::string_view s, std::string_view flag, std::uint32_t most)
{
  const auto d = read_decimal(trim(s));
  const auto micro = d ? scale(*d, 6) : std::nullopt;
  if (!micro || !micro->exact) {
    return fail(Errc::usage, fmt::format("{}: bad number {}; give a positive number such as 10 or 2.5", flag, quoted(s)));
  }
  if (micro->value == 0 || micro->value > std::uint64_t{most} * 1'000'000ULL) {
    return fail(Errc::usage, fmt::format("{}: {} out of range; give more than 0 and at most {}", flag, quoted(s), most));
  }
  return static_cast<double>(micro->value) / 1e6;
}

Result<RankBy> parse_rank_by(std::string_view s)
{
  const std::string v = to_lower(trim(s));
  if (v == "cost") {
    return RankBy::cost;
  }
  if (v == "time") {
    return RankBy::time;
  }
  if (v == "hourly") {
    return RankBy::hourly;
  }
  return fail(Errc::usage, fmt::format("--rank-by: {} is not a ranking; use cost, time or hourly", quoted(s)));
}

Result<std::chrono::seconds> parse_deadline(std::string_view s)
{
  const std::string_view t = trim(s);
  if (read_decimal(t)) {
    auto h = parse_hours(t);
    if (!h) {
      return fail(Errc::usage, "--deadline: " + h.error().message);
    }
    return *h;
  }
  // 1h30m, 90m, 45s, 2d: whole numbers with units (a number after a unit is an error).
  const auto total = read_duration(t, 3600, false);
  if (!total || *total > 87'600LL * 3600LL) {
    return fail(Errc::usage, fmt::format("--deadline: bad duration {}; write e.g. 6h, 90m, 1h30m or 2d (at most "
                                         "87600 h)",
                                         quoted(s)));
  }
  return std::chrono::seconds{*total};
}

Result<std::chrono::seconds> parse_hours(std::string_view s)
{
  const auto d = read_decimal(trim(s));
  const auto micro_hours = d ? scale(*d, 6) : std::nullopt;
  if (!micro_hours) {
    return fail(Errc::usage, fmt::format("bad number of hours {}; write e.g. 1, 0.5 or 36", quoted(s)));
  }
  const std::uint64_t mh = micro_hours->value + (micro_hours->exact ? 0 : 1);  // round up: never under-bill
  if (mh == 0 || mh > 87'600'000'000ULL) {
    return fail(Errc::usage, fmt::format("hours {} out of range; give more than 0 and at most 87600", quoted(s)));
  }
  // 1 hour = 3600 s = 3600 / 1e6 s per micro-hour: round up to the next whole second.
  const std::uint64_t secs = (mh * 36 + 9'999) / 10'000;
  return std::chrono::seconds{static_cast<std::int64_t>(secs)};
}

Result<std::uint32_t> parse_gpu_util(std::string_view s)
{
  const auto d = read_decimal(trim(s));
  const auto v = d ? scale(*d, 3) : std::nullopt;
  if (!v) {
    return fail(Errc::usage, fmt::format("bad GPU memory utilization {}; write a fraction such as 0.9", quoted(s)));
  }
  const std::uint64_t permille = v->value + (v->half_or_more && !v->exact ? 1 : 0);
  if (permille == 0 || permille > 1000) {
    return fail(Errc::usage, fmt::format("GPU memory utilization {} out of range; give a fraction above 0 and at "
                                         "most 1 (e.g. 0.9)",
                                         quoted(s)));
  }
  return static_cast<std::uint32_t>(permille);
}

Result<MicroUsd> parse_usd_per_hour(std::string_view s)
{
  std::string_view t = trim(s);
  if (!t.empty() && t.front() == '$') {
    t.remove_prefix(1);
  }
  const auto d = read_decimal(t);
  const auto v = d ? scale(*d, 6) : std::nullopt;
  if (!v) {
    return fail(Errc::usage, fmt::format("bad price {}; write USD per hour, e.g. 2.50", quoted(s)));
  }
  if (v->value == 0 || v->value > 100'000ULL * k_micro_per_unit) {
    return fail(Errc::usage, fmt::format("price {} out of range; give more than $0 and at most $100000 per hour",
                                         quoted(s)));
  }
  return MicroUsd{static_cast<std::int64_t>(v->value)};
}

Result<std::uint32_t> parse_context(std::string_view s)
{
  std::string_view t = trim(s);
  std::uint64_t unit = 1;
  if (!t.empty() && (t.back() == 'k' || t.back() == 'K')) {
    unit = 1024;
    t.remove_suffix(1);
  }
  const auto n = parse_u64(t);
  if (!n || *n == 0 || *n > (16ULL << 20) / unit) {
    return fail(Errc::usage, fmt::format("bad context length {}; give tokens per sequence from 1 to 16M, e.g. "
                                         "8192 or 8k",
                                         quoted(s)));
  }
  return static_cast<std::uint32_t>(*n * unit);
}

Result<std::uint32_t> parse_count(std::string_view s, std::string_view flag, std::uint32_t lo, std::uint32_t hi)
{
  const auto n = parse_u64(trim(s));
  if (!n || *n < lo || *n > hi) {
    return fail(Errc::usage, fmt::format("{} {}: give a whole number from {} to {}", flag, quoted(s), lo, hi));
  }
  return static_cast<std::uint32_t>(*n);
}

}  // namespace gpurent

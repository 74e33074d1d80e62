// SPDX-License-Identifier: MIT
// The libm-free rounding and decimal parsing (common/rounding.hpp, parse_decimal) against the
// standard library they replace, over edge cases and random values.
#include <catch2/catch.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "common/rounding.hpp"
#include "common/text.hpp"

using namespace gpurent;

namespace {

bool same_double(double a, double b)
{
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b);
  }
  return a == b;  // -0.0 == 0.0: gpurent's rounding may return +0 where std::round gives -0
}

}  // namespace

TEST_CASE("round_half_away and ceil_up agree with std::round and std::ceil", "[common][rounding]")
{
  const double edges[] = {0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994,
                          4503599627370495.5, -4503599627370495.5, 4503599627370496.0, 1e300, -1e300,
                          std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::denorm_min(), 1e-300};
  for (const double x : edges) {
    INFO(x);
    CHECK(same_double(round_half_away(x), std::round(x)));
    CHECK(same_double(ceil_up(x), std::ceil(x)));
  }
  std::mt19937_64 rng(20261130);
  std::uniform_real_distribution<double> wide(-1e7, 1e7);
  std::uniform_int_distribution<int> halves(-20000, 20000);
  for (int i = 0; i < 20000; ++i) {
    const double x = wide(rng);
    const double h = halves(rng) / 2.0;  // exact halves, where rounding direction matters
    INFO(x << " " << h);
    REQUIRE(same_double(round_half_away(x), std::round(x)));
    REQUIRE(same_double(round_half_away(h), std::round(h)));
    REQUIRE(same_double(ceil_up(x), std::ceil(x)));
    REQUIRE(round_to_i64(x) == std::llround(x));
  }
}

TEST_CASE("round_to_i64 saturates and maps NaN to 0", "[common][rounding]")
{
  CHECK(round_to_i64(1e30) == std::numeric_limits<std::int64_t>::max());
  CHECK(round_to_i64(-1e30) == std::numeric_limits<std::int64_t>::min());
  CHECK(round_to_i64(std::numeric_limits<double>::quiet_NaN()) == 0);
  CHECK(round_to_i64(2.5) == 3);
  CHECK(round_to_i64(-2.5) == -3);
  CHECK(round_to_i64(0.07 * 1e6) == 70000);
}

TEST_CASE("round_to_places rounds halves away from zero", "[common][rounding]")
{
  CHECK(round_to_places(1.2345, 2) == 1.23);
  CHECK(round_to_places(23.655, 1) == 23.7);
  CHECK(round_to_places(-0.125, 2) == -0.13);
  CHECK(round_to_places(7.0, 0) == 7.0);
}

TEST_CASE("parse_decimal accepts exactly what std::from_chars accepts, with the same value", "[common][text]")
{
  const char* samples[] = {"0", "-0", "1", "1.", ".5", "-.5", "1.25e3", "1E-3", "1e+2", "12345678901234567890",
                           "1e309", "1e-400", "4.9e-324", "", "-", ".", "e5", "1e", "1e+", "+1", " 1", "1 ",
                           "1.2.3", "0x10", "inf", "nan", "1,5", "--1", "1e5.5"};
  for (const char* s : samples) {
    INFO(s);
    const std::string_view text(s);
    double expected = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), expected);
    const bool std_ok = ptr == text.data() + text.size() && !text.empty() &&
                        (ec == std::errc{} || ec == std::errc::result_out_of_range) && !std::isinf(expected) &&
                        text.find_first_of("in") == std::string_view::npos;
    const auto got = parse_decimal(text);
    CHECK(got.has_value() == std_ok);
    if (got && std_ok) {
      CHECK(got->out_of_range == (ec == std::errc::result_out_of_range));
      if (!got->out_of_range) {
        CHECK(got->value == expected);
      }
    }
  }
  std::mt19937_64 rng(7);
  const char alphabet[] = "0123456789.-eE+";
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::strlen(alphabet)) - 1);
  std::uniform_int_distribution<int> length(1, 12);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    const int n = length(rng);
    for (int k = 0; k < n; ++k) {
      s += alphabet[pick(rng)];
    }
    INFO(s);
    double expected = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), expected);
    const bool std_ok = ptr == s.data() + s.size() && (ec == std::errc{} || ec == std::errc::result_out_of_range);
    const auto got = parse_decimal(s);
    REQUIRE(got.has_value() == std_ok);
    if (got && ec == std::errc{}) {
      REQUIRE_FALSE(got->out_of_range);
      REQUIRE(got->value == expected);
    }
  }
}

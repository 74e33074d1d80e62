// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "common/result.hpp"
#include "common/text.hpp"
#include "common/units.hpp"

using namespace gpurent;

TEST_CASE("format_usd: rounds half up to the asked decimals", "[common][units]")
{
  CHECK(format_usd(MicroUsd{1'234'567}) == "$1.23");
  CHECK(format_usd(MicroUsd{1'235'000}) == "$1.24");
  CHECK(format_usd(MicroUsd{20'000}, 2) == "$0.02");
  CHECK(format_usd(MicroUsd{-1'500'000}, 0) == "-$2");
  CHECK(format_usd(MicroUsd{1}, 6) == "$0.000001");
}

TEST_CASE("round_to_cents: half up, symmetric", "[common][units]")
{
  CHECK(round_to_cents(MicroUsd{4'999}).n == 0);
  CHECK(round_to_cents(MicroUsd{5'000}).n == 10'000);
  CHECK(round_to_cents(MicroUsd{-5'000}).n == -10'000);
}

TEST_CASE("gib_to_bytes: rounds and clamps", "[common][units]")
{
  CHECK(gib_to_bytes(1.0).n == k_gib);
  CHECK(gib_to_bytes(-5.0).n == 0);
  CHECK(to_gib(Bytes{k_gib / 2}) == Approx(0.5));
}

TEST_CASE("parse_double: the whole string must be a finite number", "[common][text]")
{
  CHECK(parse_double(" 1.5 ").value() == Approx(1.5));
  CHECK_FALSE(parse_double("1.5x").has_value());
  CHECK_FALSE(parse_double("1e309").has_value());
  CHECK_FALSE(parse_double("").has_value());
  CHECK(normalize_key("RTX-4090 24GB") == "rtx409024gb");
}

TEST_CASE("exit_code_for: the contract's exit codes", "[common][result]")
{
  CHECK(exit_code_for(Errc::invalid_input) == 2);  // malformed input: JSON code "usage"
  CHECK(exit_code_for(Errc::usage) == 2);
  CHECK(exit_code_for(Errc::refused) == 3);
  CHECK(exit_code_for(Errc::partial) == 4);
}

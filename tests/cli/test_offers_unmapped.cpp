// SPDX-License-Identifier: MIT
// `gpurent offers --unmapped`: the market snapshot's names that map to no card, per cloud, with
// their row counts and reasons; --provider takes any cloud of the catalogue.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace gpurent;

TEST_CASE("offers --unmapped: the snapshot's names without a card per cloud with the reason", "[cli][offers][market]")
{
  const auto text = test::run_cli({"offers", "--unmapped"});
  INFO(text.err);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("never guessed") != std::string::npos);
  CHECK(text.out.find("\nrunpod (snapshot 2026-12-05)\n") != std::string::npos);
  CHECK(text.out.find("  MI300X                 12 rows  AMD: gpurent is CUDA-only\n") != std::string::npos);

  const auto j = test::run_cli({"offers", "--unmapped", "--json", "--provider", "nebius"});
  REQUIRE(j.code == 0);
  CHECK(nlohmann::json::parse(j.out)["unmapped"].empty());  // every nebius name maps
  const auto lambda = test::run_cli({"offers", "--unmapped", "--json", "--provider", "lambda"});
  REQUIRE(lambda.code == 0);
  const auto rows = nlohmann::json::parse(lambda.out)["unmapped"];
  REQUIRE_FALSE(rows.empty());
  bool a100 = false;
  for (const auto& r : rows) {
    CHECK(r["cloud"] == "lambda");
    CHECK(r["price_source"] == "snapshot");
    CHECK(r["rows"].get<int>() > 0);
    a100 = a100 || (r["accelerator_name"] == "A100" && r["reason"].get<std::string>().find("PCIe or SXM4") != std::string::npos);
  }
  CHECK(a100);  // Lambda's gpu_Nx_a100 does not say its form factor: listed, not guessed

  const auto none = test::run_cli({"offers", "--unmapped", "--provider", "nebius"});
  CHECK(none.out == "every accelerator name of the market catalogue for nebius maps to a card\n");
  const auto bad = test::run_cli({"offers", "--unmapped", "--provider", "nocloud"});
  CHECK(bad.code == 2);
}

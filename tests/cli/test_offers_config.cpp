// SPDX-License-Identifier: MIT
// The config file extends the built-in offers (data/offers.json): [prices.<provider>] prices a
// shape the file does not have, for a built-in card the provider does not list and for a card of
// the user's own ([cards.<id>]); offers, cost and plan all see it, marked as the config's.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "cli_harness.hpp"

using namespace gpurent;
namespace fs = std::filesystem;

namespace {

const nlohmann::json* find_row(const nlohmann::json& rows, const std::string& card, int gpus)
{
  for (const auto& r : rows) {
    if (r["card"] == card && r["gpus"] == gpus) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("Offers from config: a card outside the built-in listing, and a user's card", "[cli][offers]")
{
  const fs::path dir = fs::temp_directory_path() / ("gpurent-offers-config-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "config.toml";
  std::ofstream(file) << "[cards.my-gpu]\nusable_gib = 60\ncompute_capability = \"9.0\"\nlabel_gb = 64\n"
                         "[prices.lambda]\nh200 = 3.99\n\"h100-sxmx8\" = 23.92\n"
                         "[prices.cloudgpu]\n\"my-gpu\" = 1.25\n";
  const std::map<std::string, std::string> env{{"GPURENT_CONFIG", file.string()}};

  const auto offers = test::run_cli({"offers", "--json", "--provider", "lambda"}, env);
  INFO(offers.err);
  REQUIRE(offers.code == 0);
  const auto rows = nlohmann::json::parse(offers.out)["offers"];
  const auto* h200 = find_row(rows, "h200", 1);
  REQUIRE(h200 != nullptr);  // h200 is not in lambda's "cards" in data/offers.json
  CHECK((*h200)["price_per_hour"] == 3.99);
  CHECK((*h200)["price_origin"] == "config");
  const auto* eight = find_row(rows, "h100-sxm", 8);
  REQUIRE(eight != nullptr);
  CHECK((*eight)["price_per_hour"] == 23.92);
  const auto* a10 = find_row(rows, "a10", 1);
  REQUIRE(a10 != nullptr);
  CHECK((*a10)["price_origin"] == "snapshot 2026-12-05");  // the market snapshot's (newer than data/offers.json's)

  const auto own = test::run_cli({"offers", "--json", "--provider", "cloudgpu"}, env);
  REQUIRE(own.code == 0);
  const auto own_rows = nlohmann::json::parse(own.out)["offers"];
  const auto* mine = find_row(own_rows, "my-gpu", 1);
  REQUIRE(mine != nullptr);
  CHECK((*mine)["price_per_hour"] == 1.25);

  const auto cost = test::run_cli({"cost", "--json", "--provider", "lambda", "--card", "h200", "--hours", "2"}, env);
  INFO(cost.err);
  REQUIRE(cost.code == 0);
  CHECK(nlohmann::json::parse(cost.out)["total"] == 7.98);

  const auto plan = test::run_cli({"plan", "llama-3.1-8b", "--provider", "lambda", "--json"}, env);
  INFO(plan.err);
  REQUIRE(plan.code == 0);
  bool planned = false;
  const auto options = nlohmann::json::parse(plan.out)["options"];
  for (const auto& o : options) {
    planned = planned || (o["card"] == "h200" && o["provider"] == "lambda");
  }
  CHECK(planned);
  fs::remove_all(dir);
}

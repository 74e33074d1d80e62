// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli_harness.hpp"

using namespace gpurent;
namespace fs = std::filesystem;

namespace {

std::string golden(const std::string& name)
{
  std::ifstream f(std::string(GPURENT_TEST_DATA) + "/golden/" + name);
  REQUIRE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

nlohmann::json json_of(const std::vector<std::string>& args, std::map<std::string, std::string> env = {})
{
  auto all = args;
  all.emplace_back("--json");
  const auto r = test::run_cli(all, std::move(env));
  INFO(r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("CostCommand: gpucloud text view (golden)", "[cli][cost]")
{
  const auto r = test::run_cli({"cost", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--gpus", "8", "--hours",
                                "1.5", "--stopped-hours", "2", "--hibernated-hours", "10", "--price", "10"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == golden("cost_gpucloud.txt"));
  CHECK(r.err.empty());
}

TEST_CASE("CostCommand: runpod built-in price, text view (golden)", "[cli][cost]")
{
  const auto r = test::run_cli({"cost", "--provider", "runpod", "--card", "RTX 4090", "--gpus", "2", "--hours", "1.25",
                                "--stopped-hours", "3"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out == golden("cost_runpod.txt"));
}

TEST_CASE("CostCommand: JSON keys and exact charges", "[cli][cost]")
{
  const auto j = json_of({"cost", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--gpus", "8", "--hours", "1.5",
                          "--stopped-hours", "2", "--hibernated-hours", "10", "--price", "10"});
  for (const char* k : {"provider", "card", "gpus", "price_per_hour", "billing", "running", "stopped", "hibernated",
                        "total", "currency", "notes"}) {
    CHECK(j.contains(k));
  }
  CHECK(j["provider"] == "gpucloud");
  CHECK(j["card"] == "rtx-pro-6000");
  CHECK(j["gpus"] == 8);
  CHECK(j["price_per_hour"] == 10.0);
  CHECK(j["billing"]["increment_s"] == 3600);
  CHECK(j["billing"]["minimum_s"] == 3600);
  CHECK(j["billing"]["charged_at_deploy_s"] == 3600);
  CHECK(j["running"]["billed_s"] == 7200);
  CHECK(j["running"]["cost"] == 20.0);
  CHECK(j["stopped"]["billed_s"] == 7200);
  CHECK(j["stopped"]["cost"] == 20.0);
  CHECK(j["hibernated"]["billed_s"] == 36000);
  CHECK(j["hibernated"]["cost"] == 0.2);
  CHECK(j["total"] == 40.2);
  CHECK(j["currency"] == "USD");
  CHECK(j["price_origin"] == "--price");

  // cloudgpu: 61 s -> 2 min at $0.60/h = $0.02
  const auto c = json_of({"cost", "--provider", "cloudgpu", "--card", "4090", "--hours", "0.016944444", "--price", "0.6"});
  CHECK(c["running"]["billed_s"] == 120);
  CHECK(c["total"] == 0.02);
  CHECK(c["billing"]["increment_s"] == 60);
  CHECK(c["billing"]["minimum_s"] == 60);

  // RunPod from the market snapshot (data/market/snapshot/runpod.csv): L4 $0.44/h, no spot;
  // RTX 4090 $0.69/h, spot $0.34.
  const auto rp = json_of({"cost", "--provider", "runpod", "--card", "l4", "--hours", "2"});
  CHECK(rp["price_origin"] == "snapshot 2026-12-05");
  CHECK(rp["total"] == 0.88);
  const auto spot = json_of({"cost", "--provider", "runpod", "--card", "rtx-4090", "--hours", "2", "--spot"});
  CHECK(spot["total"] == 0.68);
}

TEST_CASE("CostCommand: config price overrides are used and named", "[cli][cost]")
{
  const fs::path dir = fs::temp_directory_path() / ("gpurent-cost-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "config.toml";
  std::ofstream(file) << "[prices.gpucloud]\n\"rtx-pro-6000x8\" = 14.4\n[prices.runpod]\nl4 = 0.5\n";
  const std::map<std::string, std::string> env{{"GPURENT_CONFIG", file.string()}};
  const auto j = json_of({"cost", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--gpus", "8", "--hours", "0.1"}, env);
  CHECK(j["price_origin"] == "config");
  CHECK(j["total"] == 14.4);
  const auto r = json_of({"cost", "--provider", "runpod", "--card", "l4", "--hours", "2"}, env);
  CHECK(r["total"] == 1.0);
  const auto text = test::run_cli({"cost", "--provider", "runpod", "--card", "l4", "--hours", "2"}, env);
  CHECK_THAT(text.out, Catch::Contains("price: from the config file " + file.string()));
  fs::remove_all(dir);
}

TEST_CASE("CostCommand: refusals and usage errors", "[cli][cost]")
{
  const auto hib = test::run_cli({"cost", "--provider", "cloudgpu", "--card", "rtx-4090", "--hours", "1",
                                  "--hibernated-hours", "1", "--price", "0.5"});
  CHECK(hib.code == 3);
  CHECK_THAT(hib.err, Catch::Contains("cloudgpu has no hibernate state"));
  CHECK(hib.out.empty());
  const auto spot = test::run_cli({"cost", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--hours", "1",
                                   "--hibernated-hours", "1", "--spot", "--price", "1"});
  CHECK(spot.code == 3);
  CHECK_THAT(spot.err, Catch::Contains("Spot machine cannot be hibernated"));
  const auto stop = test::run_cli({"cost", "--provider", "lambda", "--card", "a10", "--hours", "1", "--stopped-hours",
                                   "1"});
  CHECK(stop.code == 3);
  for (const auto& hours : {"-1", "nan", "abc", "1e9", ""}) {
    const auto bad = test::run_cli({"cost", "--provider", "runpod", "--card", "l4", "--hours", hours});
    INFO(hours);
    CHECK(bad.code == 2);
    CHECK(bad.out.empty());
  }
  const auto gpus = test::run_cli({"cost", "--provider", "runpod", "--card", "l4", "--gpus", "9", "--hours", "1"});
  CHECK(gpus.code == 2);
  const auto card = test::run_cli({"cost", "--provider", "runpod", "--card", "a100", "--hours", "1"});
  CHECK(card.code == 2);
  CHECK_THAT(card.err, Catch::Contains("ambiguous"));
  const auto small = test::run_cli({"cost", "--provider", "gpucloud", "--card", "rtx-4090", "--hours", "1", "--price",
                                    "1"});
  CHECK(small.code == 3);  // the provider does not have that card
  CHECK_THAT(small.err, Catch::Contains("48 GB"));
  const auto noprice = test::run_cli({"cost", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--hours", "1"});
  CHECK(noprice.code == 1);
  CHECK_THAT(noprice.err, Catch::Contains("--price"));
  CHECK_THAT(noprice.err, Catch::Contains("[prices.gpucloud]"));
  const auto missing = test::run_cli({"cost", "--provider", "runpod", "--card", "l4"});
  CHECK(missing.code == 2);
  // A card the cloud does not price: the cards it does price, each once (the market has a row per
  // region: the list once named Lambda's A10 eighteen times).
  const auto unpriced = test::run_cli({"cost", "--provider", "lambda", "--card", "rtx-5090", "--hours", "1"});
  CHECK(unpriced.code == 1);
  CHECK_THAT(unpriced.err, Catch::Contains("(priced x1: a10, "));
  CHECK(unpriced.err.find("a10, a10,") == std::string::npos);  // "a10, a100-40gb-sxm" is fine
}

TEST_CASE("OffersCommand: lists offers with origin, filters, JSON", "[cli][offers]")
{
  const auto j = json_of({"offers"});
  REQUIRE(j["offers"].is_array());
  bool gpucloud_listed = false;
  for (const auto& o : j["offers"]) {
    for (const char* k : {"provider", "card", "vram_gib", "label_gb", "gpus", "price_per_hour", "spot_price_per_hour",
                          "billing_increment_s", "region", "price_origin"}) {
      CHECK(o.contains(k));
    }
    if (o["provider"] == "gpucloud") {
      gpucloud_listed = true;
      CHECK(o["price_per_hour"].is_null());
      CHECK(o["region"] == "canada-montreal");
      CHECK(o["billing_increment_s"] == 3600);
    }
  }
  CHECK(gpucloud_listed);
  const auto big = json_of({"offers", "--min-vram", "70", "--provider", "runpod"});
  for (const auto& o : big["offers"]) {
    CHECK(o["vram_gib"].get<double>() >= 70.0);
    CHECK(o["provider"] == "runpod");
  }
  CHECK_FALSE(big["offers"].empty());
  const auto spot = json_of({"offers", "--spot"});
  for (const auto& o : spot["offers"]) {
    CHECK_FALSE(o["spot_price_per_hour"].is_null());
  }
  const auto text = test::run_cli({"offers", "--provider", "cloudgpu"});
  CHECK(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("cloudgpu: per-minute (1 min increments, 1 min minimum)"));
  CHECK_THAT(text.out, Catch::Contains("no price"));
  std::istringstream lines(text.out);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 80);
  }
  const auto bad = test::run_cli({"offers", "--provider", "acme"});
  CHECK(bad.code == 2);
}

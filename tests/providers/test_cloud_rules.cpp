// SPDX-License-Identifier: MIT
// Billing per cloud as data (cli.md plan v4 "The whole market"): every cloud key of the market
// has a ProviderInfo with a sourced rule, or "unknown" billed per started hour.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "providers/cloud_rules.hpp"
#include "providers/cost.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

TEST_CASE("Market clouds: every cloud key has a provider entry, and only the adapters are rentable",
          "[providers][market]")
{
  const char* keys[] = {"aws",       "gcp",    "lambda", "runpod",    "vast",    "nebius",
                        "hyperbolic", "primeintellect", "shadeform", "cudo", "seeweb", "mithril",
                        "simplepod", "verda", "jarvislabs", "gpucloud", "cloudgpu"};
  for (const char* key : keys) {
    INFO(key);
    const auto p = find_provider(key);
    REQUIRE(p.has_value());
    CHECK(p->name == key);
    CHECK_FALSE(p->billing_source.empty());
    const bool adapter = p->name == "lambda" || p->name == "runpod" || p->name == "vast";
    CHECK(p->rentable() == adapter);
    CHECK(p->max_gpus >= 1);
  }
  for (const auto& p : market_cloud_rules()) {
    INFO(p.name);
    CHECK_FALSE(p.per_gpu_servers);  // catalogue rows are exact shapes
    CHECK_FALSE(p.has_api);
    if (billing_known(p)) {
      // A published rule: where it was read, the words it says, the day.
      CHECK(p.billing_source.starts_with("https://"));
      CHECK(p.billing_source.find('"') != std::string::npos);
      CHECK(p.billing_source.find("2026-12-05") != std::string::npos);
    } else {
      CHECK(p.billing_label == "hourly (assumed)");
      CHECK(p.billing.increment == 3600s);
    }
  }
  CHECK(market_cloud_rules().size() == 12);
  CHECK_FALSE(find_provider("acme").has_value());
}

TEST_CASE("Market clouds: each bills a run under its own rule", "[providers][market]")
{
  const MicroUsd per_hour{3'600'000};  // $3.60/h: $0.001 a second
  // AWS: per second with a 60-second minimum.
  const auto aws = find_provider("aws");
  REQUIRE(aws.has_value());
  CHECK(aws->billing.charge(per_hour, 30s) == MicroUsd{60'000});
  CHECK(aws->billing.charge(per_hour, 90s) == MicroUsd{90'000});
  // Nebius: per second, no minimum.
  const auto nebius = find_provider("nebius");
  REQUIRE(nebius.has_value());
  CHECK(nebius->billing.charge(per_hour, 30s) == MicroUsd{30'000});
  CHECK(nebius->stopped.available);
  CHECK_FALSE(nebius->stopped.bills_full_rate);
  // No published rule (shadeform): each started hour, and the bill says so.
  const auto shadeform = find_provider("shadeform");
  REQUIRE(shadeform.has_value());
  CHECK_FALSE(billing_known(*shadeform));
  CHECK(shadeform->billing_source == k_billing_unknown);
  CHECK(shadeform->billing.charge(per_hour, 61s) == per_hour);
  CHECK(shadeform->billing.charge(per_hour, 3601s) == MicroUsd{2 * per_hour.n});
  Offer o;
  o.provider = "shadeform";
  o.card = "h100-sxm";
  o.price_per_hour = per_hour;
  const auto bill = compute_cost(*shadeform, o, false, 600s, 0s, 0s);
  REQUIRE(bill.has_value());
  CHECK(bill->total == per_hour);
  REQUIRE_FALSE(bill->notes.empty());
  CHECK(bill->notes.front().starts_with("billing unknown: shadeform"));
  const auto aws_bill = compute_cost(*aws, o, false, 600s, 0s, 0s);
  REQUIRE(aws_bill.has_value());
  for (const auto& n : aws_bill->notes) {
    CHECK_FALSE(n.starts_with("billing unknown"));
  }
}

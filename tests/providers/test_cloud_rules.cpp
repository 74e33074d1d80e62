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

namespace {

// The host part of the first URL in a billing source ("https://HOST/..." up to the next '/').
std::string source_host(const std::string& source)
{
  const std::string scheme = "https://";
  if (!source.starts_with(scheme)) {
    return "";
  }
  const auto end = source.find('/', scheme.size());
  return source.substr(scheme.size(), end == std::string::npos ? std::string::npos : end - scheme.size());
}

// A rule read from the cloud's own material: it names the cloud's own site first, quotes it, and
// says the day it was read.
void check_own_source(const ProviderInfo& p, const std::string& host, const std::string& path_prefix = "")
{
  INFO(p.name << ": " << p.billing_source);
  CHECK(billing_known(p));
  CHECK(source_host(p.billing_source) == host);
  if (!path_prefix.empty()) {
    CHECK(p.billing_source.starts_with("https://" + host + path_prefix));
  }
  CHECK(p.billing_source.find('"') != std::string::npos);
  CHECK(p.billing_source.find("read 2026-12-05") != std::string::npos);
}

}  // namespace

TEST_CASE("Billing rules: gcp bills per second after a one-minute minimum, from Google's own pricing page",
          "[cloud_rules]")
{
  const auto gcp = find_provider("gcp");
  REQUIRE(gcp.has_value());
  check_own_source(*gcp, "cloud.google.com", "/compute/vm-instance-pricing");
  CHECK(gcp->billing.increment == 1s);
  CHECK(gcp->billing.minimum == 60s);
  CHECK(gcp->billing_label == "per-second");
  const MicroUsd per_hour{3'600'000};  // $0.001 a second
  CHECK(gcp->billing.charge(per_hour, 30s) == MicroUsd{60'000});
  CHECK(gcp->billing.charge(per_hour, 61s) == MicroUsd{61'000});
  // Stopped: the VM's usage stops, its disks and static IPs keep billing (Google's API reference).
  CHECK(gcp->stopped.available);
  CHECK_FALSE(gcp->stopped.bills_full_rate);
  CHECK(gcp->stopped.fixed_per_hour == MicroUsd{0});
  CHECK(gcp->stopped.keeps.find("persistent disks") != std::string::npos);
  CHECK(gcp->stopped.storage_note.find("googleapis.dev") != std::string::npos);
}

TEST_CASE("Billing rules: cudo bills to the second with no minimum, from CUDO's own billing docs", "[cloud_rules]")
{
  const auto cudo = find_provider("cudo");
  REQUIRE(cudo.has_value());
  check_own_source(*cudo, "www.cudocompute.com", "/docs/billing");
  CHECK(cudo->billing.increment == 1s);
  CHECK(cudo->billing.minimum == 0s);
  CHECK(cudo->billing_label == "per-second");
  CHECK(cudo->billing.charge(MicroUsd{3'600'000}, 30s) == MicroUsd{30'000});
  // CUDO publishes no rule for a stopped VM: stopping is refused in `cost`, never guessed.
  CHECK_FALSE(cudo->stopped.available);
}

TEST_CASE("Billing rules: jarvislabs bills per minute (its own GitHub organisation) and a paused instance keeps "
          "its storage billing",
          "[cloud_rules]")
{
  const auto jl = find_provider("jarvislabs");
  REQUIRE(jl.has_value());
  check_own_source(*jl, "github.com", "/jarvislabsai");
  CHECK(jl->billing.increment == 60s);
  CHECK(jl->billing.minimum == 0s);
  CHECK(jl->billing_label == "per-minute");
  const MicroUsd per_hour{3'600'000};
  CHECK(jl->billing.charge(per_hour, 1s) == MicroUsd{60'000});   // a started minute
  CHECK(jl->billing.charge(per_hour, 61s) == MicroUsd{120'000});  // two started minutes
  CHECK(jl->stopped.available);
  CHECK_FALSE(jl->stopped.bills_full_rate);
  CHECK(jl->stopped.keeps.find("storage") != std::string::npos);
  CHECK(jl->stopped.storage_note.find("github.com/jarvislabsai/jarvislabs/") != std::string::npos);
}

TEST_CASE("Billing rules: the clouds gpurent rents quote their own billing pages", "[cloud_rules]")
{
  const MicroUsd per_hour{3'600'000};
  SECTION("lambda: one-minute increments")
  {
    const auto p = find_provider("lambda");
    REQUIRE(p.has_value());
    check_own_source(*p, "docs.lambda.ai", "/public-cloud/billing");
    CHECK(p->billing.increment == 60s);
    CHECK(p->billing.minimum == 60s);
    CHECK(p->billing.charge(per_hour, 61s) == MicroUsd{120'000});
  }
  SECTION("runpod: per second")
  {
    const auto p = find_provider("runpod");
    REQUIRE(p.has_value());
    check_own_source(*p, "docs.runpod.io", "/accounts-billing/billing");
    CHECK(p->billing.increment == 1s);
    CHECK(p->billing.minimum == 0s);
    CHECK(p->billing.charge(per_hour, 30s) == MicroUsd{30'000});
  }
  SECTION("vast: per second")
  {
    const auto p = find_provider("vast");
    REQUIRE(p.has_value());
    check_own_source(*p, "docs.vast.ai", "/guides/reference/billing");
    CHECK(p->billing.increment == 1s);
    CHECK(p->billing.minimum == 0s);
    CHECK(p->billing.charge(per_hour, 30s) == MicroUsd{30'000});
  }
}

TEST_CASE("Billing rules: clouds whose own material states no rule stay unknown, billed per started hour",
          "[cloud_rules]")
{
  for (const char* key : {"hyperbolic", "primeintellect", "shadeform", "seeweb", "mithril", "simplepod", "verda"}) {
    INFO(key);
    const auto p = find_provider(key);
    REQUIRE(p.has_value());
    CHECK_FALSE(billing_known(*p));
    CHECK(p->billing.increment == 3600s);
    CHECK(p->billing_label == "hourly (assumed)");
    CHECK_FALSE(p->stopped.available);
  }
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "providers/billing.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"

using namespace gpurent;
using std::chrono::seconds;

namespace {
const ProviderInfo& provider(const char* name)
{
  static std::vector<ProviderInfo> cache;
  cache.push_back(*find_provider(name));
  return cache.back();
}
constexpr MicroUsd usd(std::int64_t dollars) { return MicroUsd{dollars * 1'000'000}; }
}  // namespace

TEST_CASE("BillingPolicy: gpucloud bills whole hours, the first one at deploy", "[providers][billing]")
{
  const auto& b = provider("gpucloud").billing;
  CHECK(b.billed_seconds(seconds{0}) == seconds{3600});
  CHECK(b.billed_seconds(seconds{1}) == seconds{3600});
  CHECK(b.billed_seconds(seconds{3600}) == seconds{3600});
  CHECK(b.billed_seconds(seconds{61 * 60}) == seconds{7200});
  CHECK(b.charge(usd(2), seconds{1}) == usd(2));
  CHECK(b.charge(usd(2), seconds{61 * 60}) == usd(4));
}

TEST_CASE("BillingPolicy: cloudgpu bills minutes, rounded up, 1-minute minimum", "[providers][billing]")
{
  const auto& b = provider("cloudgpu").billing;
  CHECK(b.billed_seconds(seconds{1}) == seconds{60});
  CHECK(b.billed_seconds(seconds{60}) == seconds{60});
  CHECK(b.billed_seconds(seconds{61}) == seconds{120});
  // $0.60/h = $0.01/min
  CHECK(b.charge(MicroUsd{600'000}, seconds{1}).n == 10'000);
  CHECK(b.charge(MicroUsd{600'000}, seconds{61}).n == 20'000);
}

TEST_CASE("BillingPolicy: per-second providers round up to the micro-dollar", "[providers][billing]")
{
  const auto& b = provider("runpod").billing;
  CHECK(b.billed_seconds(seconds{1}) == seconds{1});
  CHECK(b.charge(MicroUsd{600'000}, seconds{1}).n == 167);  // 166.67 rounded up
  CHECK(b.charge(MicroUsd{1}, seconds{1}).n == 1);
  CHECK(b.charge(MicroUsd{600'000}, seconds{3600}).n == 600'000);
  CHECK(b.charge(MicroUsd{600'000}, seconds{0}).n == 0);
  CHECK(provider("vast").billing.billed_seconds(seconds{7}) == seconds{7});
  CHECK(provider("lambda").billing.billed_seconds(seconds{7}) == seconds{60});
}

TEST_CASE("BillingPolicy: charge is monotonic and exact on whole increments", "[providers][billing]")
{
  for (const auto& p : provider_catalog()) {
    INFO(p.name);
    MicroUsd last{0};
    for (std::int64_t s = 0; s < 3 * 3600; s += 37) {
      const MicroUsd c = p.billing.charge(MicroUsd{1'234'567}, seconds{s});
      CHECK(c >= last);
      last = c;
      CHECK(p.billing.billed_seconds(seconds{s}).count() % p.billing.increment.count() == 0);
    }
    // 100000 h at $100000/h does not overflow
    CHECK(p.billing.charge(MicroUsd{100'000LL * 1'000'000}, seconds{100'000LL * 3600}).n == 10'000'000'000LL * 1'000'000);
  }
}

TEST_CASE("Catalog: provider facts from the seeds and providers.md", "[providers][billing]")
{
  const auto& g = provider("gpucloud");
  CHECK(g.stopped.available);
  CHECK(g.stopped.bills_full_rate);
  CHECK(g.hibernated.available);
  CHECK(g.hibernated.fixed_per_hour.n == 20'000);
  CHECK_FALSE(g.hibernated.allowed_on_spot);
  CHECK(g.min_card_gb == 48);
  CHECK(g.max_gpus == 8);
  CHECK(g.default_region == "canada-montreal");
  CHECK_FALSE(g.has_api);
  const auto& c = provider("cloudgpu");
  CHECK_FALSE(c.stopped.available);
  CHECK_FALSE(c.hibernated.available);
  CHECK(c.hibernated.unavailable_reason.find("destroy") != std::string::npos);
  CHECK_FALSE(provider("lambda").stopped.available);
  CHECK(provider("runpod").stopped.available);
  CHECK_FALSE(provider("runpod").stopped.bills_full_rate);
  CHECK(provider("vast").spot_available);
  CHECK(find_provider("GPU Cloud")->name == "gpucloud");
  const auto bad = find_provider("acme");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("gpucloud") != std::string::npos);
}

TEST_CASE("Catalog: every built-in offer is dated and names a known card and provider", "[providers][billing]")
{
  for (const auto& o : builtin_offers()) {
    INFO(o.provider << " " << o.card << " x" << o.gpus);
    CHECK(find_card(o.card).has_value());
    CHECK(o.price_per_hour.n > 0);
    CHECK(o.gpus >= 1);
    if (o.price_source == "snapshot") {
      // The market snapshot (data/market/): any cloud of the catalogue, its own shapes; a spot
      // price above on demand is kept and flagged.
      CHECK(o.price_origin == "snapshot " + o.price_date);
      CHECK(o.spot_above_on_demand == (o.spot_price_per_hour && *o.spot_price_per_hour > o.price_per_hour));
      continue;
    }
    CHECK(find_provider(o.provider).has_value());
    CHECK(o.price_origin.rfind("built-in 20", 0) == 0);
    CHECK(o.gpus <= find_provider(o.provider)->max_gpus);
    if (o.spot_price_per_hour) {
      CHECK(*o.spot_price_per_hour < o.price_per_hour);
    }
  }
  CHECK(increment_label(seconds{3600}) == "1 h");
  CHECK(increment_label(seconds{60}) == "1 min");
  CHECK(increment_label(seconds{1}) == "1 s");
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "providers/cost.hpp"
#include "providers/offers.hpp"

using namespace gpurent;
using std::chrono::seconds;

namespace {
Offer offer(const char* provider, const char* card, std::uint32_t gpus, std::int64_t micro,
            std::optional<std::int64_t> spot = std::nullopt)
{
  Offer o;
  o.provider = provider;
  o.card = card;
  o.gpus = gpus;
  o.price_per_hour = MicroUsd{micro};
  if (spot) {
    o.spot_price_per_hour = MicroUsd{*spot};
  }
  o.price_origin = "test";
  return o;
}
}  // namespace

TEST_CASE("Cost: gpucloud stopped time bills the full rate, hibernate $0.02/h", "[providers][cost]")
{
  const auto p = *find_provider("gpucloud");
  const auto o = offer("gpucloud", "rtx-pro-6000", 8, 10'000'000);  // $10/h
  const auto b = compute_cost(p, o, false, seconds{5400}, seconds{7200}, seconds{36000});
  REQUIRE(b.has_value());
  CHECK(b->running.billed == seconds{7200});
  CHECK(b->running.cost.n == 20'000'000);
  CHECK(b->stopped.billed == seconds{7200});
  CHECK(b->stopped.cost.n == 20'000'000);
  CHECK(b->hibernated.billed == seconds{36000});
  CHECK(b->hibernated.cost.n == 200'000);
  CHECK(b->total.n == 40'200'000);
  const auto has = [&](std::string_view s) {
    for (const auto& n : b->notes) {
      if (n.find(s) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  CHECK(has("first 1 h charged at deploy"));
  CHECK(has("stopped servers bill the full rate on gpucloud"));
  CHECK(has("keeps the disk"));
}

TEST_CASE("Cost: a 1-second run still pays the deploy hour, 30 min hibernated is one hour", "[providers][cost]")
{
  const auto p = *find_provider("gpucloud");
  const auto o = offer("gpucloud", "rtx-pro-6000", 1, 1'250'000);
  const auto b = compute_cost(p, o, false, seconds{1}, seconds{0}, seconds{1800});
  REQUIRE(b.has_value());
  CHECK(b->running.cost.n == 1'250'000);
  CHECK(b->hibernated.cost.n == 20'000);
  CHECK(b->total.n == 1'270'000);
}

TEST_CASE("Cost: states a provider lacks are refused with the reason", "[providers][cost]")
{
  const auto c = *find_provider("cloudgpu");
  const auto o = offer("cloudgpu", "rtx-4090", 1, 600'000);
  const auto hib = compute_cost(c, o, false, seconds{60}, seconds{0}, seconds{60});
  REQUIRE_FALSE(hib.has_value());
  CHECK(hib.error().code == Errc::refused);
  CHECK(hib.error().message.find("no hibernate") != std::string::npos);
  const auto stop = compute_cost(c, o, false, seconds{60}, seconds{1}, seconds{0});
  REQUIRE_FALSE(stop.has_value());
  CHECK(stop.error().code == Errc::refused);
  CHECK(stop.error().message.find("no stop") != std::string::npos);
  // zero time in a missing state is fine
  CHECK(compute_cost(c, o, false, seconds{61}, seconds{0}, seconds{0})->total.n == 20'000);

  const auto g = *find_provider("gpucloud");
  const auto spot = offer("gpucloud", "rtx-pro-6000", 1, 2'000'000, 1'000'000);
  const auto s = compute_cost(g, spot, true, seconds{3600}, seconds{0}, seconds{3600});
  REQUIRE_FALSE(s.has_value());
  CHECK(s.error().code == Errc::refused);
  CHECK(s.error().message.find("Spot machine cannot be hibernated") != std::string::npos);
  // spot without hibernation: the spot rate applies, also to stopped time
  const auto ok = compute_cost(g, spot, true, seconds{3600}, seconds{3600}, seconds{0});
  REQUIRE(ok.has_value());
  CHECK(ok->total.n == 2'000'000);

  const auto l = *find_provider("lambda");
  const auto lo = offer("lambda", "a10", 1, 860'000);
  CHECK(compute_cost(l, lo, true, seconds{60}, seconds{0}, seconds{0}).error().code == Errc::unsupported);
  CHECK(compute_cost(l, lo, false, seconds{60}, seconds{60}, seconds{0}).error().code == Errc::refused);
  const auto r = *find_provider("runpod");
  CHECK(compute_cost(r, offer("runpod", "l4", 1, 780'000), true, seconds{60}, seconds{0}, seconds{0}).error().code ==
        Errc::not_found);
  CHECK(compute_cost(r, offer("runpod", "l4", 1, 780'000), false, seconds{-1}, seconds{0}, seconds{0}).error().code ==
        Errc::usage);
}

TEST_CASE("Cost: per-second stopped time costs no GPU, storage is noted", "[providers][cost]")
{
  const auto r = *find_provider("runpod");
  const auto o = offer("runpod", "rtx-4090", 2, 1'200'000);
  const auto b = compute_cost(r, o, false, seconds{90 * 60}, seconds{3600}, seconds{0});
  REQUIRE(b.has_value());
  CHECK(b->running.cost.n == 1'800'000);
  CHECK(b->stopped.cost.n == 0);
  bool noted = false;
  for (const auto& n : b->notes) {
    noted = noted || n.find("$0.20/GB-month") != std::string::npos;
  }
  CHECK(noted);
}

TEST_CASE("Cost: each state is rounded to the cent and the total is their sum", "[providers][cost]")
{
  const auto c = *find_provider("cloudgpu");
  // $0.69/h: 2 minutes = $0.023 -> $0.02
  const auto b = compute_cost(c, offer("cloudgpu", "rtx-5090", 1, 690'000), false, seconds{61}, seconds{0}, seconds{0});
  REQUIRE(b.has_value());
  CHECK(b->running.exact.n == 23'000);
  CHECK(b->running.cost.n == 20'000);
  CHECK(b->total.n == 20'000);
}

TEST_CASE("Cost: cost_per_hour_in each state", "[providers][cost]")
{
  const auto g = *find_provider("gpucloud");
  const auto o = offer("gpucloud", "rtx-pro-6000", 8, 10'000'000, 6'000'000);
  CHECK(cost_per_hour_in(g, o, ServerState::running, false).n == 10'000'000);
  CHECK(cost_per_hour_in(g, o, ServerState::running, true).n == 6'000'000);
  CHECK(cost_per_hour_in(g, o, ServerState::stopped, false).n == 10'000'000);
  CHECK(cost_per_hour_in(g, o, ServerState::hibernated, false).n == 20'000);
  const auto c = *find_provider("cloudgpu");
  CHECK(cost_per_hour_in(c, o, ServerState::stopped, false).n == 0);
  CHECK(cost_per_hour_in(*find_provider("runpod"), o, ServerState::stopped, false).n == 0);
}

TEST_CASE("Offers: merge keeps origins, config wins over fetched over built-in", "[providers][offers]")
{
  const std::vector<Offer> builtin{offer("runpod", "l4", 1, 780'000), offer("runpod", "a100-80gb", 1, 2'100'000)};
  auto fetched = std::vector<Offer>{offer("runpod", "l4", 1, 700'000), offer("vast", "rtx-4090", 1, 300'000)};
  fetched[0].price_origin = "fetched";
  auto over = std::vector<Offer>{offer("runpod", "l4", 1, 650'000)};
  over[0].price_origin = "config";
  const auto m = merge_offers(builtin, over, fetched);
  REQUIRE(m.size() == 3);
  CHECK(m[0].card == "a100-80gb");
  CHECK(m[1].card == "l4");
  CHECK(m[1].price_per_hour.n == 650'000);
  CHECK(m[1].price_origin == "config");
  CHECK(m[2].provider == "vast");
  const auto m2 = merge_offers(builtin, {}, fetched);
  CHECK(find_offer(m2, "runpod", "l4", 1)->price_origin == "fetched");
  CHECK(find_offer(m2, "runpod", "l4", 2) == nullptr);
}

TEST_CASE("Offers: price overrides are validated", "[providers][offers]")
{
  const auto a = make_price_override("gpucloud", "rtx-pro-6000x8", 12.5);
  REQUIRE(a.has_value());
  CHECK(a->gpus == 8);
  CHECK(a->card == "rtx-pro-6000");
  CHECK(a->price_per_hour.n == 12'500'000);
  CHECK(a->price_origin == "config");
  CHECK(a->region == "canada-montreal");
  const auto plain = make_price_override("cloudgpu", "RTX 4090", 0.69);
  REQUIRE(plain.has_value());
  CHECK(plain->gpus == 1);
  CHECK(plain->card == "rtx-4090");
  const auto spaced = make_price_override("runpod", "a100-80gb x 2", 4.2);
  REQUIRE(spaced.has_value());
  CHECK(spaced->gpus == 2);
  const auto big = make_price_override("cloudgpu", "rtx-4090-48gbx4", 3.0);
  REQUIRE(big.has_value());
  CHECK(big->card == "rtx-4090-48gb");
  CHECK(big->gpus == 4);
  const auto pro = make_price_override("gpucloud", "rtx-pro-6000", 1.6);
  REQUIRE(pro.has_value());
  CHECK(pro->gpus == 1);
  CHECK_FALSE(make_price_override("acme", "rtx-4090", 1.0).has_value());
  CHECK_FALSE(make_price_override("runpod", "voodoo", 1.0).has_value());
  CHECK_FALSE(make_price_override("gpucloud", "rtx-4090", 1.0).has_value());  // 24 GB < 48 GB
  CHECK_FALSE(make_price_override("runpod", "l4x9", 1.0).has_value());
  CHECK_FALSE(make_price_override("runpod", "l4x0", 1.0).has_value());
  CHECK_FALSE(make_price_override("runpod", "l4", 0.0).has_value());
  CHECK_FALSE(make_price_override("runpod", "l4", -1.0).has_value());
  CHECK_FALSE(make_price_override("runpod", "l4", 1e9).has_value());
}

// SPDX-License-Identifier: MIT
// Ranking rules of `gpurent plan`, on hand-built cards, providers, offers and estimates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <vector>

#include "planner/rank.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

namespace {

Card make_card(std::string id, std::uint32_t label_gb, double usable_gib)
{
  Card c;
  c.id = std::move(id);
  c.display = c.id;
  c.label_gb = label_gb;
  c.usable = gib_to_bytes(usable_gib);
  return c;
}

// 24 GB: limit 22.4675 GiB; 48 GB: limit 42.5 GiB; 80 GB: limit 75.24 GiB.
const std::vector<Card> k_cards = {make_card("c24", 24, 23.65), make_card("c48", 48, 44.74), make_card("c80", 80, 79.2)};

ProviderInfo make_provider(std::string name, std::chrono::seconds increment, std::chrono::seconds minimum,
                           std::chrono::seconds at_deploy, std::uint32_t max_gpus, std::uint32_t min_card_gb,
                           bool per_gpu_servers)
{
  ProviderInfo p;
  p.per_gpu_servers = per_gpu_servers;
  p.name = std::move(name);
  p.billing = BillingPolicy{increment, minimum, at_deploy};
  p.spot_billing = p.billing;
  p.max_gpus = max_gpus;
  p.min_card_gb = min_card_gb;
  p.billing_label = increment == 3600s ? "hourly" : "per-minute";
  return p;
}

const std::vector<ProviderInfo> k_providers = {
    make_provider("hourly", 3600s, 0s, 3600s, 8, 48, false),  // first hour at deploy, cards from 48 GB, listed shapes
    make_provider("minute", 60s, 60s, 0s, 8, 0, true),        // per minute, 1-minute minimum, any GPU count
    make_provider("small", 1s, 0s, 0s, 2, 0, true),           // per second, at most 2 GPUs per server
};

Offer make_offer(std::string provider, std::string card, std::uint32_t gpus, std::int64_t micro_per_hour,
                 std::optional<std::int64_t> spot = std::nullopt)
{
  Offer o;
  o.provider = std::move(provider);
  o.card = std::move(card);
  o.gpus = gpus;
  o.price_per_hour = MicroUsd{micro_per_hour};
  if (spot) {
    o.spot_price_per_hour = MicroUsd{*spot};
  }
  o.price_origin = "built-in test";
  return o;
}

// A job whose weights split evenly over the GPUs, plus 1 GiB of overhead per GPU.
Estimator split_estimator(double weights_gib)
{
  return [weights_gib](const JobSpec& j) {
    MemoryEstimate m;
    m.weights = gib_to_bytes(weights_gib / j.gpus);
    m.overhead = Bytes{k_gib};
    return m;
  };
}

JobSpec infer_job()
{
  JobSpec j;
  j.task = Task::infer;
  return j;
}

}  // namespace

TEST_CASE("default_shard: fsdp for training, tp (or layer) for inference, none on one GPU", "[providers][plan]")
{
  CHECK(default_shard(Task::infer, Engine::transformers, 1) == Shard::none);
  CHECK(default_shard(Task::train, Engine::transformers, 1) == Shard::none);
  CHECK(default_shard(Task::serve, Engine::vllm, 2) == Shard::tp);
  CHECK(default_shard(Task::serve, Engine::sglang, 2) == Shard::tp);
  // transformers (device_map="auto"), llama.cpp and ollama split by layer, not by tensor.
  CHECK(default_shard(Task::infer, Engine::transformers, 4) == Shard::layer);
  CHECK(default_shard(Task::infer, Engine::llama_cpp, 2) == Shard::layer);
  CHECK(default_shard(Task::lora, Engine::torchtune, 2) == Shard::fsdp);
  CHECK(default_shard(Task::train, Engine::deepspeed, 8) == Shard::zero3);
  const JobSpec j = job_for_gpus(infer_job(), 4, Shard::none);
  CHECK(j.gpus == 4);
  CHECK(j.shard == Shard::none);
}

TEST_CASE("expand_offers: a per-GPU provider's 1-GPU listing scales to every count within its max, others sell only what they list", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c24", 1, 400'000, 200'000),  // per-GPU price: 1..8
      make_offer("hourly", "c48", 1, 1'000'000),         // listed sizes only
      make_offer("hourly", "c48", 2, 1'900'000),
      make_offer("hourly", "c80", 1, 2'500'000),         // listed with one GPU only: no 8 x the 1-GPU price
      make_offer("hourly", "c24", 1, 300'000),           // below the 48 GB minimum: dropped
      make_offer("small", "c80", 1, 2'000'000),          // at most 2 GPUs
      make_offer("nobody", "c80", 1, 1),                 // unknown provider: dropped
      make_offer("minute", "nocard", 1, 1),              // unknown card: dropped
  };
  const auto out = expand_offers(offers, k_providers, k_cards);
  REQUIRE(out.size() == 8 + 3 + 2);
  const auto three = std::find_if(out.begin(), out.end(), [](const Offer& o) { return o.provider == "minute" && o.gpus == 3; });
  REQUIRE(three != out.end());
  CHECK(three->price_per_hour.n == 1'200'000);
  CHECK(three->spot_price_per_hour->n == 600'000);
  CHECK(three->price_origin == "3 x 1-GPU price (built-in test)");
  CHECK(std::count_if(out.begin(), out.end(), [](const Offer& o) { return o.provider == "hourly"; }) == 3);
  CHECK(std::none_of(out.begin(), out.end(), [](const Offer& o) { return o.provider == "hourly" && o.card == "c80" && o.gpus > 1; }));
  CHECK(std::none_of(out.begin(), out.end(), [](const Offer& o) { return o.provider == "hourly" && o.card == "c24"; }));
  CHECK(std::none_of(out.begin(), out.end(), [](const Offer& o) { return o.provider == "small" && o.gpus > 2; }));
}

TEST_CASE("expand_offers: a per-GPU provider that lists some pod sizes sells the others at n x the 1-GPU price", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c24", 1, 400'000),
      make_offer("minute", "c24", 2, 700'000),  // a listed size keeps its own price
      make_offer("minute", "c24", 4, 1'600'000),
  };
  const auto out = expand_offers(offers, k_providers, k_cards);
  const auto price = [&](std::uint32_t n) {
    const auto it = std::find_if(out.begin(), out.end(), [n](const Offer& o) { return o.gpus == n; });
    REQUIRE(it != out.end());
    return it->price_per_hour.n;
  };
  CHECK(out.size() == 8);
  CHECK(price(2) == 700'000);
  CHECK(price(3) == 1'200'000);
  CHECK(price(4) == 1'600'000);
  CHECK(price(8) == 3'200'000);
}

TEST_CASE("expand_offers on the built-in catalogue: Lambda sells only its instance types, RunPod its listed pods", "[providers][plan]")
{
  const auto builtin = builtin_offers();
  const auto out = expand_offers(builtin, provider_catalog(), card_catalog());
  for (const auto& o : out) {
    if (o.provider == "lambda") {
      // Lambda's shapes are its instance types (the snapshot's gpu_Nx_* rows); 3 x A10 is none.
      INFO("lambda " << o.card << " x" << o.gpus);
      CHECK(std::any_of(builtin.begin(), builtin.end(),
                        [&](const Offer& b) { return b.provider == "lambda" && b.card == o.card && b.gpus == o.gpus; }));
      CHECK(o.price_origin.find("x 1-GPU price") == std::string::npos);
    }
  }
  // RunPod's pods from the market snapshot: 1, 2, 4 and 8 GPUs at n x $0.69 (RTX 4090).
  for (const std::uint32_t n : {1U, 2U, 4U, 8U}) {
    CHECK(std::any_of(out.begin(), out.end(), [n](const Offer& o) {
      return o.provider == "runpod" && o.card == "rtx-4090" && o.gpus == n && o.price_per_hour.n == 690'000 * n;
    }));
  }
  CHECK(std::any_of(out.begin(), out.end(), [](const Offer& o) {
    return o.provider == "runpod" && o.card == "h100-sxm" && o.gpus == 1 && o.price_per_hour.n == 2'990'000 &&
           o.price_source == "snapshot";
  }));
}

TEST_CASE("rank: the cheapest option that fits wins, non-fitting ones sort after", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c24", 1, 300'000),  // does not fit 30 GiB on 1 GPU
      make_offer("minute", "c48", 1, 900'000),
      make_offer("hourly", "c48", 1, 800'000),
      make_offer("minute", "c80", 1, 1'500'000),
  };
  PlanRequest req;
  req.gpus = 1;
  const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(30.0));
  REQUIRE(r.choice);
  CHECK(r.choice->provider == "hourly");
  CHECK(r.choice->card == "c48");
  CHECK(r.choice->cost.n == 800'000);
  CHECK(r.options.size() == 4);
  CHECK(r.options.back().card == "c24");
  CHECK_FALSE(r.options.back().fits);
  CHECK(r.options.back().headroom < 0);
  CHECK(r.job.gpus == 1);
  CHECK(r.card->id == "c48");
  // headroom = limit - total, exactly
  CHECK(r.choice->headroom == static_cast<std::int64_t>(fit_limit(k_cards[1]).n) -
                                  static_cast<std::int64_t>((gib_to_bytes(30.0) + Bytes{k_gib}).n));
}

TEST_CASE("rank: at equal cost, fewer GPUs win, then more headroom", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c24", 2, 1'000'000),
      make_offer("minute", "c48", 2, 1'200'000),
      make_offer("hourly", "c48", 1, 1'000'000),
      make_offer("small", "c80", 1, 1'000'000),
  };
  // 40 GiB + 1 GiB overhead: c24 x2 fits (21 GiB each), c48 x1 fits (41 <= 42.5), c80 x1 fits.
  const auto r = rank(infer_job(), offers, k_providers, k_cards, PlanRequest{}, split_estimator(40.0));
  REQUIRE(r.choice);
  CHECK(r.choice->gpus == 1);
  CHECK(r.choice->card == "c80");  // same cost and GPU count as c48, more headroom
  CHECK(r.options.at(1).card == "c48");
  CHECK(r.options.at(2).card == "c24");
  CHECK(r.options.at(2).gpus == 2);
  CHECK(r.job.shard == Shard::none);
}

TEST_CASE("rank: GPU count search picks the smallest count on the cheapest card", "[providers][plan]")
{
  const std::vector<Offer> offers = {make_offer("minute", "c24", 1, 400'000), make_offer("minute", "c80", 1, 2'000'000)};
  // 70 GiB: c24 needs 4 GPUs (17.5+1 per GPU) = $1.60/h; c80 needs 1 GPU (71 <= 75.24) = $2.00/h.
  const auto r = rank(infer_job(), offers, k_providers, k_cards, PlanRequest{}, split_estimator(70.0));
  REQUIRE(r.choice);
  CHECK(r.choice->card == "c24");
  CHECK(r.choice->gpus == 4);
  CHECK(r.choice->price_per_hour.n == 1'600'000);
  CHECK(r.job.gpus == 4);
  CHECK(r.job.shard == Shard::layer);  // transformers inference: device_map="auto"
  CHECK(r.memory.weights == gib_to_bytes(17.5));
}

TEST_CASE("rank: provider filter, max price and spot", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c48", 1, 900'000, 400'000),
      make_offer("hourly", "c48", 1, 800'000),
      make_offer("minute", "c80", 1, 1'500'000),
  };
  PlanRequest req;
  req.gpus = 1;
  SECTION("--provider keeps one provider")
  {
    req.filter.clouds = {"minute"};
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "minute");
    CHECK(r.options.size() == 2);
  }
  SECTION("--spot uses the spot price where there is one")
  {
    req.spot = true;
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "minute");
    CHECK(r.choice->spot);
    CHECK(r.choice->price_per_hour.n == 400'000);
    CHECK_FALSE(r.options.at(1).spot);
  }
  SECTION("--max-price drops pricier servers")
  {
    req.max_price = MicroUsd{850'000};
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.options.size() == 1);
    CHECK(r.choice->provider == "hourly");
    req.max_price = MicroUsd{100'000};
    const auto none = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    CHECK(none.options.empty());
    CHECK_FALSE(none.choice);
    CHECK_FALSE(none.card);
  }
}

TEST_CASE("rank: cost follows each provider's billing rounding", "[providers][plan]")
{
  const std::vector<Offer> offers = {make_offer("minute", "c48", 1, 1'000'000), make_offer("hourly", "c48", 1, 900'000)};
  PlanRequest req;
  req.gpus = 1;
  SECTION("61 minutes: per-minute bills 61 minutes, hourly bills 2 hours")
  {
    req.runtime = 61min;
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "minute");
    CHECK(r.choice->cost.n == 1'016'667);  // 1e6 * 3660 / 3600, rounded up to the micro-dollar
    CHECK(r.options.at(1).cost.n == 1'800'000);
  }
  SECTION("10 seconds: the 1-minute minimum and the hour charged at deploy")
  {
    req.runtime = 10s;
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->cost.n == 16'667);
    CHECK(r.options.at(1).cost.n == 900'000);
  }
}

TEST_CASE("rank: --card checks that card and prices it across providers", "[providers][plan]")
{
  const std::vector<Offer> offers = {
      make_offer("minute", "c24", 1, 400'000),
      make_offer("small", "c24", 1, 350'000),
      make_offer("minute", "c80", 1, 2'000'000),
  };
  PlanRequest req;
  req.card = "c24";
  SECTION("without --gpus: the smallest count that fits")
  {
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(30.0));
    REQUIRE(r.choice);
    CHECK(r.card_fits);
    CHECK(r.job.gpus == 2);
    CHECK(r.choice->provider == "small");
    CHECK(r.choice->gpus == 2);
    CHECK(r.options.size() == 8 + 2);  // minute: 1 to 8 GPUs; small: 1, 2
    CHECK(std::all_of(r.options.begin(), r.options.end(), [](const PlanOption& o) { return o.card == "c24"; }));
    CHECK(std::count_if(r.options.begin(), r.options.end(), [](const PlanOption& o) { return !o.fits; }) == 2);
  }
  SECTION("with --gpus 1 it does not fit: no choice, the card stays the reference")
  {
    req.gpus = 1;
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(30.0));
    CHECK_FALSE(r.choice);
    CHECK_FALSE(r.card_fits);
    REQUIRE(r.card);
    CHECK(r.card->id == "c24");
    CHECK(r.options.size() == 2);
    CHECK(r.memory.total() == gib_to_bytes(31.0));
  }
  SECTION("a card nobody offers is still checked")
  {
    req.card = "c48";
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(30.0));
    CHECK(r.card_fits);
    CHECK_FALSE(r.choice);
    CHECK(r.options.empty());
    CHECK(r.job.gpus == 1);
  }
  SECTION("too big even for 8 cards: one GPU is shown")
  {
    const auto r = rank(infer_job(), offers, k_providers, k_cards, req, split_estimator(500.0));
    CHECK_FALSE(r.card_fits);
    CHECK(r.job.gpus == 1);
  }
}

TEST_CASE("rank: nothing fits: no choice, the closest option is the reference", "[providers][plan]")
{
  const std::vector<Offer> offers = {make_offer("small", "c24", 1, 400'000), make_offer("minute", "c80", 1, 2'000'000)};
  const auto r = rank(infer_job(), offers, k_providers, k_cards, PlanRequest{}, split_estimator(1000.0));
  CHECK_FALSE(r.choice);
  REQUIRE(r.card);
  CHECK(r.card->id == "c80");
  CHECK(r.job.gpus == 8);
  CHECK(std::none_of(r.options.begin(), r.options.end(), [](const PlanOption& o) { return o.fits; }));
}

TEST_CASE("rank: across clouds, each option names its cloud, region, whether gpurent rents it and its billing",
          "[providers][plan][market]")
{
  ProviderInfo market = make_provider("market", 3600s, 0s, 0s, 8, 0, false);
  market.billing_source = "unknown";
  ProviderInfo rented = make_provider("rented", 1s, 0s, 0s, 8, 0, false);
  rented.has_api = true;
  rented.billing_source = "https://example.org/billing: \"per second\" (read 2026-12-05)";
  const std::vector<ProviderInfo> providers = {market, rented};
  std::vector<Offer> offers = {
      make_offer("market", "c48", 1, 1'000'000),  // the cheapest, in two regions
      make_offer("market", "c48", 1, 1'200'000),
      make_offer("rented", "c48", 1, 2'000'000),
  };
  offers[0].region = "eu-1";
  offers[0].price_source = "snapshot";
  offers[0].price_date = "2026-12-01";
  offers[0].upstream = "lambdalabs";
  offers[1].region = "us-1";
  offers[2].region = "US";
  PlanRequest req;
  req.gpus = 1;
  SECTION("the cheapest cloud wins, in its cheapest region, one option per cloud and shape")
  {
    const auto r = rank(infer_job(), offers, providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "market");
    CHECK(r.choice->region == "eu-1");
    CHECK_FALSE(r.choice->rentable);
    CHECK(r.choice->billing_source == "unknown");
    CHECK(r.choice->billing_rule.increment == 3600s);
    CHECK(r.choice->price_source == "snapshot");
    CHECK(r.choice->price_date == "2026-12-01");
    CHECK(r.choice->upstream == "lambdalabs");
    CHECK(r.options.size() == 2);
    const auto other = std::find_if(r.options.begin(), r.options.end(), [](const PlanOption& o) { return o.provider == "rented"; });
    REQUIRE(other != r.options.end());
    CHECK(other->rentable);
    CHECK(other->billing_rule.increment == 1s);
    CHECK(other->price_source == "built-in");
  }
  SECTION("--rentable keeps the clouds gpurent rents")
  {
    req.filter.rentable_only = true;
    const auto r = rank(infer_job(), offers, providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "rented");
    CHECK(r.choice->rentable);
    CHECK(r.options.size() == 1);
  }
  SECTION("--region ranks that region's offers only")
  {
    req.filter.region = "us-1";
    const auto r = rank(infer_job(), offers, providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "market");
    CHECK(r.choice->region == "us-1");
    CHECK(r.choice->price_per_hour == MicroUsd{1'200'000});
    CHECK(r.options.size() == 1);
  }
  SECTION("--provider takes a list")
  {
    req.filter.clouds = {"rented"};
    auto r = rank(infer_job(), offers, providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "rented");
    req.filter.clouds = {"rented", "market"};
    r = rank(infer_job(), offers, providers, k_cards, req, split_estimator(10.0));
    REQUIRE(r.choice);
    CHECK(r.choice->provider == "market");
  }
}

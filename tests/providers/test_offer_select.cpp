// SPDX-License-Identifier: MIT
// Which offers plan and offers rank: precedence of price sources with regions kept apart
// (merge_offers), --provider lists, --rentable, --region, and the cheapest region per shape.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "providers/catalog.hpp"
#include "providers/offer_select.hpp"
#include "providers/offers.hpp"

using namespace gpurent;

namespace {

Offer offer(std::string provider, std::string card, std::uint32_t gpus, std::int64_t micro, std::string region,
            std::string source, std::string origin = "")
{
  Offer o;
  o.provider = std::move(provider);
  o.card = std::move(card);
  o.gpus = gpus;
  o.price_per_hour = MicroUsd{micro};
  o.region = std::move(region);
  o.price_source = std::move(source);
  o.price_date = o.price_source.empty() ? "" : "2026-12-01";
  o.price_origin = origin.empty() ? "test" : origin;
  return o;
}

std::vector<std::string> regions_of(const std::vector<Offer>& offers, const std::string& provider)
{
  std::vector<std::string> out;
  for (const auto& o : offers) {
    if (o.provider == provider) {
      out.push_back(o.region);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("merge_offers: config > live > catalogue > snapshot, regions of one shape kept apart", "[providers][market]")
{
  const std::vector<Offer> builtin = {
      offer("nebius", "h100-sxm", 1, 2'950'000, "eu-north1", "snapshot"),
      offer("nebius", "h100-sxm", 1, 3'100'000, "us-central1", "snapshot"),
      offer("aws", "l4", 1, 800'000, "us-east-1", "snapshot"),
      offer("runpod", "h100-sxm", 1, 4'760'000, "", "", "built-in 2026-03-10"),
  };
  SECTION("snapshot alone: every region stays")
  {
    const auto merged = merge_offers(builtin, {}, {});
    CHECK(regions_of(merged, "nebius") == std::vector<std::string>{"eu-north1", "us-central1"});
    CHECK(merged.size() == 4);
  }
  SECTION("the catalogue cache replaces the snapshot for that shape, all its regions")
  {
    const std::vector<Offer> fetched = {offer("nebius", "h100-sxm", 1, 2'800'000, "eu-west1", "catalogue")};
    const auto merged = merge_offers(builtin, {}, fetched);
    CHECK(regions_of(merged, "nebius") == std::vector<std::string>{"eu-west1"});
    const Offer* n = find_offer(merged, "nebius", "h100-sxm", 1);
    REQUIRE(n != nullptr);
    CHECK(n->price_source == "catalogue");
    CHECK(find_offer(merged, "aws", "l4", 1)->price_source == "snapshot");  // other shapes untouched
  }
  SECTION("live beats the catalogue; config beats live")
  {
    const std::vector<Offer> fetched = {offer("runpod", "h100-sxm", 1, 2'990'000, "US", "catalogue"),
                                        offer("runpod", "h100-sxm", 1, 3'500'000, "", "", "fetched 2026-12-04T10:00:00Z")};
    auto merged = merge_offers(builtin, {}, fetched);
    const Offer* r = find_offer(merged, "runpod", "h100-sxm", 1);
    REQUIRE(r != nullptr);
    CHECK(price_source_of(*r) == "live");
    CHECK(price_date_of(*r) == "2026-12-04");
    CHECK(regions_of(merged, "runpod").size() == 1);
    const std::vector<Offer> config = {offer("runpod", "h100-sxm", 1, 9'000'000, "", "", "config")};
    merged = merge_offers(builtin, config, fetched);
    r = find_offer(merged, "runpod", "h100-sxm", 1);
    REQUIRE(r != nullptr);
    CHECK(r->price_per_hour == MicroUsd{9'000'000});
    CHECK(price_source_of(*r) == "config");
    CHECK(regions_of(merged, "runpod").size() == 1);
  }
  SECTION("one region given twice in the same tier: the later wins")
  {
    const std::vector<Offer> fetched = {offer("nebius", "h100-sxm", 1, 2'000'000, "eu-north1", "snapshot")};
    const auto merged = merge_offers(builtin, {}, fetched);
    CHECK(regions_of(merged, "nebius").size() == 2);
    CHECK(find_offer(merged, "nebius", "h100-sxm", 1)->price_per_hour == MicroUsd{2'000'000});
  }
  SECTION("a hand-kept built-in price says so")
  {
    CHECK(price_source_of(builtin[3]) == "built-in");
    CHECK(price_date_of(builtin[3]) == "2026-03-10");
  }
}

TEST_CASE("select_offers: the cheapest region per cloud, card and GPUs, unless --region", "[providers][market]")
{
  std::vector<Offer> offers = {
      offer("nebius", "h100-sxm", 1, 3'100'000, "us-central1", "snapshot"),
      offer("nebius", "h100-sxm", 1, 2'950'000, "eu-north1", "snapshot"),
      offer("nebius", "h100-sxm", 8, 23'600'000, "eu-north1", "snapshot"),
      offer("runpod", "h100-sxm", 1, 2'990'000, "US", "snapshot"),
      offer("runpod", "h100-sxm", 1, 2'990'000, "CA", "snapshot"),
      offer("aws", "l4", 1, 800'000, "us-east-1", "snapshot"),
  };
  offers[0].spot_price_per_hour = MicroUsd{1'000'000};  // us-central1 is the cheaper spot
  const auto providers = provider_catalog();
  SECTION("no filter: one row per shape, the cheapest region; ties go to the first region by name")
  {
    const auto picked = select_offers(offers, providers, OfferFilter{}, false);
    REQUIRE(picked.size() == 4);
    CHECK(find_offer(picked, "nebius", "h100-sxm", 1)->region == "eu-north1");
    CHECK(find_offer(picked, "runpod", "h100-sxm", 1)->region == "CA");
    CHECK(find_offer(picked, "nebius", "h100-sxm", 8) != nullptr);
  }
  SECTION("--spot ranks regions by their spot price")
  {
    const auto picked = select_offers(offers, providers, OfferFilter{}, true);
    CHECK(find_offer(picked, "nebius", "h100-sxm", 1)->region == "us-central1");
  }
  SECTION("--region keeps that region only, in any letter case")
  {
    OfferFilter f;
    f.region = "US-CENTRAL1";
    const auto picked = select_offers(offers, providers, f, false);
    REQUIRE(picked.size() == 1);
    CHECK(picked.front().provider == "nebius");
    CHECK(picked.front().price_per_hour == MicroUsd{3'100'000});
  }
  SECTION("--provider list and --rentable")
  {
    OfferFilter f;
    f.clouds = {"runpod", "aws"};
    auto picked = select_offers(offers, providers, f, false);
    CHECK(picked.size() == 2);
    CHECK(std::none_of(picked.begin(), picked.end(), [](const Offer& o) { return o.provider == "nebius"; }));
    f.clouds.clear();
    f.rentable_only = true;
    picked = select_offers(offers, providers, f, false);
    REQUIRE(picked.size() == 1);
    CHECK(picked.front().provider == "runpod");
  }
}

TEST_CASE("select_offers: the market in merge order (one pass) picks what any order picks", "[providers][market]")
{
  // merge_offers hands the offers over grouped by cloud, card and GPUs, and select_offers then
  // reads them in one pass; shuffled, it uses its map: both must pick the same offers.
  const auto market = merge_offers(builtin_offers(), {}, {});
  const auto providers = provider_catalog();
  const auto key = [](const Offer& o) { return std::tie(o.provider, o.card, o.gpus, o.region, o.price_per_hour); };
  const auto sorted_keys = [&](std::vector<Offer> v) {
    std::sort(v.begin(), v.end(), [&](const Offer& a, const Offer& b) { return key(a) < key(b); });
    std::vector<std::tuple<std::string, std::string, std::uint32_t, std::string, std::int64_t>> out;
    for (const auto& o : v) {
      out.emplace_back(o.provider, o.card, o.gpus, o.region, o.price_per_hour.n);
    }
    return out;
  };
  std::vector<Offer> shuffled = market;
  std::reverse(shuffled.begin(), shuffled.end());
  std::rotate(shuffled.begin(), shuffled.begin() + static_cast<std::ptrdiff_t>(shuffled.size() / 3), shuffled.end());
  for (const bool spot : {false, true}) {
    OfferFilter f;
    const auto in_order = select_offers(market, providers, f, spot);
    CHECK(in_order.size() > 100);
    CHECK(sorted_keys(in_order) == sorted_keys(select_offers(shuffled, providers, f, spot)));
    f.rentable_only = true;
    CHECK(sorted_keys(select_offers(market, providers, f, spot)) == sorted_keys(select_offers(shuffled, providers, f, spot)));
  }
}

TEST_CASE("parse_cloud_list: a comma list of known clouds, each once", "[providers][market]")
{
  const auto ok = parse_cloud_list(" runpod, Nebius ,runpod,Google Cloud");
  REQUIRE(ok.has_value());
  CHECK(*ok == std::vector<std::string>{"runpod", "nebius", "gcp"});
  const auto unknown = parse_cloud_list("runpod,acme");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().code == Errc::usage);
  CHECK(unknown.error().message.find("acme") != std::string::npos);
  const auto empty = parse_cloud_list("runpod,,vast");
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().code == Errc::usage);
}

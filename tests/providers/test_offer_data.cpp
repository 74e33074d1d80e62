// SPDX-License-Identifier: MIT
// data/offers.json as compiled in (the schema test): every offer dated and sourced, no shape
// priced twice, every card and provider known; the reader refuses what the file must not hold,
// naming the entry and the key; the prices are exactly the ones built in before the file existed.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "providers/card.hpp"
#include "providers/offers.hpp"
#include "providers/catalog.hpp"
#include "providers/market/snapshot.hpp"
#include "providers/offer_data.hpp"
#include "providers/offer_select.hpp"

using namespace gpurent;
using nlohmann::json;

namespace {

Result<OfferData> read(const json& doc) { return offer_data_from_json(doc.dump(), provider_rules(), builtin_cards()); }

// A small valid document: one listed provider, a whole-server and a per-GPU offer.
json small_doc()
{
  return json::parse(R"({
    "note": "test",
    "sources": {"page": {"url": "https://example.com/prices", "title": "Prices", "date": "2026-05-07"},
                "seed": {"url": null, "title": "A seed", "date": "2026-11-30"}},
    "providers": [
      {"provider": "lambda", "cards": ["a10", "h100-sxm"], "cards_from": ["page"], "price_source": "the page"},
      {"provider": "runpod", "cards": ["l4"], "cards_from": ["seed", "page"], "price_source": "the page"}
    ],
    "offers": [
      {"provider": "lambda", "card": "a10", "gpus": 1, "usd_per_hour": "0.86", "source": "page"},
      {"provider": "runpod", "card": "l4", "gpus": [1, 2, 4], "usd_per_gpu_hour": "0.78",
       "spot_usd_per_gpu_hour": "0.44", "source": "page", "quote": "L4 $0.78"}
    ]
  })");
}

std::string error_of(const json& doc)
{
  const auto r = read(doc);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::invalid_input);
  return r.error().message;
}

MicroUsd usd(std::int64_t cents) { return MicroUsd{cents * 10'000}; }

}  // namespace

TEST_CASE("Offer data: the built-in file is accepted, every offer dated and sourced, no shape twice", "[providers][offers]")
{
  const auto data = offer_data_from_json(embedded_offers_json(), provider_rules(), builtin_cards());
  INFO((data ? std::string() : data.error().message));
  REQUIRE(data.has_value());
  REQUIRE(data->offers.size() == data->offer_sources.size());
  REQUIRE_FALSE(data->offers.empty());
  std::set<std::tuple<std::string, std::string, std::uint32_t, std::string>> shapes;
  for (std::size_t i = 0; i < data->offers.size(); ++i) {
    const Offer& o = data->offers[i];
    INFO(o.provider << " " << o.card << " x" << o.gpus);
    const auto& src = data->sources.at(data->offer_sources[i]);
    CHECK(src.url.starts_with("https://"));
    CHECK(src.date.size() == 10);
    CHECK(o.price_origin == "built-in " + src.date);
    CHECK(shapes.emplace(o.provider, o.card, o.gpus, o.region).second);
    CHECK(find_card(o.card)->id == o.card);
  }
  // Every provider of the catalogue has an entry, and every source is dated and used.
  REQUIRE(data->providers.size() == provider_rules().size());
  for (const auto& s : data->sources) {
    INFO(s.first);
    CHECK(s.second.date.starts_with("20"));
    CHECK_FALSE(s.second.title.empty());
  }
  // What the catalogue hands out is the file's (compiled in as initialisers at build: the same
  // offers, sources and listings as the reader makes of the file now), then the market snapshot's.
  const OfferData& built = builtin_offer_data();
  REQUIRE(built.offers.size() == data->offers.size());
  CHECK(built.offer_sources == data->offer_sources);
  for (std::size_t i = 0; i < built.offers.size(); ++i) {
    const Offer& a = built.offers[i];
    const Offer& b = data->offers[i];
    CHECK(std::tie(a.provider, a.card, a.gpus, a.price_per_hour, a.spot_price_per_hour, a.region, a.price_origin) ==
          std::tie(b.provider, b.card, b.gpus, b.price_per_hour, b.spot_price_per_hour, b.region, b.price_origin));
  }
  REQUIRE(built.sources.size() == data->sources.size());
  for (const auto& [key, src] : data->sources) {
    CHECK(std::tie(built.sources.at(key).url, built.sources.at(key).title, built.sources.at(key).date) ==
          std::tie(src.url, src.title, src.date));
  }
  REQUIRE(built.providers.size() == data->providers.size());
  for (std::size_t i = 0; i < built.providers.size(); ++i) {
    const auto& a = built.providers[i];
    const auto& b = data->providers[i];
    CHECK(std::tie(a.provider, a.cards, a.cards_from, a.price_source) == std::tie(b.provider, b.cards, b.cards_from, b.price_source));
    REQUIRE(a.node_links.size() == b.node_links.size());
    for (std::size_t k = 0; k < a.node_links.size(); ++k) {
      const auto& x = a.node_links[k];
      const auto& y = b.node_links[k];
      CHECK(std::tie(x.kind, x.product, x.cards, x.gpus_per_node, x.max_nodes, x.gbit_per_s, x.source, x.quote) ==
            std::tie(y.kind, y.product, y.cards, y.gpus_per_node, y.max_nodes, y.gbit_per_s, y.source, y.quote));
    }
  }
  // Both, in (provider, card, GPUs, region) order (merge_offers then sorts nothing at start-up),
  // the file's before the snapshot's where all four are the same.
  const auto all = builtin_offers();
  REQUIRE(all.size() == data->offers.size() + market::snapshot_offer_count(OfferRegions::every));
  const auto key = [](const Offer& o) { return std::tie(o.provider, o.card, o.gpus, o.region); };
  for (std::size_t i = 1; i < all.size(); ++i) {
    INFO(all[i].provider << " " << all[i].card << " x" << all[i].gpus << " " << all[i].region);
    REQUIRE_FALSE(key(all[i]) < key(all[i - 1]));
    if (key(all[i]) == key(all[i - 1])) {
      CHECK_FALSE((all[i].price_source != "snapshot" && all[i - 1].price_source == "snapshot"));
    }
  }
  for (const auto& f : data->offers) {
    CHECK(std::count_if(all.begin(), all.end(), [&](const Offer& o) {
            return key(o) == key(f) && o.price_origin == f.price_origin && o.price_per_hour == f.price_per_hour;
          }) == 1);
  }
  CHECK(std::count_if(all.begin(), all.end(), [](const Offer& o) { return o.price_source == "snapshot"; }) ==
        static_cast<std::ptrdiff_t>(market::snapshot_offer_count(OfferRegions::every)));
  // With nothing laid over them, merging gives them as they are: current_offers_into then hands
  // out builtin_offers() itself, never a copy (plan's start-up).
  const auto merged = merge_offers(all, {}, {});
  REQUIRE(merged.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(std::tie(merged[i].provider, merged[i].card, merged[i].gpus, merged[i].region, merged[i].price_per_hour,
                   merged[i].price_origin) ==
          std::tie(all[i].provider, all[i].card, all[i].gpus, all[i].region, all[i].price_per_hour, all[i].price_origin));
  }
}

TEST_CASE("Offer data: the prices and listings are the ones built in before the file (exact conversion)", "[providers][offers]")
{
  // RunPod's hand-transcribed prices are gone: the market snapshot (data/market/) prices RunPod.
  const auto& offers = builtin_offer_data().offers;
  REQUIRE(offers.size() == 3);
  const auto at = [&](const char* provider, const char* card, std::uint32_t gpus) -> const Offer& {
    for (const auto& o : offers) {
      if (o.provider == provider && o.card == card && o.gpus == gpus) {
        return o;
      }
    }
    FAIL(provider << " " << card << " x" << gpus << " missing");
    return offers.front();
  };
  CHECK(at("lambda", "a10", 1).price_per_hour == usd(86));
  CHECK(at("lambda", "a100-40gb-sxm", 1).price_per_hour == usd(148));
  CHECK(at("lambda", "h100-pcie", 1).price_per_hour == usd(286));
  CHECK_FALSE(at("lambda", "a10", 1).spot_price_per_hour.has_value());
  CHECK(at("lambda", "a10", 1).price_origin == "built-in 2026-05-07");
  CHECK(at("lambda", "a10", 1).region.empty());
  CHECK(std::none_of(offers.begin(), offers.end(), [](const Offer& o) { return o.provider == "runpod"; }));
  const auto listed = [](const char* name) { return find_provider(name)->listed_cards; };
  CHECK(listed("gpucloud") == std::vector<std::string>{"rtx-pro-6000"});
  CHECK(listed("cloudgpu") == std::vector<std::string>{"rtx-4090", "rtx-5090", "rtx-4090-48gb", "a100-80gb-sxm", "rtx-pro-6000"});
  CHECK(listed("lambda") == std::vector<std::string>{"a10", "a100-40gb-sxm", "h100-pcie", "h100-sxm"});
  CHECK(listed("runpod").size() == 13);
  CHECK(listed("vast").empty());
  CHECK(find_provider("lambda")->price_source == "Lambda's list prices as transcribed by techbytes.app (GPU pricing matrix)");
  CHECK(find_provider("runpod")->price_source.empty());
  CHECK(find_provider("gpucloud")->price_source.empty());
  CHECK(find_provider("vast")->price_source.empty());
  // The rules alone carry no listing: the file is the one place it lives.
  for (const auto& p : provider_rules()) {
    CHECK(p.listed_cards.empty());
    CHECK(p.price_source.empty());
  }
}

TEST_CASE("Offer data: exact decimal prices, never floating point", "[providers][offers]")
{
  CHECK(parse_usd_exact("2.86")->n == 2'860'000);
  CHECK(parse_usd_exact("10.57")->n == 10'570'000);
  CHECK(parse_usd_exact("0.000001")->n == 1);
  CHECK(parse_usd_exact("3")->n == 3'000'000);
  CHECK(parse_usd_exact("99999.999999")->n == 99'999'999'999);
  for (const char* bad : {"", ".5", "1.", "1.0000001", "-1", "+1", "1e3", "1,5", " 1", "1 ", "100000", "0x10", "nan", "inf", "1.2.3"}) {
    INFO(bad);
    CHECK_FALSE(parse_usd_exact(bad).has_value());
  }
}

TEST_CASE("Offer data: a small document expands per-GPU prices", "[providers][offers]")
{
  const auto d = read(small_doc());
  INFO((d ? std::string() : d.error().message));
  REQUIRE(d.has_value());
  REQUIRE(d->offers.size() == 4);
  CHECK(d->offers[0].price_per_hour == usd(86));
  CHECK(d->offers[3].gpus == 4);
  CHECK(d->offers[3].price_per_hour == usd(312));
  CHECK(d->offers[3].spot_price_per_hour == usd(176));
  CHECK(d->offers[3].price_origin == "built-in 2026-05-07");
  CHECK(d->providers[1].cards_from == std::vector<std::string>{"seed", "page"});
}

TEST_CASE("Offer data: bad input is refused, naming the entry and the key", "[providers][offers]")
{
  struct Case {
    const char* what;
    std::function<void(json&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"not JSON", [](json& d) { d = "{"; }, "offer data:"},
      {"unknown top key", [](json& d) { d["extra"] = 1; }, "(top level).extra: unknown key"},
      {"unknown offer key", [](json& d) { d["offers"][0]["price"] = "1"; }, "offers[0] (lambda a10).price: unknown key"},
      {"unknown provider key", [](json& d) { d["providers"][0]["max_gpus"] = 8; }, "provider lambda.max_gpus: unknown key"},
      {"unknown source key", [](json& d) { d["sources"]["page"]["when"] = "x"; }, "sources.page.when: unknown key"},
      {"unknown provider", [](json& d) { d["offers"][1]["provider"] = "aws"; }, "offers[1].provider: `aws` is not a provider"},
      {"listing of unknown provider", [](json& d) { d["providers"][0]["provider"] = "aws"; }, "providers[0].provider: `aws`"},
      {"provider listed twice", [](json& d) { d["providers"][1]["provider"] = "lambda"; d["providers"][1]["cards"] = {"a10"}; },
       "provider lambda: listed twice"},
      {"unknown card", [](json& d) { d["offers"][0]["card"] = "tpu-v5"; }, "offers[0] (lambda tpu-v5).card: `tpu-v5` is not a card"},
      {"alias instead of id", [](json& d) { d["providers"][0]["cards"] = {"a10", "h100"}; },
       "provider lambda.cards: `h100` names the card `h100-sxm`: give its id"},
      {"card not listed", [](json& d) { d["offers"][0]["card"] = "h200"; }, "offers[0] (lambda h200).card: `h200` is not in lambda's"},
      {"card too small", [](json& d) { d["providers"].push_back({{"provider", "gpucloud"}, {"cards", {"rtx-4090"}}, {"cards_from", {"seed"}}}); },
       "provider gpucloud.cards: `rtx-4090` is below the provider's smallest card (48 GB)"},
      {"cards without a source", [](json& d) { d["providers"][0].erase("cards_from"); }, "provider lambda.cards_from: missing"},
      {"unknown cards source", [](json& d) { d["providers"][0]["cards_from"] = {"blog"}; }, "provider lambda.cards_from: `blog`"},
      {"price as a number", [](json& d) { d["offers"][0]["usd_per_hour"] = 0.86; }, "offers[0] (lambda a10).usd_per_hour: must be a decimal string"},
      {"price with 7 decimals", [](json& d) { d["offers"][0]["usd_per_hour"] = "0.8600001"; }, "offers[0] (lambda a10).usd_per_hour: `0.8600001`"},
      {"zero price", [](json& d) { d["offers"][0]["usd_per_hour"] = "0.00"; }, "usd_per_hour: must be above 0"},
      {"no price", [](json& d) { d["offers"][0].erase("usd_per_hour"); }, "offers[0] (lambda a10): give exactly one of"},
      {"two prices", [](json& d) { d["offers"][0]["usd_per_gpu_hour"] = "0.86"; }, "give exactly one of"},
      {"spot of the other kind", [](json& d) { d["offers"][0]["spot_usd_per_gpu_hour"] = "0.5"; }, "offers[0] (lambda a10).spot_usd_per_gpu_hour:"},
      {"spot not below", [](json& d) { d["offers"][1]["spot_usd_per_gpu_hour"] = "0.78"; }, "offers[1] (runpod l4).spot_usd_per_gpu_hour: must be below"},
      {"gpus missing", [](json& d) { d["offers"][0].erase("gpus"); }, "offers[0] (lambda a10).gpus: missing"},
      {"gpus zero", [](json& d) { d["offers"][0]["gpus"] = 0; }, "offers[0] (lambda a10).gpus: GPUs per server are whole numbers 1..8"},
      {"gpus above max", [](json& d) { d["offers"][1]["gpus"] = {1, 9}; }, "offers[1] (runpod l4).gpus: GPUs per server"},
      {"gpus fractional", [](json& d) { d["offers"][0]["gpus"] = 1.5; }, ".gpus: GPUs per server"},
      {"gpus list with a server price", [](json& d) { d["offers"][0]["gpus"] = {1, 2}; }, "offers[0] (lambda a10).gpus: a list of GPU counts needs a per-GPU price"},
      {"gpus twice in a list", [](json& d) { d["offers"][1]["gpus"] = {1, 1}; }, "offers[1] (runpod l4).gpus: 1 is listed twice"},
      {"duplicate shape", [](json& d) { d["offers"].push_back(d["offers"][1]); d["offers"][2]["gpus"] = {4}; },
       "offers[2] (runpod l4).gpus: runpod l4 x4 is priced twice"},
      {"no source", [](json& d) { d["offers"][0].erase("source"); }, "offers[0] (lambda a10).source: missing"},
      {"unknown source", [](json& d) { d["offers"][0]["source"] = "blog"; }, "offers[0] (lambda a10).source: `blog` is not a key"},
      {"source without url", [](json& d) { d["offers"][0]["source"] = "seed"; }, "offers[0] (lambda a10).source: `seed` has no url"},
      {"undated source", [](json& d) { d["sources"]["page"].erase("date"); }, "sources.page.date: missing"},
      {"bad date", [](json& d) { d["sources"]["page"]["date"] = "May 7, 2026"; }, "sources.page.date: must be the date"},
      {"bad url", [](json& d) { d["sources"]["page"]["url"] = "techbytes.app"; }, "sources.page.url: must be an http(s) address"},
      {"no price source to print", [](json& d) { d["providers"][0]["price_source"] = ""; }, "offers[0] (lambda a10).provider: lambda's entry"},
      {"price source without prices", [](json& d) { d["offers"].erase(0); }, "provider lambda.price_source: given, but no offer"},
      {"offers not a list", [](json& d) { d["offers"] = json::object(); }, "\"providers\" and \"offers\" must be lists"},
      {"offer not a table", [](json& d) { d["offers"][0] = 3; }, "offers[0]: must be a table"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    json d = small_doc();
    c.edit(d);
    const auto r = d.is_string() ? offer_data_from_json(d.get<std::string>(), provider_rules(), builtin_cards()) : read(d);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == Errc::invalid_input);
    CHECK_THAT(r.error().message, Catch::StartsWith("offer data: ") && Catch::Contains(c.expect));
  }
  CHECK_THAT(error_of(json::array()), Catch::Contains("expected an object"));
}

TEST_CASE("built-in offers: per shape the cheapest region's alone select as every region's do", "[offers][market]")
{
  // plan without --region builds only each shape's cheapest snapshot row (on demand, and under
  // --spot); whatever the filter, select_offer_ptrs must pick the same offers from either set.
  const auto every = builtin_offers(OfferRegions::every);
  const auto cheapest = builtin_offers(OfferRegions::cheapest_per_shape);
  CHECK(cheapest.size() < every.size());
  CHECK(cheapest.size() == builtin_offer_data().offers.size() + market::snapshot_offer_count(OfferRegions::cheapest_per_shape));
  CHECK(std::is_sorted(cheapest.begin(), cheapest.end(), offer_before));
  const auto key = [](const Offer* o) {
    return std::tuple(o->provider, o->card, o->gpus, o->region, o->price_per_hour, o->spot_price_per_hour,
                      o->instance_type, o->price_source);
  };
  std::vector<OfferFilter> filters(4);
  filters[1].rentable_only = true;
  filters[2].clouds = {"aws", "gcp", "runpod"};
  filters[3].clouds = {"primeintellect", "lambda"};
  std::size_t compared = 0;
  for (const auto& f : filters) {
    for (const bool spot : {false, true}) {
      const auto a = select_offer_ptrs(every, provider_catalog(), f, spot);
      const auto b = select_offer_ptrs(cheapest, provider_catalog(), f, spot);
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(a[i]->provider << " " << a[i]->card << " x" << a[i]->gpus << " " << a[i]->region << " spot " << spot);
        CHECK(key(a[i]) == key(b[i]));
      }
      compared += a.size();
    }
  }
  CHECK(compared > 1000);
}

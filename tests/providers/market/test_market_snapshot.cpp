// SPDX-License-Identifier: MIT
// The pinned snapshot (data/market/): every accelerator name of it maps to a card or is listed as
// unmapped; the compiled-in offers are what the reader and mapper make of the files now; the
// figures a user acts on (RunPod's H100 SXM at $2.99/h) come through.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/market/catalog_csv.hpp"
#include "providers/market/name_map.hpp"
#include "providers/market/snapshot.hpp"

using namespace gpurent;
using namespace gpurent::market;

namespace {

std::string slurp(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Mapped {
  std::vector<CatalogFile> files;
  MarketOffers all;
};

const Mapped& snapshot_files()
{
  static const Mapped k = [] {
    Mapped m;
    const std::string dir = std::string(GPURENT_SOURCE_DIR) + "/data/market/";
    const auto manifest = nlohmann::json::parse(slurp(dir + "snapshot.json"));
    for (const auto& c : manifest["clouds"]) {
      auto f = read_catalog_csv(c["cloud"].get<std::string>(), slurp(dir + c["file"].get<std::string>()));
      REQUIRE(f);
      auto o = offers_from_catalog(*f, "snapshot", manifest["date"].get<std::string>());
      m.all.offers.insert(m.all.offers.end(), o.offers.begin(), o.offers.end());
      m.all.unmapped.insert(m.all.unmapped.end(), o.unmapped.begin(), o.unmapped.end());
      m.all.warnings.insert(m.all.warnings.end(), o.warnings.begin(), o.warnings.end());
      m.files.push_back(std::move(*f));
    }
    return m;
  }();
  return k;
}

bool same(const Offer& a, const Offer& b)
{
  return a.provider == b.provider && a.card == b.card && a.gpus == b.gpus && a.price_per_hour == b.price_per_hour &&
         a.spot_price_per_hour == b.spot_price_per_hour && a.region == b.region && a.price_source == b.price_source &&
         a.price_date == b.price_date && a.price_origin == b.price_origin && a.instance_type == b.instance_type &&
         a.upstream == b.upstream && a.gpu_only == b.gpu_only && a.spot_above_on_demand == b.spot_above_on_demand;
}

}  // namespace

TEST_CASE("market snapshot: every accelerator name maps to a card or is listed as unmapped", "[market]")
{
  const auto& m = snapshot_files();
  CHECK(m.all.warnings.empty());
  std::vector<std::string> ids;
  for (const auto& c : builtin_cards()) {
    ids.push_back(c.id);
  }
  REQUIRE(check_name_map_cards(builtin_name_map(), ids));
  std::size_t rows = 0;
  for (const auto& f : m.files) {
    for (const auto& r : f.rows) {
      ++rows;
      const NameRule* rule = match_name(builtin_name_map(), f.cloud, r);
      const bool listed = std::any_of(m.all.unmapped.begin(), m.all.unmapped.end(), [&](const UnmappedName& u) {
        return u.cloud == f.cloud && u.accelerator_name == r.accelerator_name;
      });
      INFO(f.cloud << " line " << r.line << ": " << r.accelerator_name);
      CHECK(((rule != nullptr && rule->card) || listed));
    }
  }
  std::size_t unmapped_rows = 0;
  for (const auto& u : m.all.unmapped) {
    unmapped_rows += u.rows;
  }
  CHECK(unmapped_rows < rows / 3);  // most of the market maps
  CHECK(snapshot_unmapped().size() == m.all.unmapped.size());
}

TEST_CASE("market snapshot: the compiled-in offers are the files' offers now", "[market]")
{
  // In (provider, card, GPUs, region) order, the files' order among equals (the generator's
  // order, which builtin_offers() and merge_offers rely on).
  const auto& m = snapshot_files();
  const auto built = snapshot_offers();
  CHECK(built.size() == snapshot_offer_count(OfferRegions::every));
  REQUIRE(built.size() == m.all.offers.size());
  auto files = m.all.offers;
  std::stable_sort(files.begin(), files.end(), [](const Offer& a, const Offer& b) {
    return std::tie(a.provider, a.card, a.gpus, a.region) < std::tie(b.provider, b.card, b.gpus, b.region);
  });
  for (std::size_t i = 0; i < built.size(); ++i) {
    INFO(i << ": " << built[i].provider << " " << built[i].card << " x" << built[i].gpus << " " << built[i].region);
    CHECK(same(built[i], files[i]));
  }
}

TEST_CASE("market snapshot: at least 10 clouds dated and sourced with no price of 0", "[market]")
{
  std::set<std::string> clouds;
  const auto offers = snapshot_offers();
  for (const auto& o : offers) {
    clouds.insert(o.provider);
    CHECK(o.price_per_hour.n > 0);
    CHECK(o.price_source == "snapshot");
    CHECK(o.price_date == snapshot_date());
    if (o.spot_price_per_hour) {
      CHECK(o.spot_price_per_hour->n > 0);
    }
  }
  CHECK(clouds.size() >= 10);
  CHECK(snapshot_clouds().size() == 15);
  for (const auto& c : snapshot_clouds()) {
    CHECK(c.commit.size() == 40);
    CHECK(c.source.starts_with("catalogs/v"));
  }
}

TEST_CASE("market snapshot: RunPod's H100 SXM is $2.99/h on demand and $2.69 spot - nebius and GCP and vast come through", "[market]")
{
  const auto offers = snapshot_offers();
  const auto find = [&](std::string_view cloud, std::string_view card, std::uint32_t gpus, std::string_view region) -> const Offer* {
    for (const auto& o : offers) {
      if (o.provider == cloud && o.card == card && o.gpus == gpus && o.region == region) {
        return &o;
      }
    }
    return nullptr;
  };
  const Offer* rp = find("runpod", "h100-sxm", 1, "CA");
  REQUIRE(rp != nullptr);
  CHECK(rp->price_per_hour == MicroUsd{2'990'000});
  CHECK(rp->spot_price_per_hour == MicroUsd{2'690'000});
  const Offer* rp8 = find("runpod", "h100-sxm", 8, "CA");
  REQUIRE(rp8 != nullptr);
  CHECK(rp8->price_per_hour == MicroUsd{23'920'000});  // the whole 8-GPU pod
  const Offer* nb = find("nebius", "h100-sxm", 8, "eu-north1");
  REQUIRE(nb != nullptr);
  CHECK(nb->price_per_hour == MicroUsd{23'600'000});
  const Offer* g = find("gcp", "h100-sxm", 1, "us-central1");
  REQUIRE(g != nullptr);
  CHECK(g->gpu_only);
  const bool any_spot_above = std::any_of(offers.begin(), offers.end(),
                                          [](const Offer& o) { return o.spot_above_on_demand; });
  CHECK(any_spot_above);
  // The snapshot's offers are part of the built-in offers.
  const auto builtin = builtin_offers();
  CHECK(std::any_of(builtin.begin(), builtin.end(), [&](const Offer& o) { return same(o, *rp); }));
}

TEST_CASE("market snapshot: A40, L40, the SXM2 V100 and Lambda's GH200 are offered, rows that do not say SXM2 are not", "[market]")
{
  const auto offers = snapshot_offers();
  const auto any = [&](auto&& pred) { return std::any_of(offers.begin(), offers.end(), pred); };
  CHECK(any([](const Offer& o) { return o.provider == "runpod" && o.card == "a40" && o.gpus == 1; }));
  CHECK(any([](const Offer& o) { return o.provider == "runpod" && o.card == "l40" && o.gpus == 1; }));
  CHECK(any([](const Offer& o) { return o.provider == "vast" && o.card == "a40"; }));
  CHECK(any([](const Offer& o) { return o.provider == "lambda" && o.card == "gh200" && o.gpus == 1; }));
  CHECK(any([](const Offer& o) { return o.provider == "aws" && o.card == "v100-16gb-sxm" && o.instance_type == "p3.2xlarge"; }));
  CHECK(any([](const Offer& o) { return o.provider == "gcp" && o.card == "v100-16gb-sxm" && o.gpu_only; }));
  // Lambda's gpu_8x_v100, AWS's p3dn and Prime Intellect's latitude "L40" (an L40S upstream) stay out.
  CHECK_FALSE(any([](const Offer& o) { return o.provider == "lambda" && o.card.starts_with("v100"); }));
  CHECK_FALSE(any([](const Offer& o) { return o.instance_type.starts_with("p3dn."); }));
  CHECK_FALSE(any([](const Offer& o) { return o.upstream == "latitude" && o.card == "l40"; }));
  const auto unmapped = snapshot_unmapped();
  const auto listed = [&](std::string_view cloud, std::string_view name) {
    return std::any_of(unmapped.begin(), unmapped.end(), [&](const UnmappedName& u) {
      return u.cloud == cloud && u.accelerator_name == name && !u.reason.empty();
    });
  };
  CHECK(listed("lambda", "V100"));
  CHECK(listed("aws", "V100-32GB"));
  CHECK(listed("primeintellect", "L40"));
  CHECK_FALSE(listed("runpod", "A40"));
  CHECK_FALSE(listed("lambda", "GH200"));
}

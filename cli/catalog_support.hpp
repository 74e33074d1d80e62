// SPDX-License-Identifier: MIT
#pragma once
// The price catalogue at the command line (docs/market.md): `offers --refresh` fetching it, plan,
// up and offers refreshing a stale cache unless --offline, and the cached offers they read.
#include <string>
#include <string_view>
#include <vector>

#include "cli/config.hpp"
#include "providers/catalog.hpp"
#include "providers/market/catalog_cache.hpp"
#include "providers/market/catalog_refresh.hpp"

namespace gpurent {
struct Services;

// The reader the binary uses for downloaded files (cli/catalog_reader.cpp).
[[nodiscard]] market::CatalogReader catalog_reader();

// The config's catalog_clouds, else every catalogue cloud.
[[nodiscard]] std::vector<std::string> catalog_cloud_list(const Config& cfg);
// Base and fallback URL (GPURENT_CATALOG_URL over the config file), clouds, timeout, this build.
[[nodiscard]] market::CatalogRefreshSettings catalog_settings(const Config& cfg, std::vector<std::string> clouds);

// What `offers --refresh` did with the catalogue.
struct CatalogRefreshSummary {
  bool asked = false;                  // some catalogue cloud was asked
  std::size_t clouds_ok = 0;           // fetched or confirmed (304)
  std::size_t offers = 0;              // the offers of those clouds
  std::vector<std::string> failed;     // one line per failed cloud: why, and what is used instead
};
// Refreshes the catalogue of every listed cloud, or only `only` when it names one (nothing when it
// names a provider the list lacks). Progress and row warnings go to stderr.
[[nodiscard]] CatalogRefreshSummary refresh_catalogue(Services& s, const Config& cfg, std::string_view only,
                                                      const market::CatalogReader& reader);

// plan, up and offers without --offline: fetch the listed clouds when there is no cache yet (the
// first fetch), and those older than catalog_max_age_hours (or missing) in an existing one. A line
// on stderr when it fetches, a warning per failed cloud (the cached copy, else the shipped
// snapshot, answers); never an error. Nothing with catalog_auto_refresh = false, or in a run that
// has no network client.
void refresh_stale_catalogue(Services& s, const Config& cfg, const market::CatalogReader& reader);

// The cached catalogue offers of the listed clouds (price_source "catalogue"): by default the
// cheapest region of each (cloud, card, GPUs) only (what start-up needs), or every region.
// Empty without a cache; a damaged cache is a warning.
[[nodiscard]] std::vector<Offer> catalogue_offers(Services& s, const Config& cfg,
                                                  market::CatalogLoad load = market::CatalogLoad::cheapest_per_shape);

// Every cached catalogue file of the listed clouds as (cloud, text), for a caller that reads
// them whole (`offers --unmapped` over the cache); empty without a cache.
struct CachedCatalogText {
  std::string cloud;
  std::string text;
};
[[nodiscard]] std::vector<CachedCatalogText> cached_catalogue_texts(Services& s, const Config& cfg);

}  // namespace gpurent

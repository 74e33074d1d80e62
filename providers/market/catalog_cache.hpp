// SPDX-License-Identifier: MIT
#pragma once
// The catalogue cache: $XDG_CACHE_HOME/gpurent/catalog/ (else ~/.cache/gpurent/catalog/) holds
// each cloud's last validated file as downloaded (`v8/<cloud>.csv`) and, in one small text file
// read at start-up (`offers.tsv`), the GPU offers made from them, with each cloud's fetch time,
// ETag and Last-Modified. Both are replaced atomically (temporary file, fsync, rename); a file
// that failed validation never replaces a cached one.
//
// offers.tsv (tab-separated; no field holds a tab, newline or other control character):
//   gpurent-catalog-offers<TAB>1
//   tried<TAB><unix s of the last refresh attempt>
//   cloud<TAB><key><TAB><fetched unix s><TAB><checked unix s><TAB><made_by><TAB><etag><TAB><last-modified><TAB><offers>
//   o<TAB><card><TAB><gpus><TAB><price micro-USD><TAB><spot micro-USD or empty><TAB><region><TAB><instance type><TAB><upstream><TAB><flags>
//   …                   (exactly <offers> `o` lines follow each `cloud` line; flags: g = GPU only, s = spot above on demand)
//   end
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/catalog.hpp"
#include "providers/market/catalog_fetch.hpp"

namespace gpurent::market {

using CatalogTime = std::chrono::system_clock::time_point;

struct CachedCloud {
  std::string cloud;
  CatalogTime fetched_at{};      // when this content was downloaded (HTTP 200)
  CatalogTime checked_at{};      // when it was last confirmed current (200 or 304)
  std::string made_by;           // the gpurent build that turned the file into offers
  CatalogValidators validators;  // what the server said about the content
  std::size_t first = 0;         // its offers: CatalogCache::offers[first, first + count)
  std::size_t count = 0;
};

struct CatalogCache {
  CatalogTime tried_at{};            // the last refresh attempt, successful or not
  std::vector<CachedCloud> clouds;   // sorted by cloud key
  // Every cloud's offers: provider = the cloud key, price_source "catalogue", price_date the day
  // of checked_at (UTC), price_origin "catalogue".
  std::vector<Offer> offers;
  [[nodiscard]] const CachedCloud* find(std::string_view cloud) const noexcept;
};

// $XDG_CACHE_HOME/gpurent/catalog, else $HOME/.cache/gpurent/catalog.
[[nodiscard]] Result<std::filesystem::path> catalog_cache_dir(
    const std::function<std::optional<std::string>(const std::string&)>& env);
[[nodiscard]] std::filesystem::path catalog_offers_path(const std::filesystem::path& dir);
[[nodiscard]] std::filesystem::path catalog_raw_path(const std::filesystem::path& dir, std::string_view cloud);

// What a reader keeps: every offer (a refresh, which writes the cache back), or per cloud only
// the cheapest on-demand offer of each (card, GPUs) (start-up: plan ranks one region per shape
// unless asked for a region; the others are checked but never built). A cache read this way must
// not be written back.
// `clouds_only`: the cloud lines (times, validators) without any offer: the offer lines are
// counted, not read (what deciding whether a refresh is due needs).
enum class CatalogLoad { all, cheapest_per_shape, clouds_only };

// Pure: offers.tsv text <-> CatalogCache. Writing drops control characters from text fields
// (and an ETag or Last-Modified holding one: it could not be sent back) and lists each cloud's
// offers by card, GPUs and price. Reading checks every field of every line and the `end` line (a
// truncated file is an error, never fewer offers), whatever it keeps.
[[nodiscard]] std::string catalog_cache_to_text(const CatalogCache& cache);
[[nodiscard]] Result<CatalogCache> catalog_cache_from_text(std::string_view text, CatalogLoad load = CatalogLoad::all);

// The cache as stored: nullopt when there is none; a damaged file is an error naming it.
[[nodiscard]] Result<std::optional<CatalogCache>> load_catalog_cache(const std::filesystem::path& dir,
                                                                     CatalogLoad load = CatalogLoad::all);
[[nodiscard]] Result<void> save_catalog_cache(const std::filesystem::path& dir, const CatalogCache& cache);
// One cloud's stored file (nullopt when there is none) and replacing it.
[[nodiscard]] Result<std::optional<std::string>> read_cached_catalog(const std::filesystem::path& dir, std::string_view cloud);
[[nodiscard]] Result<void> store_catalog(const std::filesystem::path& dir, std::string_view cloud, std::string_view text);

// Replaces `cloud`'s entry (and its offers) in `cache`, keeping the order by cloud key.
void put_cloud(CatalogCache& cache, CachedCloud entry, std::vector<Offer> offers);

}  // namespace gpurent::market

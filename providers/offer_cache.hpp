// SPDX-License-Identifier: MIT
#pragma once
// Offers fetched from provider APIs, cached as one JSON file with each provider's fetch time:
// {"version":1,"providers":{"<name>":{"fetched_at":<unix s>,"offers":[{card,gpus,price_micro,
// spot_price_micro?,region}]}}}. `plan`/`offers` use fresh entries, built-in prices otherwise.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/catalog.hpp"
#include "providers/provider.hpp"
#include "providers/state_store.hpp"

namespace gpurent {

struct CachedProviderOffers {
  TimePoint fetched_at{};
  std::vector<Offer> offers;  // price_origin "fetched <iso time>"
};
using OfferCache = std::map<std::string, CachedProviderOffers, std::less<>>;

// $XDG_CACHE_HOME/gpurent/offers.json, else $HOME/.cache/gpurent/offers.json.
[[nodiscard]] Result<std::filesystem::path> offer_cache_path(
    const std::function<std::optional<std::string>(const std::string&)>& env);

// Pure: (de)serialisation. Parsing validates everything (known card ids are not checked here).
[[nodiscard]] std::string offer_cache_to_json(const OfferCache& cache);
[[nodiscard]] Result<OfferCache> offer_cache_from_json(std::string_view text);

// The offers of every provider whose entry is at most `max_age` old at `now`. A missing file
// is an empty list; a damaged one is an error naming the file (delete it or refresh).
[[nodiscard]] Result<std::vector<Offer>> load_fresh_offers(const std::filesystem::path& path, TimePoint now,
                                                           std::chrono::seconds max_age);
// Fetches `provider`'s offers and replaces its entry in the cache file (written atomically).
[[nodiscard]] Result<std::vector<Offer>> refresh_offers(Provider& provider, const std::filesystem::path& path,
                                                        TimePoint now);

}  // namespace gpurent

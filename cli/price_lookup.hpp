// SPDX-License-Identifier: MIT
#pragma once
// Which offer and price a command uses: --price, then the config file, then fetched/built-in.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config.hpp"
#include "common/result.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/market/catalog_cache.hpp"

namespace gpurent {

struct Services;

struct PricedOffer {
  ProviderInfo provider;
  Card card;
  Offer offer;
  std::string origin_text;  // "built-in price from 2026-03-10 (source …)", "config file …", "--price"
};

// The built-in offers (data/offers.json, the market snapshot) with, over them, the catalogue cache
// of `offers --refresh`, the live offers cache and the config's prices (config > live > catalogue
// > snapshot); a missing or stale cache adds nothing, an unreadable one is a warning on stderr.
// Of the catalogue cache, per (provider, card, GPUs) the cheapest region, or with `regions` all,
// every region (for --region).
[[nodiscard]] std::vector<Offer> current_offers(Services& s, const Config& cfg,
                                                market::CatalogLoad regions = market::CatalogLoad::cheapest_per_shape);
// The same offers without copying the built-in market when nothing (config prices, the catalogue
// cache, live offers) is laid over it: then builtin_offers() and `merged` left empty, else the
// offers merged into `merged`.
// The built-in market's regions that go with a catalogue load: per shape the cheapest region's
// alone with `cheapest_per_shape` (builtin_offers), every region's otherwise.
[[nodiscard]] OfferRegions builtin_regions(market::CatalogLoad load) noexcept;
[[nodiscard]] std::span<const Offer> current_offers_into(
    Services& s, const Config& cfg, std::vector<Offer>& merged,
    market::CatalogLoad regions = market::CatalogLoad::cheapest_per_shape);
// Human description of where an offer's price comes from.
[[nodiscard]] std::string describe_origin(const Offer& offer, const ProviderInfo& provider, const Config& cfg);
// Resolves provider/card/GPUs to a priced offer: the cheapest region of the current offers
// (current_offers: config > live > catalogue cache > snapshot, as plan ranks them). `price_usd`
// ("" = none) is a --price flag for the whole server; with `spot` it is the spot price. Bad
// names/counts are Errc::usage.
[[nodiscard]] Result<PricedOffer> resolve_offer(Services& s, const Config& cfg, std::string_view provider,
                                                std::string_view card, std::uint32_t gpus, std::string_view price_usd,
                                                bool spot);

// Word-wraps `text` to `width` columns; continuation lines start with `indent`.
[[nodiscard]] std::string wrap_text(std::string_view text, std::size_t width, std::string_view indent);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// The built-in offers file (data/offers.json) as parsed: which cards each provider lists, the
// prices a dated public source gives, and those sources. Billing rules stay in catalog.cpp.
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/node_link.hpp"

namespace gpurent {

// Where a listing or a price comes from, and when it was read (or says it was verified).
struct OfferSource {
  std::string url;    // "" when the source is not public (a seed document)
  std::string title;
  std::string date;   // "YYYY-MM-DD"
};

// One provider's entry: the cards its material lists (priced or not) and what it says about prices.
struct ProviderListing {
  std::string provider;
  std::vector<std::string> cards;       // Card::id
  std::vector<std::string> cards_from;  // keys of OfferData::sources
  std::string price_source;             // printed after a built-in price ("" = no built-in prices)
  std::vector<NodeLink> node_links;     // how its servers reach each other (providers/node_link.hpp)
};

struct OfferData {
  std::map<std::string, OfferSource, std::less<>> sources;
  std::vector<ProviderListing> providers;
  // One Offer per server shape, in the file's order (an entry with a list of GPU counts gives
  // one per count); price_origin is "built-in <the source's date>".
  std::vector<Offer> offers;
  std::vector<std::string> offer_sources;  // offer_sources[i]: the source key of offers[i]
};

// Reads text in data/offers.json's shape. Strict: unknown keys, a provider not in `providers`, a
// card id not in `cards` (an alias is refused too: the id is what offers are keyed by), a GPU
// count outside 1..max_gpus, a card below the provider's smallest, a price that is not an exact
// decimal string of at most 6 decimals, a spot price not below on-demand, an undated source or a
// price source without a URL, and a (provider, card, gpus, region) given twice are errors that
// name the entry and the key.
[[nodiscard]] Result<OfferData> offer_data_from_json(std::string_view text, std::span<const ProviderInfo> providers,
                                                     std::span<const Card> cards);
// "2.86" -> 2'860'000 micro-USD: digits, at most one '.', at most 6 decimals, below $100000.
[[nodiscard]] Result<MicroUsd> parse_usd_exact(std::string_view text);
// data/offers.json as compiled into the binary.
[[nodiscard]] std::string_view embedded_offers_json() noexcept;
// data/offers.json as read at build against provider_rules() and data/cards.json
// (providers/gen/gen_offer_data.cpp; a file the reader refuses stops the build), compiled in as
// initialisers: no JSON is parsed at start-up.
[[nodiscard]] const OfferData& builtin_offer_data();

}  // namespace gpurent

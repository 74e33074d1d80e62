// SPDX-License-Identifier: MIT
#pragma once
// Merging offers from their three origins, and price overrides from the config file.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/catalog.hpp"

namespace gpurent {

// The market's order: provider, card, GPUs, region (each compared once). The snapshot is generated
// in it, builtin_offers() keeps it, merge_offers returns it and select_offers reads it in one pass.
[[nodiscard]] inline int offer_order(const Offer& a, const Offer& b) noexcept
{
  if (const int c = a.provider.compare(b.provider); c != 0) {
    return c;
  }
  if (const int c = a.card.compare(b.card); c != 0) {
    return c;
  }
  if (a.gpus != b.gpus) {
    return a.gpus < b.gpus ? -1 : 1;
  }
  return a.region.compare(b.region);
}
[[nodiscard]] inline bool offer_before(const Offer& a, const Offer& b) noexcept { return offer_order(a, b) < 0; }

// One list keyed by (provider, card, gpus, region). For each (provider, card, gpus) only the
// offers of the highest precedence present are kept (cli.md plan v4: config > live > catalogue >
// snapshot and hand-kept built-in prices; price_source_of), all their regions; within one region
// the one given later wins (fetched after built-in, config last). Each offer keeps its own
// price_origin. Sorted by provider, card, gpus, region.
[[nodiscard]] std::vector<Offer> merge_offers(std::span<const Offer> builtin, std::span<const Offer> overrides,
                                              std::span<const Offer> fetched);

// A config price override: provider + key "<card>" or "<card>x<gpus>" = USD per hour for the
// whole server. Validated: known provider, known card, 1..max_gpus GPUs, card size allowed by the
// provider, price finite, > 0 and < $100000/h. price_origin is "config".
[[nodiscard]] Result<Offer> make_price_override(std::string_view provider, std::string_view key, double usd_per_hour);

// USD (a finite, non-negative double from user input) to micro-USD, rounded to the nearest micro.
[[nodiscard]] Result<MicroUsd> usd_to_micro(double usd);

// Same provider, card and GPU count (any region).
[[nodiscard]] bool same_shape(const Offer& a, const Offer& b) noexcept;

// What the JSON says of an offer's price (cli.md plan v4 `price_source`): the offer's own
// price_source, else "config" for a config price, "live" for one fetched from a provider's API,
// "flag" for --price, "built-in" for a hand-kept built-in price.
[[nodiscard]] std::string price_source_of(const Offer& o);
// The day of the price, "YYYY-MM-DD" (price_date, else the built-in or fetch date in
// price_origin); "" when unknown (a config price).
[[nodiscard]] std::string price_date_of(const Offer& o);

// The cheapest offer for (provider, card, gpus) in `offers` (any region), if any.
[[nodiscard]] const Offer* find_offer(std::span<const Offer> offers, std::string_view provider, std::string_view card,
                                      std::uint32_t gpus);

}  // namespace gpurent

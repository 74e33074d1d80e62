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

// One list keyed by (provider, card, gpus): fetched offers replace built-in ones, config
// overrides replace both. Each offer keeps its own price_origin. Sorted by provider, card, gpus.
[[nodiscard]] std::vector<Offer> merge_offers(std::span<const Offer> builtin, std::span<const Offer> overrides,
                                              std::span<const Offer> fetched);

// A config price override: provider + key "<card>" or "<card>x<gpus>" = USD per hour for the
// whole server. Validated: known provider, known card, 1..max_gpus GPUs, card size allowed by the
// provider, price finite, > 0 and < $100000/h. price_origin is "config".
[[nodiscard]] Result<Offer> make_price_override(std::string_view provider, std::string_view key, double usd_per_hour);

// USD (a finite, non-negative double from user input) to micro-USD, rounded to the nearest micro.
[[nodiscard]] Result<MicroUsd> usd_to_micro(double usd);

// The offer for (provider, card, gpus) in `offers`, if any.
[[nodiscard]] const Offer* find_offer(std::span<const Offer> offers, std::string_view provider, std::string_view card,
                                      std::uint32_t gpus);

}  // namespace gpurent

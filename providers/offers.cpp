// SPDX-License-Identifier: MIT
#include "providers/offers.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>

#include "common/rounding.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"

namespace gpurent {
namespace {

using Slot = std::tuple<std::string_view, std::string_view, std::uint32_t>;

// Takes the offers of `from` whose (provider, card, gpus) is not taken yet, the last of a list
// winning within it. The slots are views of the caller's offers, which outlive the merge.
void take_untaken(std::map<Slot, const Offer*>& taken, std::span<const Offer> from)
{
  for (auto it = from.rbegin(); it != from.rend(); ++it) {
    taken.try_emplace(Slot{it->provider, it->card, it->gpus}, &*it);
  }
}

}  // namespace

std::vector<Offer> merge_offers(std::span<const Offer> builtin, std::span<const Offer> overrides,
                                std::span<const Offer> fetched)
{
  // Precedence: the config's overrides, then fetched offers, then built-in ones. The map is in
  // (provider, card, gpus) order, so each kept offer is copied once and nothing is sorted (the
  // market snapshot brings a thousand offers to plan's start-up, many the same shape in several
  // regions).
  std::map<Slot, const Offer*> taken;
  take_untaken(taken, overrides);
  take_untaken(taken, fetched);
  take_untaken(taken, builtin);
  std::vector<Offer> out;
  out.reserve(taken.size());
  for (const auto& [slot, offer] : taken) {
    out.push_back(*offer);
  }
  return out;
}

Result<MicroUsd> usd_to_micro(double usd)
{
  if (!std::isfinite(usd) || usd < 0.0) {
    return fail(Errc::invalid_input, "price: must be a finite, non-negative amount in USD");
  }
  if (usd >= 100000.0) {
    return fail(Errc::invalid_input, "price: absurd amount (>= $100000); give USD per hour, e.g. 2.49");
  }
  return MicroUsd{round_to_i64(usd * static_cast<double>(k_micro_per_unit))};
}

Result<Offer> make_price_override(std::string_view provider, std::string_view key, double usd_per_hour)
{
  TRY_ASSIGN(const ProviderInfo p, find_provider(provider));
  std::string card_part(trim(key));
  std::uint32_t gpus = 1;
  // "<card>x<gpus>": only when what precedes the x is a card ("RTX 4090" is a card, not RT x 4090).
  const auto x = card_part.find_last_of("xX");
  if (x != std::string::npos && x > 0 && x + 1 < card_part.size()) {
    const auto count = parse_u64(std::string_view(card_part).substr(x + 1));
    const std::string head(trim(std::string_view(card_part).substr(0, x)));
    if (count.has_value() && find_card(head).has_value()) {
      if (*count < 1 || *count > p.max_gpus) {
        return fail(Errc::invalid_input, "price `" + std::string(key) + "` for " + p.name + ": GPUs must be 1.." +
                                             std::to_string(p.max_gpus));
      }
      gpus = static_cast<std::uint32_t>(*count);
      card_part = head;
    }
  }
  TRY_ASSIGN(const Card card, find_card(card_part));
  if (card.label_gb < p.min_card_gb) {
    return fail(Errc::invalid_input, "price `" + std::string(key) + "` for " + p.name + ": " + card.display +
                                         " is below the provider's smallest card (" + std::to_string(p.min_card_gb) +
                                         " GB)");
  }
  if (!(usd_per_hour > 0.0)) {
    return fail(Errc::invalid_input, "price `" + std::string(key) + "` for " + p.name + ": must be > 0 USD per hour");
  }
  TRY_ASSIGN(const MicroUsd price, usd_to_micro(usd_per_hour));
  Offer o;
  o.provider = p.name;
  o.card = card.id;
  o.gpus = gpus;
  o.price_per_hour = price;
  o.region = p.default_region;
  o.price_origin = "config";
  return o;
}

const Offer* find_offer(std::span<const Offer> offers, std::string_view provider, std::string_view card,
                        std::uint32_t gpus)
{
  for (const auto& o : offers) {
    if (o.provider == provider && o.card == card && o.gpus == gpus) {
      return &o;
    }
  }
  return nullptr;
}

}  // namespace gpurent

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

// Precedence (cli.md plan v4 "The whole market"): config > live > catalogue cache > snapshot (and
// the hand-kept built-in prices, which the snapshot replaces where it has the shape).
int tier(const Offer& o, int floor)
{
  const std::string source = price_source_of(o);
  const int by_source = source == "config" ? 3 : source == "live" ? 2 : source == "catalogue" ? 1 : 0;
  return std::max(floor, by_source);
}

}  // namespace

std::string price_source_of(const Offer& o)
{
  if (!o.price_source.empty()) {
    return o.price_source;
  }
  if (o.price_origin == "config") {
    return "config";
  }
  if (o.price_origin.starts_with("fetched")) {
    return "live";
  }
  if (o.price_origin == "--price") {
    return "flag";
  }
  return "built-in";
}

std::string price_date_of(const Offer& o)
{
  if (!o.price_date.empty()) {
    return o.price_date;
  }
  for (const std::string_view head : {"built-in ", "fetched "}) {
    if (o.price_origin.starts_with(head) && o.price_origin.size() >= head.size() + 10) {
      return o.price_origin.substr(head.size(), 10);
    }
  }
  return "";
}

std::vector<Offer> merge_offers(std::span<const Offer> builtin, std::span<const Offer> overrides,
                                std::span<const Offer> fetched)
{
  struct Entry {
    const Offer* offer;
    int tier;
    std::size_t order;  // given later wins within a tier and region
  };
  std::vector<Entry> all;
  all.reserve(builtin.size() + overrides.size() + fetched.size());  // grown once (plan's start-up)
  for (const auto& o : builtin) {
    all.push_back({&o, tier(o, 0), all.size()});
  }
  for (const auto& o : fetched) {
    all.push_back({&o, tier(o, 0), all.size()});
  }
  for (const auto& o : overrides) {
    all.push_back({&o, tier(o, 3), all.size()});
  }
  // Keyed by (provider, card, gpus, region): regions of one shape never collide. The built-in
  // offers alone, the usual case, come in that order (builtin_offers()): checked in one pass, not
  // sorted again.
  const auto before = [](const Entry& a, const Entry& b) {
    const int c = offer_order(*a.offer, *b.offer);
    return c != 0 ? c < 0 : a.order < b.order;
  };
  if (!std::is_sorted(all.begin(), all.end(), before)) {
    std::sort(all.begin(), all.end(), before);
  }
  std::vector<Offer> out;
  out.reserve(all.size());
  for (std::size_t i = 0; i < all.size();) {
    // One shape: its entries all regions; only the highest tier present is kept.
    std::size_t end = i;
    int top = 0;
    while (end < all.size() && same_shape(*all[end].offer, *all[i].offer)) {
      top = std::max(top, all[end].tier);
      ++end;
    }
    for (std::size_t k = i; k < end; ++k) {
      if (all[k].tier != top) {
        continue;
      }
      // The last entry of this tier in a region wins (the later origin, or the later line).
      std::size_t last = k;
      for (std::size_t m = k + 1; m < end && all[m].offer->region == all[k].offer->region; ++m) {
        if (all[m].tier == top) {
          last = m;
        }
      }
      if (!out.empty() && same_shape(out.back(), *all[last].offer) && out.back().region == all[last].offer->region) {
        continue;  // this region already taken
      }
      out.push_back(*all[last].offer);
    }
    i = end;
  }
  return out;
}

bool same_shape(const Offer& a, const Offer& b) noexcept
{
  return a.provider == b.provider && a.card == b.card && a.gpus == b.gpus;
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
  o.price_source = "config";
  return o;
}

const Offer* find_offer(std::span<const Offer> offers, std::string_view provider, std::string_view card,
                        std::uint32_t gpus)
{
  const Offer* best = nullptr;
  for (const auto& o : offers) {
    if (o.provider == provider && o.card == card && o.gpus == gpus && (best == nullptr || o.price_per_hour < best->price_per_hour)) {
      best = &o;
    }
  }
  return best;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#include "providers/offer_select.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>
#include <tuple>

#include "common/text.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

bool same_region(std::string_view a, std::string_view b)
{
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

MicroUsd ranked_price(const Offer& o, bool spot)
{
  return spot && o.spot_price_per_hour ? *o.spot_price_per_hour : o.price_per_hour;
}

}  // namespace

bool OfferFilter::names(std::string_view cloud) const noexcept
{
  return clouds.empty() || std::find(clouds.begin(), clouds.end(), cloud) != clouds.end();
}

Result<std::vector<std::string>> parse_cloud_list(std::string_view text)
{
  std::vector<std::string> out;
  for (const auto part : split(text, ',')) {
    const std::string_view name = trim(part);
    if (name.empty()) {
      return fail(Errc::usage, "--provider `" + std::string(text) +
                                   "`: an empty name; give cloud names separated by commas, e.g. runpod,nebius");
    }
    auto p = find_provider(name);
    if (!p) {
      return fail(Errc::usage, "--provider: " + p.error().message);
    }
    if (std::find(out.begin(), out.end(), p->name) == out.end()) {
      out.push_back(p->name);
    }
  }
  if (out.empty()) {
    return fail(Errc::usage, "--provider: give at least one cloud name, e.g. runpod,nebius");
  }
  return out;
}

bool offer_passes(const Offer& o, std::span<const ProviderInfo> providers, const OfferFilter& filter)
{
  if (!filter.names(o.provider)) {
    return false;
  }
  if (filter.region && !same_region(o.region, *filter.region)) {
    return false;
  }
  if (filter.rentable_only) {
    const auto it = std::find_if(providers.begin(), providers.end(), [&](const ProviderInfo& p) { return p.name == o.provider; });
    return it != providers.end() && it->rentable();
  }
  return true;
}

std::vector<const Offer*> select_offer_ptrs(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                           const OfferFilter& filter, bool spot)
{
  // Read in the market's order (offer_order), where each (provider, card, gpus) is one run: merge
  // order, as plan hands them over, needs no sort (plan's start-up); any other order is sorted
  // first, as indices, so the survivors keep their input order.
  std::vector<std::size_t> order(offers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!std::is_sorted(offers.begin(), offers.end(), offer_before)) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return offer_before(offers[a], offers[b]); });
  }
  // Whether `o` beats the offer held for its shape: cheaper, or as cheap and its region first by name.
  const auto beats = [&](const Offer& o, const Offer& held) {
    return std::tuple(ranked_price(o, spot), std::string_view(o.region)) <
           std::tuple(ranked_price(held, spot), std::string_view(held.region));
  };
  std::vector<bool> keep(offers.size(), false);
  std::size_t kept = 0;
  std::optional<std::size_t> held;
  for (const std::size_t i : order) {
    const Offer& o = offers[i];
    if (!offer_passes(o, providers, filter)) {
      continue;
    }
    if (held && same_shape(o, offers[*held])) {
      if (beats(o, offers[*held])) {
        keep[*held] = false;
        keep[i] = true;
        held = i;
      }
      continue;
    }
    keep[i] = true;
    held = i;
    ++kept;
  }
  std::vector<const Offer*> out;
  out.reserve(kept);
  for (std::size_t i = 0; i < offers.size(); ++i) {
    if (keep[i]) {
      out.push_back(&offers[i]);
    }
  }
  return out;
}

std::vector<Offer> select_offers(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                 const OfferFilter& filter, bool spot)
{
  std::vector<Offer> out;
  for (const Offer* o : select_offer_ptrs(offers, providers, filter, spot)) {
    out.push_back(*o);
  }
  return out;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// The providers with their listings (data/offers.json: cards, price source, node links) and the
// built-in offers: data/offers.json's dated prices and the market snapshot's (data/market/), both
// compiled in as initialisers at build (providers/gen/). The rules alone are providers/catalog.cpp.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "providers/catalog.hpp"
#include "providers/cloud_rules.hpp"
#include "providers/market/snapshot.hpp"
#include "providers/offer_data.hpp"
#include "providers/offers.hpp"

namespace gpurent {
namespace {

// The rules with data/offers.json's listings (cards, price source) added, then the market clouds
// gpurent does not rent (providers/cloud_rules.cpp).
const std::vector<ProviderInfo>& providers()
{
  static const std::vector<ProviderInfo> k_providers = [] {
    std::vector<ProviderInfo> out(provider_rules().begin(), provider_rules().end());
    const auto clouds = market_cloud_rules();
    out.insert(out.end(), clouds.begin(), clouds.end());
    for (const auto& l : builtin_offer_data().providers) {
      const auto it = std::find_if(out.begin(), out.end(), [&](const ProviderInfo& p) { return p.name == l.provider; });
      if (it != out.end()) {
        it->listed_cards = l.cards;
        it->price_source = l.price_source;
        it->node_links = l.node_links;
      }
    }
    return out;
  }();
  return k_providers;
}

}  // namespace

std::span<const ProviderInfo> provider_catalog() noexcept { return providers(); }

Result<ProviderInfo> find_provider(std::string_view name)
{
  if (!printable_ascii(name)) {
    return fail(Errc::not_found, "provider name holds a control or non-ASCII byte; give one of the known providers as plain text");
  }
  const std::string key = normalize_key(name);
  for (const auto& p : providers()) {
    if (normalize_key(p.name) == key || normalize_key(p.display) == key) {
      return p;
    }
  }
  std::string known;
  for (const auto& p : providers()) {
    known += known.empty() ? "" : ", ";
    known += p.name;
  }
  return fail(Errc::not_found, "provider `" + std::string(name) + "`: unknown; known providers: " + known);
}

namespace {

// data/offers.json's dated prices, then the market snapshot's (price_source "snapshot"), in
// (provider, card, GPUs, region) order, the file's before the snapshot's where they share all
// four, as merge_offers reads them: the snapshot is generated in that order and the file's few
// offers are merged in, so no start-up sorts the market. One vector, merged in place: a second
// copy of the market (350 KB) was fresh heap at every start.
std::vector<Offer> build_builtin_offers(OfferRegions regions)
{
  std::vector<Offer> all;
  const auto& file = builtin_offer_data().offers;
  all.reserve(file.size() + market::snapshot_offer_count(regions));
  all.assign(file.begin(), file.end());
  std::stable_sort(all.begin(), all.end(), offer_before);
  const auto file_end = static_cast<std::ptrdiff_t>(all.size());
  market::append_snapshot_offers(all, regions);
  std::inplace_merge(all.begin(), all.begin() + file_end, all.end(), offer_before);  // stable: the file's first
  return all;
}

}  // namespace

std::span<const Offer> builtin_offers(OfferRegions regions) noexcept
{
  // Each built on first use and never destroyed (the program's whole life uses it): its offers'
  // strings were freed one by one at every exit.
  if (regions == OfferRegions::cheapest_per_shape) {
    static const std::vector<Offer>& k_cheapest = *new std::vector<Offer>(build_builtin_offers(regions));
    return k_cheapest;
  }
  static const std::vector<Offer>& k_every = *new std::vector<Offer>(build_builtin_offers(regions));
  return k_every;
}

}  // namespace gpurent

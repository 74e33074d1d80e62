// SPDX-License-Identifier: MIT
// Fuzz target for the built-in offers' reader (providers/offer_data.cpp): data/offers.json's
// shape against the real provider rules and card catalogue, and the exact decimal price reader.
// Any bytes give offers or one invalid_input error; every offer read names a known provider and
// card id, has 1..max_gpus GPUs, a positive price below $100000 per GPU-hour times its GPUs, a
// spot price below it, a dated built-in origin and a source; no shape comes twice; a price read
// prints back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/offer_data.hpp"

namespace {

const gpurent::ProviderInfo* rule(std::string_view name)
{
  for (const auto& p : gpurent::provider_rules()) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

bool is_card_id(std::string_view id)
{
  for (const auto& c : gpurent::builtin_cards()) {
    if (c.id == id) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto d = gpurent::offer_data_from_json(text, gpurent::provider_rules(), gpurent::builtin_cards())) {
    if (d->offers.size() != d->offer_sources.size()) {
      std::abort();
    }
    std::set<std::tuple<std::string, std::string, std::uint32_t, std::string>> shapes;
    for (std::size_t i = 0; i < d->offers.size(); ++i) {
      const auto& o = d->offers[i];
      const auto* p = rule(o.provider);
      const auto src = d->sources.find(d->offer_sources[i]);
      if (p == nullptr || !is_card_id(o.card) || o.gpus < 1 || o.gpus > p->max_gpus || o.price_per_hour.n <= 0 ||
          o.price_per_hour.n >= 100'000LL * 1'000'000 * o.gpus || src == d->sources.end() || src->second.url.empty() ||
          o.price_origin != "built-in " + src->second.date || src->second.date.size() != 10) {
        std::abort();
      }
      if (o.spot_price_per_hour && !(o.spot_price_per_hour->n > 0 && *o.spot_price_per_hour < o.price_per_hour)) {
        std::abort();
      }
      if (!shapes.emplace(o.provider, o.card, o.gpus, o.region).second) {
        std::abort();
      }
    }
    for (const auto& l : d->providers) {
      if (rule(l.provider) == nullptr) {
        std::abort();
      }
      for (const auto& c : l.cards) {
        if (!is_card_id(c)) {
          std::abort();
        }
      }
    }
  } else if (d.error().code != gpurent::Errc::invalid_input || !d.error().message.starts_with("offer data: ")) {
    std::abort();
  }
  if (const auto usd = gpurent::parse_usd_exact(text)) {
    if (usd->n < 0 || usd->n >= 100'000LL * 1'000'000) {
      std::abort();
    }
    std::string frac = std::to_string(1'000'000 + usd->n % 1'000'000).substr(1);
    const auto again = gpurent::parse_usd_exact(std::to_string(usd->n / 1'000'000) + "." + frac);
    if (!again || again->n != usd->n) {
      std::abort();
    }
  }
  return 0;
}

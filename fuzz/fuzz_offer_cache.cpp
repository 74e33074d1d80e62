// SPDX-License-Identifier: MIT
// Fuzz target for the offer cache reader (providers/offer_cache.hpp): the JSON file of fetched
// offers that `plan` and `offers` read back (it may be damaged or written by another version).
// Any bytes give offers or an invalid_input error, never an escaping exception, a crash or a
// sanitizer report; every offer has 1-64 GPUs, positive prices and a fetch time the clock can
// hold; a cache read back renders to the same cache.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "providers/offer_cache.hpp"

namespace {

bool same(const gpurent::OfferCache& a, const gpurent::OfferCache& b)
{
  if (a.size() != b.size()) {
    return false;
  }
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->first != j->first || i->second.fetched_at != j->second.fetched_at ||
        i->second.offers.size() != j->second.offers.size()) {
      return false;
    }
    for (std::size_t k = 0; k < i->second.offers.size(); ++k) {
      const auto& x = i->second.offers[k];
      const auto& y = j->second.offers[k];
      if (x.provider != y.provider || x.card != y.card || x.gpus != y.gpus || x.price_per_hour != y.price_per_hour ||
          x.spot_price_per_hour != y.spot_price_per_hour || x.region != y.region || x.price_origin != y.price_origin) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cache = gpurent::offer_cache_from_json(text);
  if (!cache) {
    if (cache.error().message.empty()) {
      std::abort();
    }
    return 0;
  }
  for (const auto& [name, entry] : *cache) {
    if (entry.fetched_at.time_since_epoch().count() < 0) {
      std::abort();
    }
    for (const auto& o : entry.offers) {
      if (o.provider != name || o.gpus < 1 || o.gpus > 64 || o.price_per_hour.n <= 0 ||
          (o.spot_price_per_hour && o.spot_price_per_hour->n <= 0)) {
        std::abort();
      }
    }
  }
  const auto again = gpurent::offer_cache_from_json(gpurent::offer_cache_to_json(*cache));
  if (!again || !same(*cache, *again)) {
    std::abort();  // render and parse disagree
  }
  return 0;
}

// SPDX-License-Identifier: MIT
// Fuzz target for the catalogue cache's offers file (providers/market/catalog_cache.hpp), which
// plan and offers read at every start-up (it may be damaged, cut, or written by another version).
// Any bytes give a cache or an invalid_input error naming the line, never an escaping exception,
// a crash or a sanitizer report; every offer belongs to its cloud's range, has a card, 1-64 GPUs
// and positive prices; a cache read back renders to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "providers/market/catalog_cache.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cache = gpurent::market::catalog_cache_from_text(text);
  if (!cache) {
    if (cache.error().code != gpurent::Errc::invalid_input || !cache.error().message.starts_with("line ")) {
      std::abort();
    }
    return 0;
  }
  std::size_t counted = 0;
  for (const auto& c : cache->clouds) {
    if (c.first != counted || c.first + c.count > cache->offers.size()) {
      std::abort();
    }
    counted += c.count;
    for (std::size_t i = c.first; i < c.first + c.count; ++i) {
      const auto& o = cache->offers[i];
      if (o.provider != c.cloud || o.card.empty() || o.gpus < 1 || o.gpus > 64 || o.price_per_hour.n <= 0 ||
          (o.spot_price_per_hour && o.spot_price_per_hour->n <= 0)) {
        std::abort();
      }
    }
  }
  if (counted != cache->offers.size()) {
    std::abort();
  }
  const std::string rendered = gpurent::market::catalog_cache_to_text(*cache);
  const auto again = gpurent::market::catalog_cache_from_text(rendered);
  if (!again || gpurent::market::catalog_cache_to_text(*again) != rendered) {
    std::abort();  // render and parse disagree
  }
  return 0;
}

// SPDX-License-Identifier: MIT
// Fuzz target for the market catalogue reader and mapper (providers/market/catalog_csv.cpp,
// catalog_offers.cpp): SkyPilot's vms.csv as downloaded, which may be truncated, an HTML error
// page, garbage or a future layout. Any bytes give rows or an invalid_input error naming the
// cloud, never an escaping exception, a crash or a sanitizer report; a row's prices are absent or
// positive and below $100000/h (never 0); every offer has a card, 1-1024 GPUs and a positive price.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "providers/market/catalog_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto file = gpurent::market::read_catalog_csv("fuzz", text);
  if (!file) {
    if (!file.error().message.starts_with("catalogue fuzz, line ")) {
      std::abort();
    }
    return 0;
  }
  const auto ok_price = [](const std::optional<gpurent::MicroUsd>& p) {
    return !p || (p->n > 0 && p->n < 100'000'000'000LL);
  };
  if (file->rows.empty()) {
    std::abort();  // no GPU rows is an error, not an empty file
  }
  for (const auto& r : file->rows) {
    if (r.accelerator_name.empty() || r.line < 2 || !ok_price(r.price) || !ok_price(r.spot_price) ||
        r.accelerator_count > 1024 || (r.accelerator_count == 0 && (r.price || r.spot_price))) {
      std::abort();
    }
  }
  const auto offers = gpurent::market::offers_from_catalog(*file, "catalogue", "2026-12-05");
  for (const auto& o : offers.offers) {
    if (o.card.empty() || o.provider != "fuzz" || o.gpus < 1 || o.gpus > 1024 || o.price_per_hour.n <= 0) {
      std::abort();
    }
  }
  return 0;
}

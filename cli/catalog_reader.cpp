// SPDX-License-Identifier: MIT
// The catalogue reader the refresh validates downloads with: SkyPilot's vms.csv read on libcsv and
// its accelerator names mapped to cards (providers/market/catalog_csv.hpp). A file it refuses
// (not CSV, an HTML page, an unknown layout, a truncated record, no GPU rows) never replaces the
// cached copy (providers/market/catalog_refresh.cpp).
#include "cli/catalog_support.hpp"
#include "providers/market/catalog_csv.hpp"

namespace gpurent {

market::CatalogReader catalog_reader()
{
  return [](std::string_view cloud, std::string_view text) -> Result<market::CatalogReading> {
    TRY_ASSIGN(const market::CatalogFile file, market::read_catalog_csv(cloud, text));
    // The cache dates the offers with the fetch (catalog_cache.cpp), so no date is given here.
    market::MarketOffers mapped = market::offers_from_catalog(file, "catalogue", "");
    market::CatalogReading out;
    out.offers = std::move(mapped.offers);
    for (const auto& w : file.warnings) {
      out.warnings.push_back(w.text);
    }
    for (const auto& w : mapped.warnings) {
      out.warnings.push_back(w.text);
    }
    return out;
  };
}

}  // namespace gpurent

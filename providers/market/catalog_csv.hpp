// SPDX-License-Identifier: MIT
#pragma once
// SkyPilot's catalogue (skypilot-catalog, catalogs/v7|v8/<cloud>/vms.csv): one row per instance
// type and region, USD per hour for the whole instance. The reader (catalog_csv.cpp, on libcsv)
// parses by column name and keeps the GPU rows; the mapper (catalog_offers.cpp) turns them into
// offers with the names of data/market/names.json. Pure: text in, values out, no I/O.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/catalog.hpp"

namespace gpurent::market {

struct CatalogRow {
  std::size_t line = 0;  // the line of the file where the record ends (1 = the header)
  std::string instance_type, accelerator_name;
  std::uint32_t accelerator_count = 0;
  std::string gpu_info, region, zone, upstream;  // upstream: the UpstreamCloudId column, verbatim
  std::optional<double> vcpus, memory_gib;
  std::optional<MicroUsd> price, spot_price;  // absent = empty/placeholder/not a number
};

struct CatalogWarning {
  std::size_t line = 0;
  std::string text;  // names the cloud, the line and the column
};

struct CatalogFile {
  std::string cloud;
  std::vector<CatalogRow> rows;
  std::vector<CatalogWarning> warnings;
};

// GPU rows only (AcceleratorName non-empty). Whole-file faults (not CSV, an HTML page, a header
// without the required columns, a truncated last record, no rows) are errors naming the cloud and
// line; a bad value in one row is a warning naming cloud, line and column and that row's price is
// absent (never 0).
[[nodiscard]] Result<CatalogFile> read_catalog_csv(std::string_view cloud, std::string_view text);

// A catalogue price ("2.99", "0.36979999999999996", "23.60") to whole micro-dollars, rounded half
// up at the seventh decimal; digits and one point only. No value for text that is not such a
// number or is $100000 or more per hour.
[[nodiscard]] std::optional<MicroUsd> parse_catalog_usd(std::string_view text);

// A name the mapping (data/market/names.json) does not turn into a card, with how many rows use it.
struct UnmappedName {
  std::string cloud;
  std::string accelerator_name;
  std::string gpu_info;    // the first row's GpuInfo, to tell variants apart
  std::size_t rows = 0;
  std::string reason;      // "no rule" or the rule's reason (e.g. "AMD: gpurent is CUDA-only")
};

struct MarketOffers {
  std::vector<Offer> offers;
  std::vector<UnmappedName> unmapped;
  std::vector<CatalogWarning> warnings;
};

// Rows to offers: names mapped to card ids (data), quirks applied; names it cannot map are
// returned, never guessed. One offer per (card, GPUs, region, GPU-only): the cheapest on-demand
// row. A row without an on-demand price is not offered.
[[nodiscard]] MarketOffers offers_from_catalog(const CatalogFile& file, std::string_view price_source,
                                               std::string_view price_date);

}  // namespace gpurent::market

// SPDX-License-Identifier: MIT
// Catalogue rows to offers: the card from data/market/names.json, the quirks applied (GPU-only
// rows, an aggregator's upstream, a spot price above on demand flagged), one offer per shape and
// region (the cheapest row), rows without an on-demand price left out.
#include <map>
#include <tuple>

#include "providers/market/catalog_csv.hpp"
#include "providers/market/name_map.hpp"

namespace gpurent::market {
namespace {

std::string upstream_of(const CloudQuirks* q, const CatalogRow& row)
{
  if (q == nullptr || q->upstream_separator.empty()) {
    return {};
  }
  const auto at = row.instance_type.find(q->upstream_separator);
  return at == std::string::npos || at == 0 ? std::string() : row.instance_type.substr(0, at);
}

}  // namespace

MarketOffers offers_from_catalog(const CatalogFile& file, const NameMap& map, std::string_view price_source,
                                 std::string_view price_date)
{
  MarketOffers out;
  out.warnings = file.warnings;
  const CloudQuirks* quirks = quirks_of(map, file.cloud);
  std::map<std::pair<std::string, std::string>, std::size_t> unmapped;  // (name, reason) -> index
  using Slot = std::tuple<std::string, std::uint32_t, std::string, bool>;
  std::map<Slot, std::size_t> slots;  // (card, gpus, region, gpu_only) -> index in out.offers
  for (const auto& row : file.rows) {
    const NameRule* rule = match_name(map, file.cloud, row);
    if (rule == nullptr || !rule->card) {
      const std::string reason = rule == nullptr ? "no rule in data/market/names.json" : rule->why;
      const auto [it, fresh] = unmapped.try_emplace({row.accelerator_name, reason}, out.unmapped.size());
      if (fresh) {
        out.unmapped.push_back(UnmappedName{file.cloud, row.accelerator_name, row.gpu_info, 0, reason});
      }
      ++out.unmapped[it->second].rows;
      continue;
    }
    if (!row.price || row.accelerator_count == 0) {
      continue;  // a row without an on-demand price is not offered
    }
    Offer o;
    o.provider = file.cloud;
    o.card = *rule->card;
    o.gpus = row.accelerator_count;
    o.price_per_hour = *row.price;
    o.spot_price_per_hour = row.spot_price;
    o.spot_above_on_demand = row.spot_price && *row.spot_price > *row.price;
    o.region = row.region;
    o.price_source = std::string(price_source);
    o.price_date = std::string(price_date);
    o.price_origin = std::string(price_source) + " " + std::string(price_date);
    o.instance_type = row.instance_type;
    o.upstream = upstream_of(quirks, row);
    o.gpu_only = quirks != nullptr && quirks->accelerator_rows_gpu_only && row.instance_type.empty();
    const auto [it, fresh] = slots.try_emplace(Slot{o.card, o.gpus, o.region, o.gpu_only}, out.offers.size());
    if (fresh) {
      out.offers.push_back(std::move(o));
    } else if (o.price_per_hour < out.offers[it->second].price_per_hour) {
      out.offers[it->second] = std::move(o);
    }
  }
  return out;
}

MarketOffers offers_from_catalog(const CatalogFile& file, std::string_view price_source, std::string_view price_date)
{
  return offers_from_catalog(file, builtin_name_map(), price_source, price_date);
}

}  // namespace gpurent::market

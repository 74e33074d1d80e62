// SPDX-License-Identifier: MIT
#pragma once
// The pinned market snapshot (data/market/snapshot.json and its CSVs), compiled in at build by
// providers/gen/gen_market_snapshot.cpp with the catalogue reader and the name mapper: its offers
// (price_source "snapshot"), the names it could not map, and where each cloud's file comes from.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "providers/catalog.hpp"
#include "providers/market/catalog_csv.hpp"

namespace gpurent::market {

struct SnapshotCloud {
  std::string_view cloud;
  std::string_view source;  // "catalogs/v7/runpod/vms.csv"
  std::string_view commit;  // of github.com/skypilot-org/skypilot-catalog
  std::size_t rows = 0;     // GPU rows in the shipped file
  std::string_view kept;    // how the rows were chosen, when not all ("PARTIAL: ...")
};

[[nodiscard]] std::string_view snapshot_date() noexcept;  // "YYYY-MM-DD"
[[nodiscard]] std::span<const SnapshotCloud> snapshot_clouds() noexcept;
// The offers, from initialisers (no CSV or JSON read): appended to `out` (builtin_offers() does,
// once), every region's or per shape only the one select_offer_ptrs picks without --region; or
// as a new list (every region's).
void append_snapshot_offers(std::vector<Offer>& out, OfferRegions regions);
[[nodiscard]] std::size_t snapshot_offer_count(OfferRegions regions) noexcept;
[[nodiscard]] std::vector<Offer> snapshot_offers();
[[nodiscard]] std::vector<UnmappedName> snapshot_unmapped();

}  // namespace gpurent::market

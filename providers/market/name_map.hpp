// SPDX-License-Identifier: MIT
#pragma once
// The catalogue's accelerator names to card ids, as data (data/market/names.json): per-cloud
// rules, then rules for every cloud; a name no rule maps is reported, never guessed. Also the
// per-cloud quirks the file states (GPU-only rows, where an aggregator names its upstream).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/market/catalog_csv.hpp"

namespace gpurent::market {

struct NameRule {
  std::string cloud;          // "" = every cloud (tried after the cloud's own rules)
  std::string name;           // AcceleratorName, exact
  std::string instance_type;  // substrings that must occur (ignoring case); "" = no condition
  std::string upstream;
  std::string gpu_info;
  std::optional<std::string> card;  // absent: known, deliberately not mapped
  std::string why;
};

struct CloudQuirks {
  std::string cloud;
  bool accelerator_rows_gpu_only = false;  // rows with no InstanceType price the GPUs only (GCP)
  std::string upstream_separator;          // aggregator: InstanceType's prefix before this is the upstream
};

struct NameMap {
  std::vector<NameRule> rules;  // in the file's order
  std::vector<CloudQuirks> clouds;
};

// Reads data/market/names.json's shape. Strict: unknown keys, a rule without a name, a null card
// without `why` are errors naming the rule. Card ids are checked by the build's generator and the
// tests against data/cards.json (check_name_map_cards).
[[nodiscard]] Result<NameMap> name_map_from_json(std::string_view text);
// Every card a rule names is one of `card_ids`.
[[nodiscard]] Result<void> check_name_map_cards(const NameMap& map, const std::vector<std::string>& card_ids);
// data/market/names.json as compiled in, read on first use (when catalogue rows are mapped: at
// build, for the snapshot, and when a fetched catalogue is processed; never by plan's start-up).
[[nodiscard]] const NameMap& builtin_name_map();
[[nodiscard]] std::string_view embedded_names_json() noexcept;

// The rule that decides this row's card, if any (its card may be absent: deliberately unmapped).
[[nodiscard]] const NameRule* match_name(const NameMap& map, std::string_view cloud, const CatalogRow& row);
[[nodiscard]] const CloudQuirks* quirks_of(const NameMap& map, std::string_view cloud);

// offers_from_catalog with an explicit map (the tests' own maps).
[[nodiscard]] MarketOffers offers_from_catalog(const CatalogFile& file, const NameMap& map, std::string_view price_source,
                                               std::string_view price_date);

}  // namespace gpurent::market

// SPDX-License-Identifier: MIT
#pragma once
// Providers as data: billing rules and state rules (here, in C++), the cards each provider lists
// and the built-in offers with dated prices (data/offers.json, read by providers/offer_data.cpp).
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/billing.hpp"
#include "providers/node_link.hpp"

namespace gpurent {

struct Offer {
  std::string provider;        // "gpucloud", "cloudgpu", "lambda", "runpod", "vast"
  std::string card;            // Card::id
  std::uint32_t gpus = 1;      // GPUs in the server
  MicroUsd price_per_hour;     // whole server, on demand
  std::optional<MicroUsd> spot_price_per_hour;
  std::string region;
  std::string price_origin;    // "built-in 2026-11-30", "config", "fetched 2026-11-30T10:00:00Z"
  // The whole market (cli.md plan v4 "The whole market"): where the price comes from, how old it
  // is, and what the row says about itself.
  std::string price_source;    // "config", "live", "catalogue", "snapshot"; "" for a hand-kept built-in price
  std::string price_date;      // "YYYY-MM-DD" (snapshot: its date; catalogue: the fetch day; live: today)
  std::string instance_type;   // the cloud's instance type, "" when it has none (GCP accelerator rows)
  std::string upstream;        // aggregator/marketplace rows: the cloud or host the row resells, "" otherwise
  bool gpu_only = false;       // the price covers the GPUs only (GCP accelerator rows): the host VM is extra
  bool spot_above_on_demand = false;  // the source's spot price is above on demand: kept, flagged
};

struct ProviderInfo {
  std::string name;            // registry key
  std::string display;
  BillingPolicy billing;
  BillingPolicy spot_billing;  // usually the same as billing
  StateRule stopped;
  StateRule hibernated;
  std::string destroy_loses;   // e.g. "local storage is deleted"
  std::string workspace_dir;   // default remote path for backups, e.g. "/workspace"
  std::uint32_t max_gpus = 8;
  std::uint32_t min_card_gb = 0;
  // Sells a server of any GPU count 1..max_gpus of a card at n x the per-GPU price (RunPod's
  // pods). Otherwise only the listed shapes exist (Lambda's instance types, Vast's offers, the
  // config's "<card>x<gpus>" keys).
  bool per_gpu_servers = false;
  bool has_api = false;        // false: use `gpurent attach`
  std::string billing_label;   // "hourly", "per-minute", "per-second"
  std::string facts_source;    // where the billing facts come from, dated
  // The billing rule's source for plan/offers JSON (`billing.source`): a URL with the words it
  // says and the day it was read, or "unknown" (no published rule: per hour assumed, said in text).
  std::string billing_source;
  std::string currency = "USD";
  std::string default_region;              // e.g. "canada-montreal"; empty when the provider has many
  bool spot_available = false;             // interruptible/spot servers exist
  std::string spot_note;                   // what spot means there (or why there is none)
  // From data/offers.json (provider_catalog() only; empty in provider_rules()):
  std::vector<std::string> listed_cards;   // Card::id the provider's own material lists (priced or not)
  std::string price_source;                // where the built-in prices come from ("" = none)
  std::vector<NodeLink> node_links;        // how its servers reach each other (plan --nodes)
  // gpurent creates its servers itself (an adapter with an API); otherwise rent it there and
  // `gpurent attach --provider <name>`.
  [[nodiscard]] bool rentable() const noexcept { return has_api; }
};

// Every provider and market cloud: the rules below with data/offers.json's listings, then the
// market clouds gpurent does not rent (providers/cloud_rules.hpp).
[[nodiscard]] std::span<const ProviderInfo> provider_catalog() noexcept;
// The facts kept in C++ alone (billing and state rules, limits) of the providers data/offers.json
// lists (gpucloud, cloudgpu, lambda, runpod, vast), without its listings: what that file is
// checked against.
[[nodiscard]] std::span<const ProviderInfo> provider_rules() noexcept;
[[nodiscard]] Result<ProviderInfo> find_provider(std::string_view name);
// Built-in offers (dated prices, data/offers.json, and the market snapshot). Config overrides and
// fetched offers are merged by the caller. `cheapest_per_shape`: of the snapshot's regions of a
// shape (cloud, card, GPUs) only the one select_offer_ptrs picks without a region filter (on
// demand or --spot), which is all plan without --region reads (a third of the rows, not built at
// its start-up); select_offer_ptrs gives the same offers over either.
enum class OfferRegions { every, cheapest_per_shape };
[[nodiscard]] std::span<const Offer> builtin_offers(OfferRegions regions = OfferRegions::every) noexcept;
// Human name of the billing increment: "1 h", "1 min", "1 s".
[[nodiscard]] std::string increment_label(std::chrono::seconds increment);

}  // namespace gpurent

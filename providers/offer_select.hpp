// SPDX-License-Identifier: MIT
#pragma once
// Which offers a command ranks (plan, offers): the clouds asked for (--provider A,B), only those
// gpurent rents itself (--rentable), one region (--region), and, per (cloud, card, GPUs), the
// cheapest region, so that the market's hundreds of region rows rank as one option each.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/catalog.hpp"

namespace gpurent {

struct OfferFilter {
  std::vector<std::string> clouds;    // --provider A,B as registry keys; empty: every cloud
  bool rentable_only = false;         // --rentable: clouds gpurent rents itself (ProviderInfo::rentable)
  std::optional<std::string> region;  // --region R: that region only (case-insensitive, exact)
  [[nodiscard]] bool empty() const noexcept { return clouds.empty() && !rentable_only && !region; }
  // Whether `cloud` is among --provider's (true without --provider).
  [[nodiscard]] bool names(std::string_view cloud) const noexcept;
};

// "runpod,nebius" (spaces allowed around names, display names accepted): registry keys in the
// order given, each once. An unknown or empty name is an Errc::usage error naming it.
[[nodiscard]] Result<std::vector<std::string>> parse_cloud_list(std::string_view text);

// Whether the offer passes the filter (its cloud known in `providers` where --rentable asks).
[[nodiscard]] bool offer_passes(const Offer& o, std::span<const ProviderInfo> providers, const OfferFilter& filter);

// The offers that pass `filter`, and of each (provider, card, gpus) only the cheapest region (by
// the spot price where `spot` and the offer has one, else on demand; ties: the first region by
// name). Keeps the input order of the survivors.
[[nodiscard]] std::vector<Offer> select_offers(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                               const OfferFilter& filter, bool spot);
// The same offers, as pointers into `offers` (plan's ranking: no copy of the market).
[[nodiscard]] std::vector<const Offer*> select_offer_ptrs(std::span<const Offer> offers, std::span<const ProviderInfo> providers,
                                                          const OfferFilter& filter, bool spot);

}  // namespace gpurent

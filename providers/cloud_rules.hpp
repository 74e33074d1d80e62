// SPDX-License-Identifier: MIT
#pragma once
// The clouds of the market catalogue that gpurent does not rent itself (cli.md plan v4 "The whole
// market"): their billing rules as data, each with its source (docs/providers.md "Billing per
// cloud"). A cloud that publishes no rule gpurent found is billed per started hour, its
// billing_source "unknown", and every cost line says so.
#include <span>
#include <string_view>

#include "providers/catalog.hpp"

namespace gpurent {

// billing_source of a cloud whose billing rule is not published (or was not found): per hour assumed.
inline constexpr std::string_view k_billing_unknown = "unknown";

// aws, gcp, nebius, hyperbolic, primeintellect, shadeform, cudo, seeweb, mithril, simplepod,
// verda, jarvislabs: has_api false (rented there, then `gpurent attach`), catalogue rows are
// exact shapes (per_gpu_servers false).
[[nodiscard]] std::span<const ProviderInfo> market_cloud_rules() noexcept;

// The address of a billing_source ("https://… : \"quote\" (read …)"): its first URL, or the
// source as it is when it names none ("unknown"). What JSON gives per option (the quotes are in
// docs/providers.md): a plan lists hundreds of options, each with its cloud's source.
[[nodiscard]] std::string_view billing_source_link(std::string_view source) noexcept;

// Whether the cloud's billing rule is published (billing_source is not "unknown").
[[nodiscard]] bool billing_known(const ProviderInfo& p) noexcept;

}  // namespace gpurent

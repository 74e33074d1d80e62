// SPDX-License-Identifier: MIT
#pragma once
// How a provider's servers reach each other when one job spans several of them (plan --nodes):
// a cluster product with its own fabric (InfiniBand/RoCE, a published bandwidth per server) or
// separate servers on public addresses (no published bandwidth). Data, from data/offers.json's
// `node_links` of each provider, each with its source; docs/providers.md "Between servers".
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.hpp"

namespace gpurent {

inline constexpr std::uint32_t k_max_nodes = 64;  // cli.md: --nodes 1..64

struct NodeLink {
  std::string kind;                  // "cluster" (a fabric between servers) | "public" (separate servers)
  std::string product;               // e.g. "Instant Clusters"; "" for separate servers
  std::vector<std::string> cards;    // Card::id the entry applies to; empty: every card
  std::uint32_t gpus_per_node = 0;   // the server shape the product rents; 0: any listed shape
  std::uint32_t max_nodes = k_max_nodes;
  std::optional<double> gbit_per_s;  // each server's bandwidth to the others; nullopt: not published
  std::string source;                // URL (or the seed document)
  std::string quote;                 // the source's words
  [[nodiscard]] bool known() const noexcept { return gbit_per_s.has_value() && *gbit_per_s > 0; }
  // Bytes per second one way, nullopt when not published.
  [[nodiscard]] std::optional<double> bytes_per_s() const noexcept
  {
    return known() ? std::optional<double>(*gbit_per_s * 1e9 / 8.0) : std::nullopt;
  }
  // "InfiniBand/RoCE 3200 Gbit/s (RunPod Instant Clusters)", "public addresses, bandwidth not published".
  [[nodiscard]] std::string label() const;
};

// The first entry of `links` for `card` (in the file's order: specific entries before the
// catch-all), nullopt when the provider's entries name none for it.
[[nodiscard]] const NodeLink* node_link_for(std::span<const NodeLink> links, const std::string& card) noexcept;

// Reads a provider's `node_links` list (strict: only the keys above, kind cluster|public, a
// cluster with its bandwidth and product, 1 <= max_nodes <= 64, a source and a quote each);
// `where` names the entry in errors. `card_known` says whether a card id exists.
[[nodiscard]] Result<std::vector<NodeLink>> node_links_from_json(const nlohmann::json& list, const std::string& where,
                                                                 const std::function<bool(const std::string&)>& card_known);

}  // namespace gpurent

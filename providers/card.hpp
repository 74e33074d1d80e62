// SPDX-License-Identifier: MIT
#pragma once
// GPU cards with the memory the driver really reports (not the label).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"

namespace gpurent {

struct Card {
  std::string id;                    // canonical short id, e.g. "rtx-4090", "a100-80gb"
  std::string display;               // e.g. "RTX 4090 24GB"
  std::uint32_t label_gb = 0;        // the marketing size, e.g. 24
  Bytes usable;                      // cudaMemGetInfo total / nvidia-smi memory.total
  std::vector<std::string> aliases;  // spellings accepted besides id/display
  std::string source;                // where the usable figure comes from
};

[[nodiscard]] std::span<const Card> card_catalog() noexcept;
// Accepts the usual spellings: "A100-80GB", "a100 80g", "RTX 4090", "rtx-pro-6000".
[[nodiscard]] Result<Card> find_card(std::string_view name);
// A job fits when total <= usable minus a 5% margin.
[[nodiscard]] constexpr Bytes fit_limit(const Card& c) noexcept { return Bytes{c.usable.n / 100 * 95 + c.usable.n % 100 * 95 / 100}; }

}  // namespace gpurent

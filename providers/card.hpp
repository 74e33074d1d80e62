// SPDX-License-Identifier: MIT
#pragma once
// GPU cards as sold by the providers: the memory the driver really reports (not the label), the
// compute capability that decides which kernels run, bandwidth, tensor throughput and the link
// between GPUs. The built-in cards are data (data/cards.json, compiled in: providers/card_data.cpp);
// the config file's [cards.<id>] tables add or override cards (install_user_cards).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"

namespace gpurent {

// Dense tensor-core throughput (TFLOPS, FP32 accumulate), nullopt when the card lacks the format
// or no vendor figure was found.
struct CardTflops {
  std::optional<double> bf16, fp16, fp8, fp4, int8;
  bool operator==(const CardTflops&) const = default;
};

// How the card's GPUs talk to each other inside one server.
struct CardLink {
  std::optional<std::uint32_t> nvlink_gen;       // nullopt: no NVLink
  std::optional<std::uint32_t> nvlink_gb_per_s;  // per GPU, both directions
  std::optional<std::uint32_t> pcie_gen;
  // NVLink only through an optional bridge pairing two cards (RTX 3090, A6000, A100/H100 PCIe,
  // H100 NVL): a rented box has it only when the provider says so.
  bool nvlink_bridge = false;
  bool operator==(const CardLink&) const = default;
};

struct Card {
  std::string id;                    // canonical short id, e.g. "rtx-4090", "a100-80gb"
  std::string display;               // e.g. "RTX 4090 24GB"
  std::uint32_t label_gb = 0;        // the marketing size, e.g. 24
  Bytes usable;                      // cudaMemGetInfo total / nvidia-smi memory.total
  std::vector<std::string> aliases;  // spellings accepted besides id/display
  std::string source;                // where the usable figure comes from
  // Compute capability as major x 10 + minor (89 for 8.9, 120 for 12.0); nullopt when unknown
  // (a user card without one): every engine rule then answers "unknown", never "native".
  std::optional<std::uint32_t> compute_capability;
  std::string arch;                         // "Ada Lovelace (AD102)"
  std::optional<std::uint32_t> mem_bw_gbs;  // GB/s (1e9 B/s)
  CardTflops tflops;
  CardLink link;
  std::map<std::string, std::string> sources;  // figure -> where it comes from ("title <url>")
  std::string gaps;                         // what is unknown and what that costs ("" = complete)
  std::string origin = "built-in";          // "built-in", or "config" for a [cards.<id>] table
  bool operator==(const Card&) const = default;
};

// The built-in cards, then the user's (a user card with a built-in id replaces it).
[[nodiscard]] std::span<const Card> card_catalog() noexcept;
// The built-in cards only (data/cards.json).
[[nodiscard]] std::span<const Card> builtin_cards() noexcept;
// Sets the user's cards for the rest of the process (the CLI calls it with the config's
// [cards.<id>] tables before a command runs; tests call it to reset). Spans from card_catalog()
// stay valid unless the user's cards change.
void install_user_cards(std::vector<Card> cards);
// Accepts the usual spellings: "A100-80GB", "a100 80g", "RTX 4090", "rtx-pro-6000".
[[nodiscard]] Result<Card> find_card(std::string_view name);
// The card id a name resolves to (an old id such as "h100-80gb" names "h100-sxm"), or the name
// as given when it resolves to none.
[[nodiscard]] std::string canonical_card_id(std::string_view name);
// A job fits when total <= usable minus a 5% margin.
[[nodiscard]] constexpr Bytes fit_limit(const Card& c) noexcept { return Bytes{c.usable.n / 100 * 95 + c.usable.n % 100 * 95 / 100}; }
// "8.9", or "unknown".
[[nodiscard]] std::string compute_capability_text(const Card& c);

// Parses a card catalogue in data/cards.json's shape (the whole file). Errors name the card and key.
[[nodiscard]] Result<std::vector<Card>> cards_from_json(std::string_view text);
// "8.9" -> 89, "12.0" -> 120; errors for anything else.
[[nodiscard]] Result<std::uint32_t> parse_compute_capability(std::string_view text);

}  // namespace gpurent

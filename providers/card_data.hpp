// SPDX-License-Identifier: MIT
#pragma once
// The card catalogue file (data/cards.json) as parsed: the cards and the names that fit several.
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "providers/card.hpp"

namespace gpurent {

// A spelling that names more than one card ("a100"): the user must say which.
struct AmbiguousCardName {
  std::string key;  // normalize_key form
  std::vector<std::string> cards;
  bool operator==(const AmbiguousCardName&) const = default;
};

struct CardData {
  std::vector<Card> cards;
  std::vector<AmbiguousCardName> ambiguous;
};

[[nodiscard]] Result<CardData> card_data_from_json(std::string_view text);
// data/cards.json as compiled into the binary (text).
[[nodiscard]] std::string_view embedded_cards_json() noexcept;
// data/cards.json as read at build time by the strict reader and compiled in as initialisers
// (providers/gen/gen_card_catalog.cpp), so no JSON is parsed at start-up.
[[nodiscard]] const CardData& builtin_card_data();
// A card the user adds or overrides (the config's [cards.<id>] table, as JSON text with
// data/cards.json's card keys): over the built-in card with that id when there is one, else a new
// card (usable_gib required). Errors name the key.
[[nodiscard]] Result<Card> user_card_from_json(std::string_view id, std::string_view keys_json);

}  // namespace gpurent

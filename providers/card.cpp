// SPDX-License-Identifier: MIT
// Finding a card by the names people use. The cards themselves are data (data/cards.json, read by
// card_data.cpp; the usable memory is what CUDA reports as the device's total, not the label).
#include "providers/card.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "providers/card_data.hpp"

namespace gpurent {
namespace {

std::vector<Card>& user_cards()
{
  static std::vector<Card> k_user;
  return k_user;
}

// The built-in cards with the user's merged in (a user card with a built-in id replaces it).
std::vector<Card>& merged()
{
  static std::vector<Card> k_merged = builtin_card_data().cards;
  return k_merged;
}

const std::vector<Card>& catalog() { return merged(); }

const std::vector<AmbiguousCardName>& ambiguous_names() { return builtin_card_data().ambiguous; }

// "a10080gb" also matches "a10080g" and "a10080".
std::vector<std::string> key_variants(std::string key)
{
  std::vector<std::string> out{key};
  if (key.size() > 2 && key.ends_with("gb")) {
    out.push_back(key.substr(0, key.size() - 1));
  }
  return out;
}

std::string strip_vendor(std::string key)
{
  for (std::string_view prefix : {"nvidia", "geforce"}) {
    if (key.starts_with(prefix) && key.size() > prefix.size()) {
      key.erase(0, prefix.size());
    }
  }
  return key;
}

bool card_matches(const Card& c, const std::string& wanted)
{
  std::vector<std::string> keys{normalize_key(c.id), normalize_key(c.display)};
  for (const auto& a : c.aliases) {
    keys.push_back(normalize_key(a));
  }
  for (const auto& k : keys) {
    for (const auto& v : key_variants(k)) {
      if (v == wanted || strip_vendor(v) == wanted) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

std::span<const Card> card_catalog() noexcept { return catalog(); }

std::span<const Card> builtin_cards() noexcept { return builtin_card_data().cards; }

void install_user_cards(std::vector<Card> cards)
{
  if (cards.empty() && user_cards().empty()) {
    return;  // the common case: spans handed out earlier stay valid
  }
  user_cards() = std::move(cards);
  std::vector<Card> all = builtin_card_data().cards;
  for (const Card& u : user_cards()) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const Card& c) { return normalize_key(c.id) == normalize_key(u.id); });
    if (it != all.end()) {
      *it = u;
    } else {
      all.push_back(u);
    }
  }
  merged() = std::move(all);
}

std::string canonical_card_id(std::string_view name)
{
  const auto c = find_card(name);
  return c ? c->id : std::string(name);
}

std::string compute_capability_text(const Card& c)
{
  if (!c.compute_capability) {
    return "unknown";
  }
  return std::to_string(*c.compute_capability / 10) + "." + std::to_string(*c.compute_capability % 10);
}

Result<Card> find_card(std::string_view name)
{
  if (!printable_ascii(name)) {
    return fail(Errc::not_found, "card name holds a control or non-ASCII byte; give a card such as `rtx-4090` (see `gpurent offers`)");
  }
  const std::string raw = normalize_key(name);
  if (raw.empty()) {
    return fail(Errc::invalid_input, "card: empty name; give a card such as `rtx-4090` or `a100-80gb` (see `gpurent offers`)");
  }
  std::vector<std::string> wanted = key_variants(raw);
  const std::string stripped = strip_vendor(raw);
  if (stripped != raw) {
    for (auto& v : key_variants(stripped)) {
      wanted.push_back(v);
    }
  }
  for (const auto& w : wanted) {
    for (const auto& amb : ambiguous_names()) {
      if (w == amb.key) {
        std::string list;
        for (const auto& ch : amb.cards) {
          list += list.empty() ? "" : ", ";
          list += ch;
        }
        return fail(Errc::invalid_input,
                    "card `" + std::string(name) + "`: ambiguous; say which: " + list);
      }
    }
  }
  for (const auto& w : wanted) {
    const auto& cards = catalog();
    const auto it = std::find_if(cards.begin(), cards.end(), [&](const Card& c) { return card_matches(c, w); });
    if (it != cards.end()) {
      return *it;
    }
  }
  std::string known;
  for (const auto& c : catalog()) {
    known += known.empty() ? "" : ", ";
    known += c.id;
  }
  return fail(Errc::not_found, "card `" + std::string(name) + "`: not in the catalogue; known cards: " + known);
}

}  // namespace gpurent

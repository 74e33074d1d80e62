// SPDX-License-Identifier: MIT
// Fuzz target for the card catalogue's readers (providers/card_data.cpp): data/cards.json's
// shape, and a user's [cards.<id>] table as JSON over a built-in card or a new one. Any bytes
// give cards or one error naming the card and key; every card read has a name, usable memory
// within the documented bound, and a compute capability that prints back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/units.hpp"
#include "providers/card.hpp"
#include "providers/card_data.hpp"

namespace {

void check(const gpurent::Card& c)
{
  if (c.id.empty() || c.display.empty() || c.usable.n == 0 || c.usable.n > 4096ULL * gpurent::k_gib) {
    std::abort();
  }
  if (c.compute_capability) {
    const auto again = gpurent::parse_compute_capability(gpurent::compute_capability_text(c));
    if (!again || *again != *c.compute_capability) {
      std::abort();
    }
  }
}

void check_error(const gpurent::Error& e)
{
  if (e.message.empty() || e.code != gpurent::Errc::invalid_input) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto d = gpurent::card_data_from_json(text)) {
    for (const auto& c : d->cards) {
      check(c);
    }
    for (const auto& a : d->ambiguous) {
      if (a.key.empty() || a.cards.size() < 2) {
        std::abort();
      }
    }
  } else {
    check_error(d.error());
  }
  // The same bytes as a user's table over a built-in card and as a new card.
  for (const char* id : {"rtx-4090", "my-card"}) {
    if (const auto c = gpurent::user_card_from_json(id, text)) {
      check(*c);
      if (c->origin != "config") {
        std::abort();
      }
    } else {
      check_error(c.error());
    }
  }
  (void)gpurent::parse_compute_capability(text);
  return 0;
}

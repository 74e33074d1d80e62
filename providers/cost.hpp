// SPDX-License-Identifier: MIT
#pragma once
// The bill of a run under a provider's rules: pure, exact, integer micro-USD.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/billing.hpp"
#include "providers/catalog.hpp"

namespace gpurent {

struct StateCost {
  std::chrono::seconds time{0};    // how long the server spends in the state
  std::chrono::seconds billed{0};  // what the provider bills (increments, minimum, deploy charge)
  MicroUsd rate_per_hour;          // the rate applied in this state (whole server)
  MicroUsd exact;                  // rate * billed / 3600, rounded up to the micro-dollar
  MicroUsd cost;                   // `exact` rounded half up to whole cents (what is shown and summed)
};

struct CostBreakdown {
  std::string provider;
  std::string card;
  std::uint32_t gpus = 1;
  bool spot = false;
  MicroUsd price_per_hour;  // running rate for the whole server (spot rate under --spot)
  BillingPolicy billing;    // the policy applied (spot_billing under --spot)
  StateCost running;
  StateCost stopped;
  StateCost hibernated;
  MicroUsd total;           // sum of the three rounded costs
  std::string currency = "USD";
  std::vector<std::string> notes;
};

// Rounding (documented in docs/providers.md): each state is billed on its own, its time rounded
// up to whole increments; the running state also gets the minimum and the deploy charge; the
// charge is rate * seconds / 3600 rounded up to the micro-dollar, then to the nearest cent.
// A state the provider lacks (or forbids on spot) with time > 0 is Errc::refused with the reason.
[[nodiscard]] Result<CostBreakdown> compute_cost(const ProviderInfo& provider, const Offer& offer, bool spot,
                                                 std::chrono::seconds running, std::chrono::seconds stopped,
                                                 std::chrono::seconds hibernated);

// What the server costs per hour while in `state` (whole server). Storage billed per GB on top
// (StateRule::storage_note) is not included. A state the provider lacks costs 0: check
// StateRule::available first.
[[nodiscard]] MicroUsd cost_per_hour_in(const ProviderInfo& provider, const Offer& offer, ServerState state, bool spot);

}  // namespace gpurent

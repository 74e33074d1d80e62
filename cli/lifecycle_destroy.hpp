// SPDX-License-Identifier: MIT
#pragma once
// Destroying a tracked server the one way `down`, `up` (cleanup) and `status --refresh` share:
// recorded first, one destroy request, closed only when the provider confirms; otherwise the
// record stays open (`destroying` or `destroy_failed`) and the user is told loudly what still bills.
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "providers/lifecycle.hpp"
#include "providers/provider.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;

struct DestroyRecord {
  DestroyOutcome outcome;
  ServerStatus status = ServerStatus::destroying;  // destroyed, destroying or destroy_failed
  std::string billed;  // "billed $0.000192 for 1 s (per-second billing)": the ledger's charge
};

// Records `destroying` ("destroy requested: <reason>"), sends one destroy request (after a
// look at the provider when `retry`), waits for the provider to confirm, then records
// `destroyed`. Not confirmed: stays `destroying` when the request was accepted, else records
// `destroy_failed`; either way a loud warning says what it still costs per hour and how to retry.
// Errors only for the state store; the provider's answer is in the result.
[[nodiscard]] Result<DestroyRecord> destroy_tracked(Services& s, Provider& p, StateStore& store, const ServerRecord& rec,
                                                    std::string_view reason, bool retry);

// "billed $0.000192 for 1 s (per-second billing)" from the ledger as it stands now.
[[nodiscard]] std::string billed_text(StateStore& store, const ServerRecord& rec, TimePoint now);

}  // namespace gpurent

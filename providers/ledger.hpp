// SPDX-License-Identifier: MIT
#pragma once
// Pure ledger accounting: what a tracked server has cost so far, from its state-change events,
// under the billing rules recorded when it was rented.
#include <chrono>
#include <span>

#include "common/units.hpp"
#include "providers/state_store.hpp"

namespace gpurent {

struct LedgerTotals {
  MicroUsd accrued;                    // everything below, summed
  MicroUsd running_cost;               // states billed at the full rate (running, and stopped where it bills fully)
  MicroUsd stopped_cost;               // stopped at a storage rate
  MicroUsd hibernated_cost;
  std::chrono::seconds running_s{0};   // wall time in states billed at the full rate
  std::chrono::seconds stopped_s{0};   // wall time stopped (whatever its rate)
  std::chrono::seconds hibernated_s{0};
  std::chrono::seconds billed_full_s{0};  // after rounding, minimums and the deploy charge
  bool open = true;                    // false once the ledger is closed (destroyed, gone, failed)
};

// Cost per hour of a server in `status` under `terms` (0 for closed states).
// `destroying` is billed like the state it was in, which the caller passes as `previous`.
[[nodiscard]] MicroUsd rate_in(const RentTerms& terms, ServerStatus status) noexcept;

// Cost per hour now, from the events: destroying, destroy_failed and release_pending bill like
// the state before them (a stopped server whose destroy failed still bills its storage rate).
[[nodiscard]] MicroUsd rate_now(const RentTerms& terms, std::span<const LedgerEvent> events) noexcept;

// Events in order (as the store returns them). The last open interval runs until `now`.
// Rules:
//  * consecutive intervals billed at the same rate form one billing period; each period is
//    rounded up to the increment and raised to the minimum (BillingPolicy::charge);
//  * the first full-rate period also carries the charge at deploy (e.g. the first hour), and is
//    at least one second long: a server that existed only briefly is billed one increment;
//  * `creating` counts as running (the provider may have created it) unless the ledger ended
//    `failed` (nothing was created); `provisioning` bills as running; `destroying`,
//    `destroy_failed` and `release_pending` bill like the state before;
//  * stopped/hibernated bill the full rate when the rule says so, else its fixed rate per hour,
//    rounded up to the same increment;
//  * `offline` bills nothing (the provider does not charge while its host is disconnected).
[[nodiscard]] LedgerTotals accrue(const RentTerms& terms, std::span<const LedgerEvent> events, TimePoint now) noexcept;

}  // namespace gpurent

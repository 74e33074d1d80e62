// SPDX-License-Identifier: MIT
#pragma once
// Pure: the "idle GPU for N minutes" rule of `gpurent status`, over what `gpurent doctor NAME`
// recorded (DoctorObservation). Documented in docs/lifecycle.md ("Idle GPUs").
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "providers/state_store.hpp"

namespace gpurent {

// A GPU is idle when it has at most this much memory in use (a CUDA context alone is a few
// hundred MiB; doctor's own advice starts at 1 GiB) ...
inline constexpr std::uint64_t k_idle_memory_mib = 1024;
// ... and, where nvidia-smi reports it, at most this utilization.
inline constexpr std::uint32_t k_idle_utilization_pct = 5;

// One observation is idle when it saw at least one GPU, no process holding GPU memory (an
// unavailable process list counts as none: the memory rule still applies), and every GPU idle.
[[nodiscard]] bool observation_idle(const DoctorObservation& observation) noexcept;

struct IdleSpan {
  TimePoint since;      // the first observation of the unbroken idle run that ends with the latest
  TimePoint last_seen;  // the latest observation
  std::int64_t minutes = 0;  // whole minutes from `since` to now (0 when now is earlier)
  std::size_t observations = 0;  // how many idle observations the run holds
};

// The idle span of a server in `status` that has been in that status since `status_since`:
//  * only a `running` server (billed at its running rate) can be idle;
//  * only observations taken at or after `status_since` count (older ones saw an earlier run);
//  * the latest of them must be idle; the span starts at the earliest observation of the
//    unbroken run of idle observations that ends with it.
// nullopt when any of these fails. `observations` may come in any order.
[[nodiscard]] std::optional<IdleSpan> idle_span(ServerStatus status, TimePoint status_since,
                                                std::span<const DoctorObservation> observations, TimePoint now);

// "idle GPU for 42 minutes (no GPU work at 3 doctor checks since 2026-11-30T10:00:00Z; last check
// 2026-11-30T10:40:00Z): stop or destroy it if nothing will run"; times in UTC.
[[nodiscard]] std::string idle_warning(const IdleSpan& span);

}  // namespace gpurent

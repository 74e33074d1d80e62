// SPDX-License-Identifier: MIT
#pragma once
// What `status` says about a tracked server's state beyond the numbers: the state to show (a
// provider's trouble word wins over the billing state), and the warnings of the lifecycle
// (creating, destroying, destroy_failed, release_pending, gone, trouble). Pure.
#include <string>
#include <string_view>
#include <vector>

#include "common/units.hpp"
#include "providers/state_store.hpp"

namespace gpurent {

// The state `status` shows: the trouble word ("unhealthy", "preempted", "crashed", "offline",
// "exited", "unknown") while the server is up or stopped, else the ledger's state.
[[nodiscard]] std::string shown_state(const ServerRecord& r);

// Warnings for the lifecycle state and the provider's trouble. `rate` is the cost per hour now,
// `last_note` the note of the latest ledger event (why a destroy failed).
[[nodiscard]] std::vector<std::string> lifecycle_warnings(const ServerRecord& r, MicroUsd rate, std::string_view last_note);

}  // namespace gpurent

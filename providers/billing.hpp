// SPDX-License-Identifier: MIT
#pragma once
// Billing rules as data, and the exact charge they produce (integer micro-USD).
#include <chrono>
#include <optional>
#include <string>

#include "common/units.hpp"

namespace gpurent {

struct BillingPolicy {
  std::chrono::seconds increment{1};          // billed in whole increments, rounded up
  std::chrono::seconds minimum{0};            // at least this much is billed
  std::chrono::seconds charged_at_deploy{0};  // charged up front when the server is created
  // 1. max(runtime, minimum, charged_at_deploy); 2. round up to whole increments;
  // 3. (per_hour * seconds + 3599) / 3600, rounding up to the micro-dollar.
  [[nodiscard]] std::chrono::seconds billed_seconds(std::chrono::seconds runtime) const noexcept;
  [[nodiscard]] MicroUsd charge(MicroUsd per_hour, std::chrono::seconds runtime) const noexcept;
};

enum class ServerState { running, stopped, hibernated };

// What a provider does in a non-running state.
struct StateRule {
  bool available = false;
  std::string unavailable_reason;   // why the provider has no such state (when !available)
  bool bills_full_rate = false;     // e.g. gpucloud stopped: full hourly rate
  MicroUsd fixed_per_hour;          // e.g. gpucloud hibernate: $0.02/h (used when !bills_full_rate)
  std::string keeps;                // what survives, e.g. "disk kept"
  std::string loses;                // what is lost, e.g. "GPU released; may not get it back"
  bool allowed_on_spot = true;
  std::string spot_reason;          // why not on spot (when !allowed_on_spot)
  std::string storage_note;         // storage billed on top in this state, e.g. "volume disk $0.20/GB-month"
};

}  // namespace gpurent

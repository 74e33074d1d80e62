// SPDX-License-Identifier: MIT
#pragma once
// `gpurent up --nodes N --group NAME`: N servers named NAME-0 … NAME-(N-1), rented through
// `up`'s own path (each recorded before its create call), confirmed once for the whole group:
// first every member is created, so the provider starts them together, then each is waited
// for (running, SSH) in turn. All or none: when one member cannot be brought up, every member of the group
// is destroyed and the error says what each one billed. Interrupted, nothing more is destroyed:
// the error says what bills and how to release or resume the group.
#include <functional>
#include <vector>

#include "cli/up_choice.hpp"
#include "common/result.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;

// `up` for one member (its name, rank and whether the group was confirmed are in the options).
using RentMember = std::function<Result<ServerRecord>(const UpOptions& member)>;

// With --from-plan and no --nodes: how many servers plan finds the job needs (said once).
using PlanNodes = std::function<Result<std::uint32_t>()>;

[[nodiscard]] Result<std::vector<ServerRecord>> rent_group(Services& s, const UpOptions& o, const RentMember& rent_one,
                                                           const PlanNodes& plan_nodes);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// `status --refresh` for attached servers waiting for their release (`release_pending`): an SSH
// check with the settings remembered for the server; two unreachable checks a minute apart, or
// another host key at the address, close the record as destroyed (providers/release_check.hpp).
#include "common/result.hpp"
#include "providers/release_check.hpp"
#include "providers/state_store.hpp"

namespace gpurent {
struct Services;

// Probes the host, stores the check, and closes the record when the verdict says released
// (rec.status becomes `destroyed`). Errors only for the state store.
[[nodiscard]] Result<ReleaseVerdict> check_release(Services& s, StateStore& store, ServerRecord& rec);

}  // namespace gpurent

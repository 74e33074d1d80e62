// SPDX-License-Identifier: MIT
#pragma once
// "did you mean" for a server or group NAME that is not tracked: the open servers' and the
// groups' names closest to it (common/closest_names.hpp).
#include <string>
#include <string_view>

#include "providers/state_store.hpp"

namespace gpurent {

// The next step of a not-found error for `name`: "did you mean train1? Otherwise see `gpurent
// status`" when a tracked name is near, else `otherwise` alone ("see `gpurent status`").
[[nodiscard]] std::string unknown_name_hint(StateStore& store, std::string_view name, std::string_view otherwise);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// The "per_stream" array of `backup --json` and `push --json`: each connection's share of the
// copy (sync/range_plan.hpp, StreamStat). `units` names what it carried ("ranges" for backup;
// "units", tar streams and ranges, for push).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sync/range_plan.hpp"

namespace gpurent {

[[nodiscard]] nlohmann::json per_stream_json(const std::vector<StreamStat>& stats, const std::string& units);

}  // namespace gpurent

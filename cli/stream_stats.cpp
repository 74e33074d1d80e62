// SPDX-License-Identifier: MIT
#include "cli/stream_stats.hpp"

#include "common/rounding.hpp"

namespace gpurent {

nlohmann::json per_stream_json(const std::vector<StreamStat>& stats, const std::string& units)
{
  nlohmann::json out = nlohmann::json::array();
  for (const auto& st : stats) {
    const double rate = st.seconds > 0 ? static_cast<double>(st.bytes) / st.seconds / 1e6 : 0.0;
    out.push_back({{"bytes", st.bytes}, {"seconds", round_to_places(st.seconds, 3)}, {"mb_per_s", round_to_places(rate, 1)}, {units, st.ranges}});
  }
  return out;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// The views of `gpurent oom`: --json (keys of spec/oom.md plus the parts of the arithmetic) and
// the text explanation.
#include <nlohmann/json_fwd.hpp>

#include <ostream>

#include "oom/diagnose.hpp"
#include "oom/parse.hpp"

namespace gpurent {

[[nodiscard]] nlohmann::json oom_json(const OomReport& r, const OomDiagnosis& d);
void oom_text(std::ostream& o, const OomReport& r, const OomDiagnosis& d, bool color);

}  // namespace gpurent

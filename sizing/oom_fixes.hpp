// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM diagnosis: the fixes for the causes that hold, in the seeds' order.
#include <vector>

#include "sizing/oom_diagnose.hpp"

namespace gpurent::oom_detail {

[[nodiscard]] std::vector<OomFix> fixes_for(const OomReport& report, const OomDiagnosis& diagnosis);

}  // namespace gpurent::oom_detail

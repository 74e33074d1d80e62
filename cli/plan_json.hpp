// SPDX-License-Identifier: MIT
#pragma once
// The --json view of `gpurent plan`: exactly cli.md's keys. Sizes are GiB (2^30) per GPU
// rounded to 2 decimals (round2); prices and costs are USD, exact to the micro-dollar.
#include <nlohmann/json.hpp>

#include <iosfwd>

#include "planner/plan_report.hpp"

namespace gpurent {

[[nodiscard]] nlohmann::ordered_json plan_to_json(const PlanReport& report);
// plan_to_json(report).dump(2), written as it is made: the options one at a time, so the whole
// document is never held in memory (plan's start-up: docs/benchmarks.md).
void write_plan_json(std::ostream& os, const PlanReport& report);

}  // namespace gpurent

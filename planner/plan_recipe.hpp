// SPDX-License-Identifier: MIT
#pragma once
// `plan`'s recipe and fixes when the job does not fit as asked: which card and GPU counts they
// aim at (the given card, else every card with an offer), and the defaults plan chose for the
// GPU count and layout.
#include <cstdint>
#include <vector>

#include "planner/plan_report.hpp"
#include "planner/rank.hpp"

namespace gpurent {

// GPU counts sold for `card` among the report's options (1..8 when none is).
[[nodiscard]] std::vector<std::uint32_t> sold_counts(const PlanResult& result, const std::string& card);

// Fills report.fixes/fix_limit and report.recipe for a report that does not fit. `asked` is the
// job before any GPU count was chosen; `launch_id` names the model in the recipe's launch line.
void add_fixes_and_recipe(PlanReport& report, const JobSpec& asked, const PlanRequest& request);

// The GPU count, shard and layout plan chose (job.defaults) when --gpus / --shard were not given.
void add_layout_defaults(PlanReport& report, const PlanRequest& request);

}  // namespace gpurent

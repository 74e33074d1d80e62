// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent plan` found: the data both views (text and --json) render.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "providers/plan.hpp"
#include "sizing/fixes.hpp"
#include "sizing/job.hpp"
#include "sizing/model.hpp"

namespace gpurent {

struct PlanReport {
  std::string model_source;            // "catalog", "hub", "file" or "params"
  PlanResult result;                   // job (as sized), memory per GPU, card, choice, options
  std::optional<ServePool> serve;      // --task serve with a card chosen or given
  std::vector<Fix> fixes;              // when the job does not fit
  Bytes fix_limit;                     // the per-GPU limit the fixes aim at
  std::map<std::string, std::string> launch;
  std::chrono::seconds runtime{3600};  // --hours
  bool card_given = false;             // --card
  std::vector<std::string> notes;      // for the text view (prices, unpriced providers)
  [[nodiscard]] bool fits() const { return card_given ? result.card_fits : result.choice.has_value(); }
};

}  // namespace gpurent

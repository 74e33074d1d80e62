// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent plan` reads before it decides, shared with `gpurent up --from-plan`: the config,
// the model resolved (catalogue, local files, the Hub) and the current offers; then the planner's
// entry point (planner/plan.hpp) decides, and the notes on where the prices came from are added.
#include <span>
#include <string>
#include <vector>

#include "cli/config.hpp"
#include "cli/plan_options.hpp"
#include "common/result.hpp"
#include "planner/plan.hpp"
#include "providers/catalog.hpp"

namespace gpurent {

struct Services;

// Everything plan() reads, read once: the config, the model, the offers (built-in, config, fetched).
struct PlanInputs {
  Config cfg;
  PlanModel model;
  // The offers: `merged` (current_offers_into), or, when it left that empty because nothing is
  // laid over them, the built-in market itself (no copy of it at start-up).
  std::vector<Offer> merged;
  OfferRegions regions = OfferRegions::every;  // which of the built-in market's regions (builtin_offers)
  [[nodiscard]] std::span<const Offer> offers() const noexcept;
};
[[nodiscard]] Result<PlanInputs> gather_plan_inputs(Services& s, const PlanOptions& opts);

// plan() over `in` among `providers`, with the notes on the prices' origins.
[[nodiscard]] Result<PlanReport> plan_from(const PlanInputs& in, const PlanOptions& opts,
                                           std::span<const ProviderInfo> providers);

// gather_plan_inputs, then plan_from: sizes the job of `opts` and ranks the current offers (built-in, config, fetched) of
// `providers` only (plan: the whole catalogue; up --from-plan: those with an API).
[[nodiscard]] Result<PlanReport> build_plan_report(Services& s, const PlanOptions& opts,
                                                   std::span<const ProviderInfo> providers);

// Why a report does not fit, as one sentence ("the job needs 30.1 GiB per GPU on 1 x RTX 4090,
// over the 22.4 GiB limit", "nothing fits within 8 GPUs of one server", ...).
[[nodiscard]] std::string plan_misfit_reason(const PlanReport& report);
// No option meets the service targets: the targets and the closest option with its misses.
[[nodiscard]] std::string missed_targets_text(const PlanReport& report);
// Nothing fits, in the words of what was tried: one server (--nodes 1), N servers (--nodes N), or
// one server and then several (no --nodes).
[[nodiscard]] std::string nothing_fits_text(const PlanReport& report);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// The planner's entry point: the job as asked, the model as resolved and the market as offered go
// in; the report (the job sized, memory per GPU, the ranked options and the choice, speed, hours
// and bill, fixes and the recipe when it does not fit, launch lines) comes out. Pure: every file,
// Hub lookup, offer cache and config value is read before, in cli/ (cli/plan_build.cpp), so `plan`,
// `up --from-plan`, `fits` and `oom`'s card advice decide by the same code from the same data.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "planner/fixes.hpp"
#include "planner/job_request.hpp"
#include "planner/plan_report.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/estimate.hpp"
#include "sizing/hardware_rules.hpp"
#include "sizing/job.hpp"
#include "sizing/model.hpp"

namespace gpurent {

// The model the request names, as cli/ resolved it (the catalogue, local files or the Hub).
struct PlanModel {
  ModelArch arch;
  std::string source;     // "catalog", "hub", "file" or "params"
  std::string hf_id;   // what the launch lines name; empty for --params (nothing to launch)
  std::string launch_note;  // where a local checkpoint is when the launch line runs (said with the launch)
};

// What can be rented and on what: the offers (built-in, config, cache, live: gathered by cli/), the
// providers to rank among, and the cards (the built-in catalogue and the config's).
struct Catalogues {
  std::span<const Offer> offers;
  std::span<const ProviderInfo> providers;
  std::span<const Card> cards;
};

// `gpurent plan`'s decision. make_job builds the one JobSpec (defaults stated in report.defaults),
// which the ranking, speed, hours, bill, fixes, recipe and launch lines all read. Errc::usage when
// the request cannot describe a job (a context below --input-len + --output-len, weights the task
// cannot train on, ...).
[[nodiscard]] Result<PlanReport> plan(const PlanOptions& request, const Catalogues& catalogues, const PlanModel& model);

// The same ranking for one job on one card at the job's GPU count, with no offers (`fits` walks
// the catalogue with it, `oom` measures a log's job against a card with it): the job as the
// engine runs it there, its memory, the limit it must fit, the verdict, and plan's fixes towards
// that limit.
struct CardFit {
  JobSpec job;
  MemoryEstimate memory;
  Bytes limit;
  bool fits = false;
  RunVerdict runs;
  [[nodiscard]] std::vector<Fix> fixes() const;
};
[[nodiscard]] CardFit plan_on_card(const JobSpec& job, const Card& card, std::optional<Shard> shard = std::nullopt);

}  // namespace gpurent

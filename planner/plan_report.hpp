// SPDX-License-Identifier: MIT
#pragma once
// What `gpurent plan` found: the data both views (text and --json) render.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "planner/job_request.hpp"
#include "planner/rank.hpp"
#include "planner/fixes.hpp"
#include "sizing/job.hpp"
#include "sizing/model.hpp"
#include "planner/recipe.hpp"

namespace gpurent {

// The combined fixes that make the job fit a card (cli.md plan v2 `recipe`).
struct PlanRecipe {
  Recipe recipe;
  std::string card;          // Card::id
  std::string card_display;
  std::optional<MicroUsd> price_per_hour;  // the cheapest offer of that card and GPU count, if any
  std::map<std::string, std::string> launch;
  Speed speed;  // the recipe's job on the card (an offload recipe pays for its PCIe traffic here)
};

// --card whose engine refuses the job: another engine that runs the same job natively on that card
// and fits it (cli.md plan v3 "Will it run there"; JSON `card.runs_with`).
struct EngineHere {
  JobSpec job;                 // the job under that engine, as sized on the card
  MemoryEstimate memory;       // per GPU
  RunVerdict runs;             // native
  std::map<std::string, std::string> launch;
};

// --task serve without --engine: one batching server's best option for the same job (cli.md plan
// v4 "Engines"; planner/engine_compare.hpp). The plan's own engine is among them (`chosen`).
struct EngineOption {
  Engine engine = Engine::vllm;
  bool chosen = false;
  std::optional<PlanOption> best;  // its choice under the same request; absent when nothing fits or runs it
  std::string why_none;            // then, why
  // What its best option delivers per dollar against the chosen engine's: output tokens per dollar
  // (unsized) or the inverse ratio of the bills (sized); absent when either is unknown.
  std::optional<double> vs_choice;
};

struct PlanReport {
  std::string model_source;            // "catalog", "hub", "file" or "params"
  std::string launch_id;               // the model id the launch lines name (the one the user gave)
  PlanResult result;                   // job (as sized), memory per GPU, card, choice, options
  std::vector<JobDefault> defaults;    // every value plan chose for the user
  std::optional<ServePool> serve;      // --task serve with a card chosen or given
  std::vector<Fix> fixes;              // when the job does not fit
  Bytes fix_limit;                     // the per-GPU limit the fixes aim at
  std::optional<PlanRecipe> recipe;    // when the job does not fit
  std::map<std::string, std::string> launch;
  std::chrono::seconds runtime{3600};  // --hours
  bool card_given = false;             // --card
  std::vector<std::string> notes;      // for the text view (prices, unpriced providers)
  JobSize size;                        // --tokens/--requests and the load
  std::optional<std::chrono::seconds> deadline;
  ServeTargets targets;                // --min-user-speed, --max-ttft (serving)
  std::optional<std::uint32_t> nodes_asked;  // --nodes
  std::string startup_basis;           // how the choice's start-up time is made up
  std::optional<StartupTime> startup;  // the choice's start-up (a sized job): what it downloads
  // --card whose engine refuses the job: the cheapest option elsewhere that runs it natively (or
  // by a fallback when nothing runs it natively), if any.
  std::optional<PlanOption> runs_elsewhere;
  std::optional<EngineHere> runs_with;  // refused: the engine that runs it natively on the card given
  std::vector<EngineOption> engines;    // serving without --engine: vLLM, SGLang and TensorRT-LLM side by side
  [[nodiscard]] bool refused() const { return card_given && result.runs.status == RunStatus::refused; }
  // --deadline: options fit and run the job, but none finishes in time.
  [[nodiscard]] bool missed_deadline() const
  {
    return deadline.has_value() && !result.choice &&
           std::any_of(result.options.begin(), result.options.end(), [](const PlanOption& o) {
             return o.fits && o.runs.status != RunStatus::refused;
           });
  }
  // Serving: options fit and run the job, but none meets the service targets (--min-user-speed,
  // --max-ttft).
  [[nodiscard]] bool missed_targets() const
  {
    return !result.choice && std::any_of(result.options.begin(), result.options.end(), [](const PlanOption& o) {
      return o.fits && o.runs.status != RunStatus::refused && !o.late && o.serve && !o.serve->meets_targets;
    });
  }
  [[nodiscard]] bool fits() const
  {
    return (card_given ? result.card_fits && !refused() : result.choice.has_value()) && !missed_deadline() &&
           !missed_targets();
  }
};

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// `gpurent oom` and `gpurent plan` give one answer: the job a log ran, rebuilt from what the log
// printed (OomReport::job) with plan's own make_job, and sized on a card by the planner's
// plan_on_card (the estimate, the engine's hardware rules and fit_limit_for), with its fixes.
// Pure: data in, data out (the catalogues are compiled in).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "oom/diagnose.hpp"
#include "oom/parse.hpp"
#include "planner/plan.hpp"
#include "providers/card.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// The job as plan would size it, or what the log lacks for that.
struct OomLogJob {
  std::optional<JobSpec> job;
  std::string model;                 // the catalogue name, or what the log calls the model
  std::string plan_command;          // `gpurent plan ...` for the same job ("" when plan cannot name the model)
  std::vector<std::string> assumed;  // values the log does not print, taken as the engine's defaults
  std::vector<std::string> notes;
  std::vector<std::string> missing;  // figures the estimate needs that the log does not give
  std::string why_not;               // when there is no job: one sentence
};

// llama.cpp / Ollama from the model's print_info lines and llama_context; vLLM / SGLang from the
// engine's configuration line and the catalogue model it names. Other engines: no job.
[[nodiscard]] OomLogJob job_from_log(const OomReport& report);

// What plan says of `job` on `card` at the job's GPU count: the planner's plan_on_card (plan's
// ranking with that card and no offers: the verdict plan prints for `--card`).
[[nodiscard]] CardFit plan_card_fit(const JobSpec& job, const Card& card);

// Plan's estimate of the log's job: the verdict on `given` (when set), the smallest card of
// `options` plan fits it on, and plan's fixes against the limit of `given` (else of the card the
// log names, when gpurent knows it).
[[nodiscard]] OomJobInput estimate_log_job(const OomReport& report, const std::optional<Card>& given,
                                           std::span<const OomCardOption> options);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#include "planner/engine_compare.hpp"

#include <fmt/format.h>

#include <array>

#include "common/units.hpp"
#include "planner/rank.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

constexpr std::array<Engine, 3> k_serving_engines{Engine::vllm, Engine::sglang, Engine::tensorrt_llm};

// Why an engine has no option: its refusal on the card given, else that nothing fits or runs.
std::string why_none(const PlanResult& res)
{
  if (!res.layout_ok && res.card) {
    return "it cannot split the model over the GPUs asked";
  }
  if (res.runs.status == RunStatus::refused) {
    return res.runs.why;
  }
  for (const auto& o : res.options) {
    if (o.runs.status == RunStatus::refused) {
      continue;
    }
    if (o.fits && o.serve && !o.serve->meets_targets) {
      return "no option meets the service targets";
    }
  }
  return "no option fits and runs the job";
}

}  // namespace

bool compares_engines(const PlanOptions& o, const JobSpec& job) noexcept
{
  return job.task == Task::serve && !o.engine_given && o.gguf.empty() && job.engine == Engine::vllm;
}

std::vector<EngineOption> compare_engines(const PlanOptions& o, const PlanRequest& request, const ModelArch& arch,
                                          const Catalogues& catalogues, const PlanResult& chosen)
{
  std::vector<EngineOption> out;
  for (const Engine e : k_serving_engines) {
    EngineOption entry;
    entry.engine = e;
    if (e == chosen.job.engine) {
      entry.chosen = true;
      entry.best = chosen.choice;
      if (!entry.best) {
        entry.why_none = why_none(chosen);
      }
      out.push_back(std::move(entry));
      continue;
    }
    PlanOptions alt = o;
    alt.engine = e;
    alt.engine_given = true;
    alt.engine_version = 0;
    const Result<JobSpec> job = make_job(alt, arch, nullptr);
    if (!job) {
      entry.why_none = job.error().message;
      out.push_back(std::move(entry));
      continue;
    }
    const PlanResult res = rank(*job, catalogues.offers, catalogues.providers, catalogues.cards, request,
                                [](const JobSpec& j) { return estimate(j); });
    entry.best = res.choice;
    if (!entry.best) {
      entry.why_none = why_none(res);
    }
    out.push_back(std::move(entry));
  }
  if (chosen.choice) {
    for (auto& e : out) {
      if (e.best) {
        e.vs_choice = delivery_ratio(*e.best, *chosen.choice);
      }
    }
  }
  return out;
}

std::optional<double> delivery_ratio(const PlanOption& other, const PlanOption& chosen) noexcept
{
  if (other.job_cost && chosen.job_cost && other.job_cost->n > 0) {
    return static_cast<double>(chosen.job_cost->n) / static_cast<double>(other.job_cost->n);
  }
  if (other.tokens_per_dollar && chosen.tokens_per_dollar && *chosen.tokens_per_dollar > 0) {
    return static_cast<double>(*other.tokens_per_dollar) / static_cast<double>(*chosen.tokens_per_dollar);
  }
  return std::nullopt;
}

std::optional<std::string> engine_note(const std::vector<EngineOption>& engines)
{
  const EngineOption* mine = nullptr;
  for (const auto& e : engines) {
    if (e.chosen) {
      mine = &e;
    }
  }
  if (mine == nullptr || !mine->best) {
    return std::nullopt;
  }
  const EngineOption* winner = nullptr;
  double best_ratio = 1.1;  // at least 10% more, and the note states both speeds' measured spread
  for (const auto& e : engines) {
    if (e.chosen || !e.best) {
      continue;
    }
    if (e.vs_choice && *e.vs_choice >= best_ratio) {
      best_ratio = *e.vs_choice;
      winner = &e;
    }
  }
  if (winner == nullptr) {
    return std::nullopt;
  }
  const PlanOption& w = *winner->best;
  const std::string where = fmt::format("{} on {} x {} ({})", display_name(winner->engine),
                                        w.servers() > 1 ? fmt::format("{} servers of {}", w.servers(), w.gpus)
                                                        : std::to_string(w.gpus),
                                        w.card_display, w.provider);
  const auto spread = [](const PlanOption& o) {
    return o.speed.range_pct == k_range_unmeasured ? std::string("unmeasured") : fmt::format("{}%", o.speed.range_pct);
  };
  if (w.job_cost && mine->best->job_cost) {
    return fmt::format("{} runs the job for {}, {:.2f}x the choice's bill ({} on {}): plan it with --engine {} (the "
                       "speeds' measured spread: {} and {}, speed.range_pct)",
                       where, format_usd(*w.job_cost), 1.0 / best_ratio, format_usd(*mine->best->job_cost),
                       display_name(mine->engine), to_string(winner->engine), spread(w),
                       spread(*mine->best));
  }
  return fmt::format("{} serves {:.1f}x the output tokens per dollar of the choice ({}): plan it with --engine {} "
                     "(the speeds' measured spread: {} and {}, speed.range_pct)",
                     where, best_ratio, display_name(mine->engine), to_string(winner->engine), spread(w),
                     spread(*mine->best));
}

}  // namespace gpurent

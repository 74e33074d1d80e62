// SPDX-License-Identifier: MIT
#include "planner/plan_recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "providers/card.hpp"
#include "planner/card_run.hpp"
#include "sizing/estimate.hpp"
#include "sizing/hardware_rules.hpp"
#include "planner/launch.hpp"
#include "sizing/layout.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

const Card* card_by_id(const std::string& id)
{
  for (const Card& c : card_catalog()) {
    if (c.id == id) {
      return &c;
    }
  }
  return nullptr;
}

const Card& largest_card()
{
  const auto cards = card_catalog();
  return *std::max_element(cards.begin(), cards.end(), [](const Card& a, const Card& b) { return a.usable < b.usable; });
}

std::optional<MicroUsd> cheapest(const PlanResult& result, const std::string& card, std::uint32_t gpus)
{
  std::optional<MicroUsd> best;
  for (const auto& o : result.options) {
    if (o.card == card && o.gpus == gpus && (!best || o.price_per_hour < *best)) {
      best = o.price_per_hour;
    }
  }
  return best;
}

PlanRecipe recipe_on(const JobSpec& start, const Card& card, const std::vector<std::uint32_t>& counts,
                     const PlanResult& result, const std::string& launch_id, const PlanRequest& request)
{
  PlanRecipe p;
  // The recipe starts from the job as the engine runs it on this card, and its result must run
  // there too (a lever may pick a format the card's kernels refuse): hardware_rules.hpp.
  const CardRun there = run_on(start, card);
  p.recipe = find_recipe(there.job, card.usable, counts);
  const CardRun after = run_on(p.recipe.job, card);
  if (there.runs.status == RunStatus::refused || after.runs.status == RunStatus::refused) {
    p.recipe.fits = false;
  } else {
    p.recipe.job = after.job;
  }
  p.card = card.id;
  p.card_display = card.display;
  p.price_per_hour = cheapest(result, card.id, p.recipe.job.gpus);
  const SpeedLoad load = speed_load(p.recipe.job, card, request, p.recipe.memory);
  p.speed = estimate_speed(p.recipe.job, card, load);
  if (p.recipe.job.task == Task::serve && request.size.load.concurrency == 0) {
    p.recipe.job.max_seqs = load.concurrency;  // the launch line serves what the pool holds (no --batch given)
  }
  if (!launch_id.empty() && p.recipe.fits) {  // a recipe that does not fit has no line that starts
    p.launch = launch_commands(p.recipe.job, launch_id, card.usable);
  }
  return p;
}

// Better: fits, then fewer points, then a known lower price, then fewer GPUs.
bool better(const PlanRecipe& a, const PlanRecipe& b)
{
  const auto key = [](const PlanRecipe& r) {
    return std::tuple(!r.recipe.fits, r.recipe.fits ? r.recipe.points : 0U,
                      r.recipe.fits ? Bytes{} : r.recipe.memory.total() - r.recipe.limit, !r.price_per_hour.has_value(),
                      r.price_per_hour.value_or(MicroUsd{}), r.recipe.job.gpus);
  };
  return key(a) < key(b);
}

}  // namespace

std::vector<std::uint32_t> sold_counts(const PlanResult& result, const std::string& card)
{
  std::set<std::uint32_t> counts;
  for (const auto& o : result.options) {
    if (o.card == card) {
      counts.insert(o.gpus);
    }
  }
  if (counts.empty()) {
    for (std::uint32_t n = 1; n <= k_max_gpus_per_server; ++n) {
      counts.insert(n);
    }
  }
  return {counts.begin(), counts.end()};
}

void add_fixes_and_recipe(PlanReport& r, const JobSpec& asked, const PlanRequest& request)
{
  const PlanResult& res = r.result;
  const Card& target = res.card ? *res.card : largest_card();
  const std::vector<std::uint32_t> counts =
      request.gpus ? std::vector<std::uint32_t>{*request.gpus} : sold_counts(res, target.id);
  r.fix_limit = fit_limit_for(res.job, target.usable);
  r.fixes = suggest_fixes(res.job, r.fix_limit, counts);
  if (r.card_given || res.options.empty()) {
    PlanRecipe p = recipe_on(res.job, target, counts, res, r.launch_id, request);
    if (!(p.recipe.fits && p.recipe.changes.empty())) {  // fits as asked: the filters are the problem
      r.recipe = std::move(p);
    }
    return;
  }
  // Nothing fits any offer: the best recipe over every card that has one.
  std::set<std::string> cards;
  for (const auto& o : res.options) {
    cards.insert(o.card);
  }
  for (const auto& id : cards) {
    const Card* card = card_by_id(id);
    if (card == nullptr) {
      continue;
    }
    const std::vector<std::uint32_t> sold = request.gpus ? std::vector<std::uint32_t>{*request.gpus} : sold_counts(res, id);
    const std::uint32_t first = request.gpus.value_or(sold.front());
    if (!gpus_feasible(asked, first, request.shard)) {
      continue;
    }
    PlanRecipe candidate = recipe_on(job_for_gpus(asked, first, request.shard), *card, sold, res, r.launch_id, request);
    if (!r.recipe || better(candidate, *r.recipe)) {
      r.recipe = std::move(candidate);
    }
  }
}

void add_layout_defaults(PlanReport& r, const PlanRequest& request)
{
  const JobSpec& j = r.result.job;
  if (!request.gpus) {
    r.defaults.push_back({"gpus", std::to_string(j.gpus),
                          r.card_given ? "the smallest count sold for --card that fits it"
                                       : "the count of the cheapest offer that fits (what the providers sell)",
                          JobDefault::Kind::number});
  }
  if (!request.nodes && j.nodes > 1) {
    r.defaults.push_back({"nodes", std::to_string(j.nodes),
                          "one server does not fit: the fewest servers that fit, over a link whose bandwidth the "
                          "provider publishes",
                          JobDefault::Kind::number});
  }
  if (world_gpus(j) > 1 && !request.shard) {
    r.defaults.push_back({"shard", std::string(to_string(j.shard)),
                          is_training(j.task)  ? "FSDP full shard (DeepSpeed: ZeRO-3) for training on several GPUs (cli.md)"
                          : j.shard == Shard::layer ? fmt::format("{} splits the layers across the GPUs, one GPU working "
                                                                  "at a time (not tensor parallel)",
                                                                  to_string(j.engine))
                                                    : std::string("tensor parallel for inference on several GPUs (cli.md)")});
  }
  if (j.pipeline > 1 && j.nodes > 1) {
    r.defaults.push_back({"layout", fmt::format("tensor parallel {} x pipeline {}", tp_degree(j), j.pipeline),
                          "tensor parallel inside each server, a pipeline stage per server (vLLM across servers)"});
  } else if (j.pipeline > 1) {
    // Why tensor parallel over all the GPUs is refused (docs/sizing.md "Layouts").
    std::string why = tensor_parallel_refusal(j.model, j.gpus, j.weights);
    if (why.empty()) {
      why = fmt::format("{} GPUs would leave fewer layers than pipeline stages", j.gpus);
    }
    r.defaults.push_back({"layout", fmt::format("tensor parallel {} x pipeline {}", tp_degree(j), j.pipeline),
                          fmt::format("{} refuses tensor parallel {}: {}; the other GPUs run pipeline stages",
                                      display_name(j.engine), j.gpus, why)});
  }
}

}  // namespace gpurent

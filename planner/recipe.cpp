// SPDX-License-Identifier: MIT
// The recipe search (docs/sizing.md "Recipe"): discrete levers combined in order of their
// invasiveness points, then the continuous ones (batch, context, offload) sized by binary search.
#include "planner/recipe.hpp"

#include <algorithm>
#include <optional>
#include <tuple>

#include "planner/largest.hpp"
#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"
#include "sizing/precision.hpp"
#include "planner/recipe_detail.hpp"

namespace gpurent {
namespace {

using recipe_detail::Choice;

constexpr std::uint32_t k_context_step = 256;

Bytes total(const JobSpec& j) { return estimate(j).total(); }

bool fits(const JobSpec& j, Bytes usable) { return total(j) <= fit_limit_for(j, usable); }

// Points for keeping `kept` of `asked` context tokens.
std::uint32_t context_points(std::uint32_t kept, std::uint32_t asked)
{
  if (std::uint64_t{kept} * 2 >= asked) {
    return 5;
  }
  return std::uint64_t{kept} * 4 >= asked ? 7 : 9;
}

// Inference weights the recipe may keep in CPU RAM per GPU, in whole GiB (vLLM's
// --cpu-offload-gb): at most as much as stays on the GPU (vLLM's "virtually doubling" the card
// is the most its docs suggest), and no more than the weights.
std::uint64_t offload_cap(const JobSpec& j, Bytes usable)
{
  if (j.engine == Engine::tensorrt_llm) {
    return 0;  // trtllm-serve keeps every weight on the GPUs: no CPU offload option
  }
  const std::uint64_t cap = (fit_limit_for(j, usable).n + k_gib - 1) / k_gib * k_gib;
  return std::min<std::uint64_t>(cap, estimate(j).weights.n / k_gib * k_gib);
}

struct Outcome {
  JobSpec job;
  std::uint32_t points = 0;
  bool fits = false;
  Bytes over;  // total - limit when it does not fit (nearest = smallest)
};

// vLLM/SGLang/TensorRT-LLM: the memory fraction the engine may take, raised from its default to
// 0.95 (the fit limit's own 5% margin), when the user did not set it: one point, no speed lost.
constexpr std::uint32_t k_util_lever_permille = 950;

// Applies the continuous levers to a combination that does not fit yet.
Outcome finish(JobSpec j, std::uint32_t points, Bytes usable)
{
  if (fits(j, usable)) {
    return {j, points, true, {}};
  }
  const bool training = is_training(j.task);
  if (!training && pools_kv(j.engine) && !j.gpu_util_given &&
      j.gpu_util_permille < k_util_lever_permille) {
    JobSpec t = j;
    t.gpu_util_permille = k_util_lever_permille;
    t.gpu_util_given = true;
    if (fit_limit_for(t, usable) > fit_limit_for(j, usable)) {  // kept for the levers below too
      j = t;
      points += 1;
      if (fits(j, usable)) {
        return {j, points, true, {}};
      }
    }
  }
  if (j.batch > 1) {
    const std::uint32_t asked = j.batch;
    const auto b = largest(1, asked, [&](std::uint32_t v) {
      JobSpec t = j;
      t.batch = v;
      return fits(t, usable);
    });
    j.batch = b.value_or(1);
    if (training) {
      j.grad_accumulation = (asked + j.batch - 1) / j.batch * std::max<std::uint32_t>(j.grad_accumulation, 1);
    }
    points += training ? 1 : 2;
    if (b) {
      return {j, points, true, {}};
    }
  }
  std::optional<Outcome> best;
  if (j.context > k_context_step) {
    const auto steps = largest(1, (j.context - 1) / k_context_step, [&](std::uint32_t s) {
      JobSpec t = j;
      t.context = s * k_context_step;
      return fits(t, usable);
    });
    if (steps) {
      JobSpec t = j;
      t.context = *steps * k_context_step;
      best = Outcome{t, points + context_points(t.context, j.context), true, {}};
    }
  }
  if (!training) {
    const Bytes over = total(j) - fit_limit_for(j, usable);
    const std::uint64_t gib = (over.n + k_gib - 1) / k_gib * k_gib;  // vLLM takes whole GiB
    if (gib <= offload_cap(j, usable)) {
      JobSpec t = j;
      t.offload_bytes = gib;
      if (fits(t, usable) && (!best || points + 8 < best->points)) {
        best = Outcome{t, points + 8, true, {}};
      }
    }
  }
  if (best) {
    return *best;
  }
  JobSpec nearest = j;
  if (!training) {
    nearest.offload_bytes = offload_cap(j, usable);
  }
  const Bytes t = total(nearest);
  const Bytes limit = fit_limit_for(nearest, usable);
  return {nearest, points + (nearest.offload_bytes > 0 ? 8 : 0), t <= limit, t > limit ? t - limit : Bytes{}};
}

// Fitting first; then a recipe that keeps every weight on the GPUs over one that streams some
// over PCIe on every step (docs/speed.md: offload is the slowest lever by far), and between two
// offloading recipes the one that moves fewer bytes; then the fewest points.
bool better(const Outcome& a, const Outcome& b)
{
  if (a.fits != b.fits) {
    return a.fits;
  }
  if (!a.fits) {
    return a.over < b.over;
  }
  return std::tuple(a.job.offload_bytes, a.points, a.job.gpus, total(a.job)) <
         std::tuple(b.job.offload_bytes, b.points, b.job.gpus, total(b.job));
}

}  // namespace

Recipe find_recipe(const JobSpec& job, Bytes card_usable, std::span<const std::uint32_t> gpu_counts)
{
  std::vector<Choice> choices = recipe_detail::choices(job, gpu_counts);
  std::stable_sort(choices.begin(), choices.end(),
                   [](const Choice& a, const Choice& b) { return a.points < b.points; });
  std::optional<Outcome> best;
  for (const Choice& c : choices) {
    if (best && best->fits && best->job.offload_bytes == 0 && c.points >= best->points) {
      break;  // every later combination costs at least as much (an offloading best keeps looking)
    }
    const auto laid = feasible_layout(recipe_detail::apply(job, c));
    if (!laid) {
      continue;
    }
    const Outcome o = finish(*laid, c.points, card_usable);
    if (!best || better(o, *best)) {
      best = o;
    }
  }
  Recipe r;
  if (!best) {
    r.job = job;
    r.memory = estimate(job);
    r.limit = fit_limit_for(job, card_usable);
    return r;
  }
  r.fits = best->fits;
  r.job = best->job;
  r.points = best->points;
  r.memory = estimate(r.job);
  r.limit = fit_limit_for(r.job, card_usable);
  r.changes = recipe_detail::describe(job, r.job);
  r.flags = recipe_detail::flags(job, r.job);
  return r;
}

}  // namespace gpurent

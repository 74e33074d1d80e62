// SPDX-License-Identifier: MIT
// `gpurent fits CARD [--gpus N] [job options of plan]`: "What can I run?" For every catalogue
// model, the job `plan` would size (same options, same defaults) in the best weight format that
// fits the card, and the longest context (up to the model's maximum, or the --context given)
// that still fits, sorted by size. A row is exactly what `plan MODEL --card CARD --gpus N
// --weights W --context C` (with the same job options) finds to fit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <memory>
#include <ostream>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plan_options.hpp"
#include "cli/plan_text.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "planner/plan.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

// A model only counts as runnable with at least this much context (or its maximum, if smaller).
constexpr std::uint32_t k_min_context = 1024;
constexpr std::size_t k_fits_width = 80;

struct FitsArgs {
  std::string card;
  PlanArgs sizing;  // --gpus, --task, --engine, --weights, --context, … as `plan` takes them
};

struct FitRow {
  const ModelArch* model = nullptr;
  WeightFormat weights = WeightFormat::bf16;
  std::uint32_t max_context = 0;
  Bytes total;
  RunVerdict runs;  // how the engine runs it on the card (a refused format is never listed)
};

struct FitsReport {
  Card card;
  std::uint32_t gpus = 1;
  PlanOptions opts;
  std::vector<FitRow> rows;
  std::vector<std::string> too_big;
};

// Weight formats to try, best first: the job's default (the checkpoint's own; GGUF engines:
// F16 down, or gpt-oss's MXFP4), then the smaller ones the engine loads from the same
// checkpoint. An explicit --weights is the only candidate.
std::vector<WeightFormat> candidates(const PlanOptions& o, const JobSpec& job)
{
  std::vector<WeightFormat> out{job.weights};
  if (o.weights || is_training(job.task) || !requantizable(job)) {
    return out;
  }
  const bool gguf = job.engine == Engine::llama_cpp || job.engine == Engine::ollama;
  if (gguf && job.weights != WeightFormat::mxfp4) {
    out.front() = WeightFormat::gguf_f16;
  }
  std::vector<WeightFormat> smaller;
  switch (job.engine) {
  case Engine::llama_cpp:
  case Engine::ollama: smaller.assign(gguf_by_size().begin(), gguf_by_size().end()); break;
  case Engine::vllm: smaller = {WeightFormat::fp8, WeightFormat::nf4}; break;
  case Engine::tensorrt_llm: break;  // quantizes nothing on load
  default: smaller = {WeightFormat::int8, WeightFormat::nf4}; break;
  }
  JobSpec best = job;
  best.weights = out.front();
  const Bytes first = weight_split(best, ParamBreakdown{}).total;
  for (const WeightFormat w : smaller) {
    JobSpec t = job;
    t.weights = w;
    if (weight_split(t, ParamBreakdown{}).total < first) {
      out.push_back(w);
    }
  }
  return out;
}

std::optional<FitRow> best_fit(const FitsReport& r, const ModelArch& m)
{
  auto base = make_job(r.opts, m);
  if (!base) {  // a GPU count the layout cannot split: plan_on_card says it does not fit
    return std::nullopt;
  }
  const std::uint32_t max = std::max<std::uint32_t>(m.max_context, 1);
  const std::uint32_t min = r.opts.context ? base->context : std::min(k_min_context, max);
  const std::uint32_t top = r.opts.context ? base->context : max;
  for (const WeightFormat w : candidates(r.opts, *base)) {
    JobSpec asked = *base;
    asked.weights = w;
    // The planner's verdict on this card (plan_on_card: the job as the engine runs it there, a
    // dequantized or fp32 fallback sized as such); a format the card's kernels refuse is not a fit.
    const auto fit_at = [&](std::uint32_t ctx) {
      JobSpec job = asked;
      job.context = ctx;
      job.gpus = r.gpus;
      return plan_on_card(job, r.card, r.opts.request.shard);
    };
    const CardFit at_min = fit_at(min);
    if (at_min.runs.status == RunStatus::refused || !at_min.fits) {
      continue;
    }
    std::uint32_t lo = min;  // fits
    std::uint32_t hi = top;  // upper bound to test
    if (fit_at(top).fits) {
      lo = top;
    } else {
      while (hi - lo > 1) {  // invariant: lo fits, hi does not
        const std::uint32_t mid = lo + (hi - lo) / 2;
        (fit_at(mid).fits ? lo : hi) = mid;
      }
    }
    return FitRow{&m, w, lo, fit_at(lo).memory.total(), at_min.runs};
  }
  return std::nullopt;
}

Result<FitsReport> build(const FitsArgs& a)
{
  FitsReport r;
  auto card = find_card(a.card);
  if (!card) {
    return fail(Errc::usage, card.error().message);
  }
  r.card = *card;
  PlanArgs sizing = a.sizing;
  if (!sizing.gguf.empty()) {
    return fail(Errc::usage, "fits walks the catalogue; --gguf sizes one file: use `gpurent plan --gguf " + sizing.gguf +
                                 " --card " + a.card + "`");
  }
  sizing.model = "fits";  // every catalogue model, one after the other
  TRY_ASSIGN(r.opts, validate_plan_args(sizing));
  r.gpus = r.opts.request.gpus.value_or(1);
  TRY(check_engine_scale(r.opts.engine, r.opts.engine_version, r.gpus, 1));  // Unsloth's release on r.gpus GPUs
  for (const ModelArch& m : model_catalog()) {
    if (auto row = best_fit(r, m)) {
      r.rows.push_back(*row);
    } else {
      r.too_big.push_back(m.name);
    }
  }
  std::stable_sort(r.rows.begin(), r.rows.end(), [](const FitRow& x, const FitRow& y) {
    return std::tie(x.model->params, x.model->name) < std::tie(y.model->params, y.model->name);
  });
  return r;
}

std::string render_text(const FitsReport& r, bool color)
{
  const auto bold = [&](const std::string& s) { return color ? "\x1b[1m" + s + "\x1b[0m" : s; };
  std::string out;
  const auto header = wrap_words(fmt::format("What runs on {} x {} ({:.2f} GiB usable, limit {:.2f} GiB per GPU)", r.gpus,
                                             r.card.display, round2(to_gib(r.card.usable)),
                                             round2(to_gib(fit_limit(r.card)))),
                                 k_fits_width, "", "  ");
  for (const auto& line : header) {
    out += bold(line) + "\n";
  }
  const bool training = is_training(r.opts.task);
  const bool checkpointing = training && r.opts.grad_checkpointing.value_or(r.opts.task != Task::train);
  for (const auto& line :
       wrap_words(fmt::format("task {} with {}{}; best format first, longest context that fits",
                              to_string(r.opts.task), to_string(r.opts.engine), checkpointing ? ", checkpointing" : ""),
                  k_fits_width, "", "  ")) {
    out += line + "\n";
  }
  out += fmt::format("\n  {:<24} {:>8}  {:<8} {:>11} {:>11}\n", "model", "params", "weights", "max context", "total");
  bool marked = false;
  for (const FitRow& row : r.rows) {
    // A format the card runs only through a fallback (or cannot say) is marked, never hidden.
    const bool native = row.runs.status == RunStatus::native;
    marked = marked || !native;
    out += fmt::format("  {:<24} {:>7.2f}B  {:<8} {:>11} {:>7.2f} GiB\n", row.model->name,
                       static_cast<double>(row.model->params) / 1e9,
                       std::string(to_string(row.weights)) + (native ? "" : "*"), row.max_context, round2(to_gib(row.total)));
  }
  if (marked) {
    for (const auto& line : wrap_words(fmt::format("* not native on CC {}: a fallback path (sized as it runs) or an "
                                                   "unknown generation; `gpurent plan MODEL --card {}` says why",
                                                   compute_capability_text(r.card), r.card.id),
                                       k_fits_width, "", "  ")) {
      out += line + "\n";
    }
  }
  if (r.rows.empty()) {
    out += "  (no catalogue model fits)\n";
  }
  if (!r.too_big.empty()) {
    std::string names;
    for (const auto& n : r.too_big) {
      names += (names.empty() ? "" : ", ") + n;
    }
    out += "\n";
    for (const auto& line : wrap_words(fmt::format("Too big at any format ({}): {}", r.too_big.size(), names), k_fits_width,
                                       "", "  ")) {
      out += line + "\n";
    }
  }
  return out;
}

nlohmann::ordered_json render_json(const FitsReport& r)
{
  nlohmann::ordered_json out{{"card", r.card.id},
                             {"gpus", r.gpus},
                             {"task", std::string(to_string(r.opts.task))},
                             {"engine", std::string(to_string(r.opts.engine))}};
  out["models"] = nlohmann::ordered_json::array();
  for (const FitRow& row : r.rows) {
    out["models"].push_back({{"name", row.model->name},
                             {"weights", std::string(to_string(row.weights))},
                             {"max_context", row.max_context},
                             {"total_gib", round2(to_gib(row.total))}});
  }
  out["too_big"] = r.too_big;
  return out;
}

}  // namespace

void add_fits_command(CLI::App& app, Services& s)
{
  auto args = std::make_shared<FitsArgs>();
  auto* sub = app.add_subcommand("fits", "what can I run? every catalogue model that fits a card");
  sub->add_option("card", args->card, "a card name (\"RTX 4090\", A100-80GB, ...)")->required();
  sub->add_option("--gpus", args->sizing.gpus, "GPUs of that card (default 1)");
  add_plan_sizing_options(*sub, args->sizing);
  sub->callback([&s, args] {
    auto report = build(*args);
    if (!report) {
      s.exit_code = report_error(s, report.error());
      return;
    }
    if (s.global.json) {
      s.out << render_json(*report).dump(2) << '\n';
    } else {
      s.out << render_text(*report, s.color_out());
    }
  });
}

}  // namespace gpurent

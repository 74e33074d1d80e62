// SPDX-License-Identifier: MIT
// `gpurent fits CARD [--gpus N] [--task T] [--engine E]`: "What can I run?" For every catalogue
// model, the best (highest-precision) weight format that fits the card for the task, and the
// longest context (up to the model's maximum) that still fits, sorted by size.
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
#include "providers/plan.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

// A model only counts as runnable with at least this much context (or its maximum, if smaller).
constexpr std::uint32_t k_min_context = 1024;

struct FitsArgs {
  std::string card;
  std::string gpus;
  std::string task;
  std::string engine;
};

struct FitRow {
  const ModelArch* model = nullptr;
  WeightFormat weights = WeightFormat::bf16;
  std::uint32_t max_context = 0;
  Bytes total;
};

struct FitsReport {
  Card card;
  std::uint32_t gpus = 1;
  Task task = Task::infer;
  Engine engine = Engine::transformers;
  Bytes limit;  // for a 16-bit job; vLLM's depends on --gpu-util and is computed per job
  std::vector<FitRow> rows;
  std::vector<std::string> too_big;
};

// Weight formats to try, best (most precise) first.
std::vector<WeightFormat> candidates(Task task, Engine engine, const ModelArch& m)
{
  if (task == Task::qlora) {
    return {WeightFormat::nf4};
  }
  if (task == Task::train) {
    return {WeightFormat::bf16};
  }
  if (engine == Engine::llama_cpp || engine == Engine::ollama) {
    const auto g = gguf_by_size();
    return {g.begin(), g.end()};
  }
  if (task == Task::lora) {
    return {WeightFormat::bf16};
  }
  std::vector<WeightFormat> out{WeightFormat::bf16};
  if (engine == Engine::vllm) {
    out.push_back(WeightFormat::fp8);
  } else {
    out.push_back(WeightFormat::int8);
  }
  if (m.mxfp4_experts) {
    out.push_back(WeightFormat::mxfp4);
  }
  out.push_back(engine == Engine::vllm ? WeightFormat::awq : WeightFormat::nf4);
  return out;
}

std::optional<FitRow> best_fit(const FitsReport& r, const ModelArch& m)
{
  JobSpec base;
  base.model = m;
  base.task = r.task;
  base.engine = r.engine;
  const JobSpec sized = job_for_gpus(base, r.gpus, std::nullopt);
  const std::uint32_t max = std::max<std::uint32_t>(m.max_context, 1);
  const std::uint32_t min = std::min(k_min_context, max);
  for (const WeightFormat w : candidates(r.task, r.engine, m)) {
    JobSpec job = sized;
    job.weights = w;
    const Bytes limit = fit_limit_for(job, r.card.usable);
    const auto total_at = [&](std::uint32_t ctx) {
      job.context = ctx;
      return estimate(job).total();
    };
    if (total_at(min) > limit) {
      continue;
    }
    std::uint32_t lo = min;  // fits
    std::uint32_t hi = max;  // upper bound to test
    if (total_at(max) <= limit) {
      lo = max;
    } else {
      while (hi - lo > 1) {  // invariant: lo fits, hi does not
        const std::uint32_t mid = lo + (hi - lo) / 2;
        (total_at(mid) <= limit ? lo : hi) = mid;
      }
    }
    return FitRow{&m, w, lo, total_at(lo)};
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
  if (!a.gpus.empty()) {
    TRY_ASSIGN(r.gpus, parse_count(a.gpus, "--gpus", 1, k_max_gpus_per_server));
  }
  if (!a.task.empty()) {
    TRY_ASSIGN(r.task, parse_task(a.task));
  }
  r.engine = r.task == Task::serve ? Engine::vllm : Engine::transformers;
  if (!a.engine.empty()) {
    TRY_ASSIGN(r.engine, parse_engine(a.engine));
  }
  TRY(check_task_engine(r.task, r.engine));
  r.limit = fit_limit(r.card);
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
  std::string out = bold(fmt::format("What runs on {} x {}", r.gpus, r.card.display)) +
                    fmt::format(" ({:.2f} GiB usable, limit {:.2f} GiB per GPU)\n", round2(to_gib(r.card.usable)),
                                round2(to_gib(r.limit)));
  out += fmt::format("task {} with {}; best weight format first, longest context that fits\n\n", to_string(r.task),
                     to_string(r.engine));
  out += fmt::format("  {:<24} {:>8}  {:<8} {:>11} {:>11}\n", "model", "params", "weights", "max context", "total");
  for (const FitRow& row : r.rows) {
    out += fmt::format("  {:<24} {:>7.2f}B  {:<8} {:>11} {:>7.2f} GiB\n", row.model->name,
                       static_cast<double>(row.model->params) / 1e9, to_string(row.weights), row.max_context,
                       round2(to_gib(row.total)));
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
    for (const auto& line : wrap_words(fmt::format("Too big at any format ({}): {}", r.too_big.size(), names), 80, "",
                                       "  ")) {
      out += line + "\n";
    }
  }
  return out;
}

nlohmann::ordered_json render_json(const FitsReport& r)
{
  nlohmann::ordered_json out{{"card", r.card.id}, {"gpus", r.gpus}, {"task", std::string(to_string(r.task))}};
  out["models"] = nlohmann::ordered_json::array();
  for (const FitRow& row : r.rows) {
    out["models"].push_back({{"name", row.model->name},
                             {"weights", std::string(to_string(row.weights))},
                             {"max_context", row.max_context},
                             {"total_gib", round2(to_gib(row.total))}});
  }
  return out;
}

}  // namespace

void add_fits_command(CLI::App& app, Services& s)
{
  auto args = std::make_shared<FitsArgs>();
  auto* sub = app.add_subcommand("fits", "what can I run? every catalogue model that fits a card");
  sub->add_option("card", args->card, "a card name (\"RTX 4090\", A100-80GB, ...)")->required();
  sub->add_option("--gpus", args->gpus, "GPUs of that card (default 1)");
  sub->add_option("--task", args->task, "infer | serve | train | lora | qlora (default infer)");
  sub->add_option("--engine", args->engine, "default: vllm for serve, transformers otherwise");
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

// SPDX-License-Identifier: MIT
// `gpurent plan [MODEL] [options]`: size a job, pick a card and a provider, model the bill.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <ostream>
#include <set>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/model_options.hpp"
#include "cli/plan_json.hpp"
#include "cli/plan_options.hpp"
#include "cli/plan_report.hpp"
#include "cli/plan_text.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/hf_hub.hpp"
#include "providers/offers.hpp"
#include "sizing/estimate.hpp"
#include "sizing/fixes.hpp"
#include "sizing/launch.hpp"
#include "sizing/model_catalog.hpp"

namespace gpurent {
namespace {

struct ResolvedPlanModel {
  ModelArch arch;
  std::string source;  // catalog | hub | file | params
  std::string hf_id;   // what the launch line names
};

std::string params_label(std::uint64_t n)
{
  const double b = static_cast<double>(n) / 1e9;
  std::string v = fmt::format("{:.2f}", b);
  while (v.back() == '0') {
    v.pop_back();
  }
  if (v.back() == '.') {
    v.pop_back();
  }
  return v + "B";
}

Result<ResolvedPlanModel> resolve_plan_model(Services& s, const PlanOptions& o)
{
  if (o.params) {
    ResolvedPlanModel m;
    m.arch.name = params_label(*o.params) + "-params";
    m.arch.params = *o.params;
    m.source = "params";
    report_warning(s, fmt::format("no MODEL given: a weights-only estimate for {} parameters (no KV cache, "
                                  "activations or training state); name a model for the full estimate",
                                  *o.params));
    return m;
  }
  if (const ModelArch* arch = find_model_ptr(o.model)) {
    ResolvedPlanModel m{*arch, "catalog", arch->hf_ids.empty() ? arch->name : arch->hf_ids.front()};
    return m;
  }
  // A local config.json, the cache or the Hub: the IO module is loaded only if a fetch is needed.
  TRY_ASSIGN(ResolvedModel resolved, resolve_model(o.model, resolve_options_from(s, o.offline), s.http));
  for (const auto& w : resolved.warnings) {
    report_warning(s, w);
  }
  std::string hf_id = resolved.source_kind == "hub" ? o.model : resolved.arch.name;
  if (resolved.source_kind != "hub" && !resolved.arch.hf_ids.empty()) {
    hf_id = resolved.arch.hf_ids.front();
  }
  ResolvedPlanModel m{std::move(resolved.arch), resolved.source_kind, std::move(hf_id)};
  return m;
}

// The largest card of the catalogue: what the fixes aim at when no offer is left to compare.
const Card& largest_card()
{
  const auto cards = card_catalog();
  return *std::max_element(cards.begin(), cards.end(), [](const Card& a, const Card& b) { return a.usable < b.usable; });
}

std::vector<std::string> price_notes(const PlanReport& r, const Config& cfg, const std::vector<Offer>& offers,
                                     const PlanOptions& o)
{
  std::vector<std::string> notes;
  if (r.result.choice) {
    if (const auto p = find_provider(r.result.choice->provider)) {
      const Offer* offer = find_offer(offers, p->name, r.result.choice->card, r.result.choice->gpus);
      if (offer != nullptr) {
        notes.push_back(describe_origin(*offer, *p, cfg));
      }
    }
  }
  std::vector<std::string> unpriced;
  for (const auto& p : provider_catalog()) {
    if (o.request.provider && *o.request.provider != p.name) {
      continue;
    }
    if (std::none_of(offers.begin(), offers.end(), [&](const Offer& of) { return of.provider == p.name; })) {
      unpriced.push_back(p.name);
    }
  }
  if (!unpriced.empty()) {
    std::string names;
    for (const auto& n : unpriced) {
      names += (names.empty() ? "" : ", ") + n;
    }
    notes.push_back(fmt::format("no known prices for {}: set them under [prices.<provider>] in the config file to "
                                "compare them",
                                names));
  }
  return notes;
}

Result<PlanReport> build_report(Services& s, const PlanOptions& o)
{
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(const ResolvedPlanModel model, resolve_plan_model(s, o));
  TRY_ASSIGN(const JobSpec job, make_job(o, model.arch));
  const std::vector<Offer> offers = current_offers(s, cfg);

  PlanReport r;
  r.model_source = model.source;
  r.runtime = o.request.runtime;
  r.card_given = o.request.card.has_value();
  r.result = rank(job, offers, provider_catalog(), card_catalog(), o.request,
                  [](const JobSpec& j) { return estimate(j); });
  if (job.task == Task::serve && job.engine == Engine::vllm && r.result.card) {
    r.serve = serve_pool(r.result.job, r.result.memory, r.result.card->usable);
  }
  if (!r.fits()) {
    const Card& target = r.result.card ? *r.result.card : largest_card();
    r.fix_limit = fit_limit_for(r.result.job, target.usable);
    r.fixes = suggest_fixes(r.result.job, r.fix_limit);
  }
  r.launch = launch_commands(r.result.job, model.hf_id);
  r.notes = price_notes(r, cfg, offers, o);
  return r;
}

void run_plan(Services& s, const PlanArgs& args)
{
  auto opts = validate_plan_args(args);
  if (!opts) {
    s.exit_code = report_error(s, opts.error());
    return;
  }
  auto report = build_report(s, *opts);
  if (!report) {
    s.exit_code = report_error(s, report.error());
    return;
  }
  if (s.global.json) {
    s.out << plan_to_json(*report).dump(2) << '\n';
  } else {
    s.out << render_plan_text(*report, s.color_out());
  }
  if (!report->fits()) {
    const auto& res = report->result;
    const std::string why = report->card_given
                                ? fmt::format("the job needs {:.2f} GiB per GPU on {} x {}, over the {:.2f} GiB limit",
                                              round2(to_gib(res.memory.total())), res.job.gpus, res.card->display,
                                              round2(to_gib(report->fix_limit)))
                            : res.options.empty() ? std::string("no offer matches the filters (provider, card, GPUs, max price)")
                                                  : std::string("nothing fits within 8 GPUs of one server");
    s.exit_code = report_error(s, Error{Errc::refused, fmt::format("plan: {}; {}", why,
                                                                   report->fixes.empty() ? "relax the filters"
                                                                                         : "see the fixes above")});
  }
}

}  // namespace

void add_plan_command(CLI::App& app, Services& s)
{
  auto args = std::make_shared<PlanArgs>();
  auto* sub = app.add_subcommand("plan", "size a job's GPU memory, pick card + provider, model the bill");
  sub->add_option("model", args->model, "catalogue name, Hugging Face id, or path to a config.json");
  sub->add_option("--task", args->task, "infer | serve | train | lora | qlora (default infer)");
  sub->add_option("--engine", args->engine, "transformers | vllm | llama.cpp | ollama | torchtune | deepspeed");
  sub->add_option("--weights", args->weights, "fp32 bf16 fp16 fp8 int8 int4 nf4 awq gptq mxfp4 or a GGUF type");
  sub->add_option("--kv-cache", args->kv_cache, "auto | fp16 | bf16 | fp8 | q8_0 | q4_0 (default auto)");
  sub->add_option("--context", args->context, "tokens per sequence (default 4096, capped at the model's maximum)");
  sub->add_option("--batch", args->batch, "sequences per GPU per step, or in flight (default 1)");
  sub->add_option("--optimizer", args->optimizer, "adamw | adamw-8bit | sgd | adafactor (default adamw)");
  sub->add_flag("--grad-checkpointing", args->grad_checkpointing, "recompute activations in the backward pass");
  sub->add_option("--lora-rank", args->lora_rank, "LoRA rank (default 16)");
  sub->add_option("--gpus", args->gpus, "GPUs per server, 1-8 (default: the cheapest count that fits)");
  sub->add_option("--shard", args->shard, "none | ddp | fsdp | zero1 | zero2 | zero3 | tp");
  sub->add_option("--gpu-util", args->gpu_util, "vLLM gpu_memory_utilization (default 0.9)");
  sub->add_option("--card", args->card, "check the job against this card (\"RTX 4090\", A100-80GB, ...)");
  sub->add_option("--provider", args->provider, "only this provider");
  sub->add_option("--hours", args->hours, "expected run time in hours (default 1)");
  sub->add_flag("--spot", args->spot, "use spot/interruptible prices where offered");
  sub->add_option("--max-price", args->max_price, "highest USD per hour for the whole server");
  sub->add_option("--params", args->params, "parameter count (7B, 70e9, 8.03B) when no MODEL is given");
  sub->add_flag("--offline", args->offline, "never fetch a model from the Hugging Face Hub");
  sub->callback([&s, args] { run_plan(s, *args); });
}

}  // namespace gpurent

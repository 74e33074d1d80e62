// SPDX-License-Identifier: MIT
#include "cli/plan_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "cli/config.hpp"
#include "cli/model_options.hpp"
#include "cli/price_lookup.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "providers/hf_hub.hpp"
#include "providers/offers.hpp"
#include "sizing/estimate.hpp"
#include "sizing/fixes.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/launch.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

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
  if (const ModelArch* arch = find_model_ptr(o.model); arch != nullptr && o.gguf.empty()) {
    ResolvedPlanModel m{*arch, "catalog", arch->hf_ids.empty() ? arch->name : arch->hf_ids.front()};
    return m;
  }
  // A local checkpoint, the cache or the Hub: the IO module is loaded only if a fetch is needed.
  ResolveOptions ro = resolve_options_from(s, o.offline);
  ro.prefer_gguf = o.engine == Engine::llama_cpp || o.engine == Engine::ollama;
  ro.gguf_type = o.weights_given && is_gguf(o.weights) ? std::string(to_string(o.weights)) : std::string();
  ro.gguf = o.gguf;
  TRY_ASSIGN(ResolvedModel resolved, resolve_model(o.model, ro, s.http));
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

// What the model's own files decide when the command line does not: a GGUF file runs under
// llama.cpp in its own type, a checkpoint loads in its stored format (GPTQ, AWQ, FP8, MXFP4,
// bitsandbytes…) when the task and engine can, an adapter trains on at its own rank.
void apply_checkpoint_defaults(JobSpec& job, const PlanOptions& o)
{
  const bool inference = job.task == Task::infer || job.task == Task::serve;
  const auto& ck = job.model.checkpoint;
  if (ck && ck->gguf && inference && !o.engine_given) {
    job.engine = Engine::llama_cpp;
  }
  if (ck && ck->format && !o.weights_given && check_weights(job.task, job.engine, *ck->format)) {
    const bool gguf_engine = job.engine == Engine::llama_cpp || job.engine == Engine::ollama;
    if (!is_gguf(*ck->format) || gguf_engine || job.engine == Engine::vllm) {
      job.weights = *ck->format;
    }
  }
  if (job.model.adapter && !o.lora_rank_given && job.model.adapter->rank > 0) {
    job.lora_rank = job.model.adapter->rank;
  }
}

// Where the weights come from and which parts of the estimate are approximate (text notes).
std::vector<std::string> model_notes(const JobSpec& job)
{
  std::vector<std::string> notes;
  if (const auto& ck = job.model.checkpoint) {
    const WeightFormat held = weights_in_memory(job);
    const bool stored = loads_as_stored(*ck, held);
    notes.push_back(fmt::format("weights: {} from the {}: {:.2f} GiB {}", ck->format_label, ck->source,
                                round2(to_gib(Bytes{ck->total_bytes()})),
                                stored ? "as stored" : fmt::format("stored, held as {} here", to_string(held))));
    for (const auto& n : ck->notes) {
      notes.push_back("weights: " + n);
    }
  }
  if (const auto& a = job.model.adapter) {
    notes.push_back(fmt::format("LoRA adapter: rank {}, {} parameters, {:.2f} GiB", a->rank, a->weights.params,
                                round2(to_gib(Bytes{a->weights.bytes}))));
  }
  for (const auto& a : job.model.approximate) {
    notes.push_back(fmt::format("approximate {}: {}", a.part, a.why));
  }
  return notes;
}

// The largest card of the catalogue: what the fixes aim at when no offer is left to compare.
const Card& largest_card()
{
  const auto cards = card_catalog();
  return *std::max_element(cards.begin(), cards.end(), [](const Card& a, const Card& b) { return a.usable < b.usable; });
}

std::vector<std::string> price_notes(const PlanReport& r, const Config& cfg, const std::vector<Offer>& offers,
                                     const PlanOptions& o, std::span<const ProviderInfo> providers)
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
  for (const auto& p : providers) {
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

}  // namespace

Result<PlanReport> build_plan_report(Services& s, const PlanOptions& o, std::span<const ProviderInfo> providers)
{
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(const ResolvedPlanModel model, resolve_plan_model(s, o));
  TRY_ASSIGN(JobSpec job, make_job(o, model.arch));
  apply_checkpoint_defaults(job, o);
  const std::vector<Offer> offers = current_offers(s, cfg);

  PlanReport r;
  r.model_source = model.source;
  r.runtime = o.request.runtime;
  r.card_given = o.request.card.has_value();
  r.result = rank(job, offers, providers, card_catalog(), o.request, [](const JobSpec& j) { return estimate(j); });
  if (job.task == Task::serve && job.engine == Engine::vllm && r.result.card) {
    r.serve = serve_pool(r.result.job, r.result.memory, r.result.card->usable);
  }
  if (!r.fits()) {
    const Card& target = r.result.card ? *r.result.card : largest_card();
    r.fix_limit = fit_limit_for(r.result.job, target.usable);
    r.fixes = suggest_fixes(r.result.job, r.fix_limit);
  }
  r.launch = launch_commands(r.result.job, model.hf_id);
  r.notes = model_notes(r.result.job);
  for (auto& n : price_notes(r, cfg, offers, o, providers)) {
    r.notes.push_back(std::move(n));
  }
  return r;
}

std::string plan_misfit_reason(const PlanReport& report)
{
  const auto& res = report.result;
  if (report.card_given && !res.card_fits) {
    return fmt::format("the job needs {:.2f} GiB per GPU on {} x {}, over the {:.2f} GiB limit",
                       round2(to_gib(res.memory.total())), res.job.gpus, res.card->display,
                       round2(to_gib(report.fix_limit)));
  }
  if (res.options.empty()) {
    return "no offer matches the filters (provider, card, GPUs, max price)";
  }
  if (report.card_given) {
    return fmt::format("the job fits {} x {}, but no offer of it fits the filters", res.job.gpus, res.card->display);
  }
  return "nothing fits within 8 GPUs of one server";
}

}  // namespace gpurent

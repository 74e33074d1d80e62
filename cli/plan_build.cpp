// SPDX-License-Identifier: MIT
#include "cli/plan_build.hpp"

#include "cli/catalog_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "cli/config.hpp"
#include "cli/model_options.hpp"
#include "cli/plan_speed_text.hpp"
#include "cli/price_lookup.hpp"
#include "cli/push_support.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "providers/hf_hub.hpp"
#include "providers/cloud_rules.hpp"
#include "providers/offers.hpp"
#include "common/text.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
#include "sizing/layout.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

struct ResolvedPlanModel {
  ModelArch arch;
  std::string source;  // catalog | hub | file | params
  std::string hf_id;   // what the launch line names
  std::string launch_note;  // where a local checkpoint is when the launch line runs
};

// A local checkpoint folder (or the folder of a config.json) as the launch line names it on the
// server: `gpurent run NAME -- …` pushes the current folder to ~/gpurent/<its name> and starts
// there (cli.md `run`), so a folder inside it keeps its relative path ("./x"); one outside it is
// pushed on its own by `gpurent push NAME DIR` to ~/gpurent/<its name>, "../<its name>" from there.
struct ServerPath {
  std::string path;
  std::string note;
};
ServerPath server_path(std::string_view given, bool config_file)
{
  namespace fs = std::filesystem;
  fs::path p{std::string(given)};
  if (config_file) {
    p = p.parent_path();
  }
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  if (ec || given.starts_with("~")) {
    return {std::string(given), ""};
  }
  const fs::path abs = (p.is_absolute() ? p : cwd / p).lexically_normal();
  const fs::path rel = abs.lexically_relative(cwd.lexically_normal());
  const std::string here = default_push_dir(cwd);
  if (!rel.empty() && *rel.begin() != "..") {
    std::string path = rel == "." ? std::string(".") : "./" + rel.generic_string();
    while (path.size() > 2 && path.back() == '/') {
      path.pop_back();  // "./x/" as given
    }
    if (path == "./.") {
      path = ".";
    }
    return {path, fmt::format("the launch line loads {} from the folder it starts in: `gpurent run NAME -- …` run "
                              "from this folder pushes it there ({})",
                              path, here)};
  }
  std::string dir = abs.generic_string();
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  const std::string base = fs::path(dir).filename().string();
  if (base.empty()) {
    return {std::string(given), ""};
  }
  return {"../" + base, fmt::format("{} is outside this folder: `gpurent push NAME {}` copies it to ~/gpurent/{}, "
                                    "which the launch line names as ../{} from the folder `gpurent run NAME -- …` "
                                    "starts in ({})",
                                    dir, dir, base, base, here)};
}

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

Result<ResolvedPlanModel> resolve_plan_model(Services& s, const Config& cfg, const PlanOptions& o)
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
    // The id the user named (an Instruct variant, a quantized checkpoint), in its format.
    std::string id = named_hf_id(*arch, o.model);
    ResolvedPlanModel m{for_checkpoint(*arch, id), "catalog", std::move(id), ""};
    return m;
  }
  // A local checkpoint, the cache or the Hub: the IO module is loaded only if a fetch is needed.
  ResolveOptions ro = resolve_options_from(s, cfg, o.offline);
  ro.prefer_gguf = o.engine == Engine::llama_cpp || o.engine == Engine::ollama;
  ro.gguf_type = o.weights && is_gguf(*o.weights) ? std::string(to_string(*o.weights)) : std::string();
  ro.gguf = o.gguf;
  TRY_ASSIGN(ResolvedModel resolved, resolve_model(o.model, ro, hub_http(s, cfg, ro)));
  for (const auto& w : resolved.warnings) {
    report_warning(s, w);
  }
  // A Hub id as named; a local checkpoint (or --gguf alone) by its config's id, else its name.
  std::string hf_id = resolved.source_kind == "hub" && !o.model.empty() ? o.model : resolved.arch.name;
  if ((resolved.source_kind != "hub" || resolved.arch.adapter) && !resolved.arch.hf_ids.empty()) {
    hf_id = resolved.arch.hf_ids.front();  // an adapter (local or a Hub repository) launches its base
  }
  // A checkpoint read from local files (not an adapter on a base model): the engines load the
  // path the user gave, when it is one plain shell word.
  const auto& ck = resolved.arch.checkpoint;
  const bool config_file = o.model.size() > 5 && o.model.ends_with(".json");
  std::string note;
  const bool gguf_file = o.model.size() > 5 && iequals(std::string_view(o.model).substr(o.model.size() - 5), ".gguf");
  if (resolved.source_kind == "file" && (!ck || ck->hub_repo.empty()) && !resolved.arch.adapter && !o.model.empty() &&
      (ck || !config_file || resolved.arch.hf_ids.empty())) {
    if (gguf_file) {
      hf_id = o.model;  // as given: the launch lines quote it, never rewrite it
    } else {
      ServerPath sp = server_path(o.model, config_file);  // a folder: the path it has on the server
      hf_id = std::move(sp.path);
      note = std::move(sp.note);
    }
  }
  if (hf_id.empty()) {
    hf_id = "model";
  }
  ResolvedPlanModel m{std::move(resolved.arch), resolved.source_kind, std::move(hf_id), std::move(note)};
  return m;
}

std::vector<std::string> price_notes(const PlanReport& r, const Config& cfg, std::span<const Offer> offers,
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
    // A market cloud's prices come from the catalogue (`gpurent offers --unmapped` says what it
    // lists that gpurent cannot price); the note is for the providers priced by hand or config.
    const bool market = std::any_of(market_cloud_rules().begin(), market_cloud_rules().end(),
                                    [&](const ProviderInfo& m) { return m.name == p.name; });
    if (market || !o.request.filter.names(p.name) || (o.request.filter.rentable_only && !p.rentable())) {
      continue;
    }
    if (std::none_of(offers.begin(), offers.end(), [&](const Offer& of) { return of.provider == p.name; })) {
      unpriced.push_back(p.name);
    }
  }
  const JobSpec& j = r.result.job;
  if (!is_training(j.task) && j.engine == Engine::vllm && !native_weights(j) &&
      (j.weights == WeightFormat::awq || j.weights == WeightFormat::gptq)) {
    notes.push_back(fmt::format("vLLM loads {} weights only from a {} checkpoint: name one (e.g. an -{} repo) "
                                "instead of {}",
                                to_string(j.weights), to_string(j.weights), j.weights == WeightFormat::awq ? "AWQ" : "GPTQ",
                                r.launch_id));
  }
  if (!is_training(j.task) && j.engine == Engine::tensorrt_llm && is_quantized(j.weights) && !native_weights(j) &&
      !r.launch.empty()) {
    // trtllm-serve quantizes nothing on load: the format comes from the checkpoint (its
    // quantization_config or ModelOpt's hf_quant_config.json; tests/data/trtllm/support.md).
    notes.push_back(fmt::format("TensorRT-LLM serves {} weights only from a checkpoint stored in {} (TensorRT Model "
                                "Optimizer's, e.g. an nvidia/...-{} repo): name one instead of {}",
                                to_string(j.weights), to_string(j.weights),
                                j.weights == WeightFormat::fp8 ? "FP8" : j.weights == WeightFormat::nvfp4 ? "FP4" : "quantized",
                                r.launch_id));
  }
  if (j.engine == Engine::torchtune && r.launch.empty()) {
    notes.push_back(fmt::format("torchtune ships no {} config for {} (`tune ls` lists them): use --engine "
                                "transformers for a launch line",
                                to_string(j.task), j.model.name));
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

// A sized job ranked by its bill whose choice is not the cheapest option that runs it: the tie
// rule traded under 5% of the bill for hours (cli.md plan v4 "Ranking with a size"); say so.
std::optional<std::string> shortest_within_note(const PlanResult& res)
{
  const auto& c = res.choice;
  if (res.ranked_by != RankBy::cost || !c || !c->job_cost || !c->hours) {
    return std::nullopt;
  }
  const PlanOption* cheapest = nullptr;
  for (const auto& o : res.options) {
    if (o.choosable() && o.runs.status == c->runs.status && o.job_cost && o.hours &&
        (cheapest == nullptr || *o.job_cost < *cheapest->job_cost)) {
      cheapest = &o;
    }
  }
  if (cheapest == nullptr || *cheapest->job_cost >= *c->job_cost) {
    return std::nullopt;
  }
  const std::int64_t more = c->job_cost->n - cheapest->job_cost->n;
  return fmt::format("the choice costs {} ({:.1f}%) more than the cheapest option that runs it ({} x {} on {}, {}) and "
                     "finishes in {} instead: within 5% of the lowest bill the shortest job wins (--rank-by time: "
                     "the fastest at any price)",
                     format_usd(MicroUsd{more}), 100.0 * static_cast<double>(more) / static_cast<double>(cheapest->job_cost->n),
                     cheapest->gpus, cheapest->card_display, cheapest->provider, duration_label(*cheapest->hours),
                     duration_label(*c->hours));
}

}  // namespace

Result<PlanInputs> gather_plan_inputs(Services& s, const PlanOptions& o)
{
  TRY_ASSIGN(Config cfg, load_config(s));
  if (!o.offline) {
    refresh_stale_catalogue(s, cfg, catalog_reader());  // the first fetch, or a stale cache's clouds
  }
  TRY_ASSIGN(ResolvedPlanModel model, resolve_plan_model(s, cfg, o));
  PlanInputs in{std::move(cfg),
                PlanModel{std::move(model.arch), std::move(model.source), std::move(model.hf_id), std::move(model.launch_note)},
                {}};
  // --region chooses among every region the catalogue cache holds, not only each shape's cheapest.
  const auto regions = o.request.filter.region ? market::CatalogLoad::all : market::CatalogLoad::cheapest_per_shape;
  in.regions = builtin_regions(regions);
  static_cast<void>(current_offers_into(s, in.cfg, in.merged, regions));
  return in;
}

std::span<const Offer> PlanInputs::offers() const noexcept
{
  return merged.empty() ? builtin_offers(regions) : std::span<const Offer>(merged);
}

Result<PlanReport> plan_from(const PlanInputs& in, const PlanOptions& o, std::span<const ProviderInfo> providers)
{
  Result<PlanReport> out = plan(o, Catalogues{in.offers(), providers, card_catalog()}, in.model);
  if (!out) {
    return out;
  }
  PlanReport& r = *out;  // in the caller's return slot (planner/plan.cpp says why)
  if (auto shortest = shortest_within_note(r.result)) {
    r.notes.push_back(std::move(*shortest));
  }
  for (auto& n : price_notes(r, in.cfg, in.offers(), o, providers)) {
    r.notes.push_back(std::move(n));
  }
  return out;
}

Result<PlanReport> build_plan_report(Services& s, const PlanOptions& o, std::span<const ProviderInfo> providers)
{
  TRY_ASSIGN(const PlanInputs in, gather_plan_inputs(s, o));
  return plan_from(in, o, providers);
}

std::string plan_misfit_reason(const PlanReport& report)
{
  const auto& res = report.result;
  if (!res.layout_ok) {
    if (const auto why = servers_refusal(res.job, res.job.nodes); !why.empty()) {
      return fmt::format("{} cannot run {} on {} servers: {}", to_string(res.job.engine), res.job.model.name,
                         res.job.nodes, why);
    }
    if (res.job.nodes > 1) {
      return fmt::format("{} cannot run {} on {} servers (the heads or layers do not split over their GPUs)",
                         to_string(res.job.engine), res.job.model.name, res.job.nodes);
    }
    return fmt::format("{} cannot run {} on {} GPUs (the heads or layers do not split that way)",
                       to_string(res.job.engine), res.job.model.name, res.job.gpus);
  }
  if (report.refused()) {
    std::string where = "no offered card runs it";
    if (const auto& e = report.runs_elsewhere) {
      where = fmt::format("the cheapest card that runs it: {} x {} on {} at {} (--card {})", e->gpus, e->card_display,
                          e->provider, format_usd(e->price_per_hour) + "/h", e->card);
    }
    if (const auto& h = report.runs_with) {
      where += fmt::format("; on {} it runs natively under {} (--engine {})", res.card->display, to_string(h->job.engine),
                           to_string(h->job.engine));
    }
    return fmt::format("{} does not run this job on {}: {}; {}", to_string(res.job.engine), res.card->display,
                       res.runs.why, where);
  }
  if (report.missed_deadline()) {
    const PlanOption* fastest = nullptr;
    for (const auto& o : res.options) {
      if (o.fits && o.runs.status != RunStatus::refused && o.hours && (fastest == nullptr || *o.hours < *fastest->hours)) {
        fastest = &o;
      }
    }
    const std::string deadline = duration_label(*report.deadline);
    if (fastest == nullptr) {
      return fmt::format("no option's time is known (a card figure the speed needs is missing), so none is known to "
                         "finish within {}",
                         deadline);
    }
    return fmt::format("no option finishes within {}; the fastest: {} x {} on {} in {} for {} (--deadline {:.1f}h or "
                       "more)",
                       deadline, fastest->gpus, fastest->card_display, fastest->provider, duration_label(*fastest->hours),
                       fastest->job_cost ? format_usd(*fastest->job_cost) : std::string("?"),
                       static_cast<double>(fastest->hours->count()) / 3600.0 + 0.05);
  }
  if (report.missed_targets()) {
    return missed_targets_text(report);
  }
  if (report.card_given && !res.card_fits) {
    return fmt::format("the job needs {:.2f} GiB per GPU on {}{} x {}, over the {:.2f} GiB limit",
                       round2(to_gib(res.memory.total())),
                       res.job.nodes > 1 ? fmt::format("{} servers x ", res.job.nodes) : std::string(), res.job.gpus,
                       res.card->display,
                       round2(to_gib(report.fix_limit)));
  }
  if (res.options.empty()) {
    return "no offer matches the filters (--provider, --rentable, --region, --card, --gpus, --max-price)";
  }
  if (report.card_given) {
    return fmt::format("the job fits {} x {}, but no offer of it fits the filters", res.job.gpus, res.card->display);
  }
  return nothing_fits_text(report);
}

std::string nothing_fits_text(const PlanReport& report)
{
  if (!report.nodes_asked) {
    return "nothing fits within 8 GPUs of one server, nor on several servers joined by a link whose bandwidth the "
           "provider publishes (--nodes N tries any provider's servers)";
  }
  if (*report.nodes_asked == 1) {
    return "nothing fits within 8 GPUs of one server";
  }
  return fmt::format("nothing fits on {} servers of any provider that joins that many", *report.nodes_asked);
}

std::string missed_targets_text(const PlanReport& report)
{
  // The option closest to the targets: the fastest per user, then the quickest first token.
  const PlanOption* best = nullptr;
  const auto key = [](const PlanOption& o) {
    return std::pair(o.speed.per_user_tokens_per_s.value_or(0.0), -o.speed.ttft_s.value_or(1e300));
  };
  for (const auto& o : report.result.options) {
    if (o.fits && o.runs.status != RunStatus::refused && !o.late && o.serve && (best == nullptr || key(o) > key(*best))) {
      best = &o;
    }
  }
  std::string targets = fmt::format("at least {:g} tok/s per user", report.targets.min_user_tokens_per_s);
  if (report.targets.max_ttft_s) {
    targets += fmt::format(", first token within {:g} s", *report.targets.max_ttft_s);
  }
  if (best == nullptr) {
    return fmt::format("no option meets the service targets ({})", targets);
  }
  std::string misses;
  for (const auto& m : best->serve->misses) {
    misses += (misses.empty() ? "" : "; ") + m;
  }
  return fmt::format("no option meets the service targets ({}); the closest: {}{} x {} on {} with {} in flight: {}",
                     targets, best->servers() > 1 ? fmt::format("{} servers of ", best->servers()) : "", best->gpus,
                     best->card_display, best->provider, best->speed.concurrency, misses);
}

}  // namespace gpurent

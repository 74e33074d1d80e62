// SPDX-License-Identifier: MIT
#include "cli/plan_build.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "cli/config.hpp"
#include "cli/model_options.hpp"
#include "cli/plan_recipe.hpp"
#include "cli/plan_speed_text.hpp"
#include "cli/price_lookup.hpp"
#include "cli/push_support.hpp"
#include "cli/services.hpp"
#include "providers/card.hpp"
#include "providers/hf_hub.hpp"
#include "providers/offers.hpp"
#include "common/text.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
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
  const JobSpec& j = r.result.job;
  if (!is_training(j.task) && j.engine == Engine::vllm && !native_weights(j) &&
      (j.weights == WeightFormat::awq || j.weights == WeightFormat::gptq)) {
    notes.push_back(fmt::format("vLLM loads {} weights only from a {} checkpoint: name one (e.g. an -{} repo) "
                                "instead of {}",
                                to_string(j.weights), to_string(j.weights), j.weights == WeightFormat::awq ? "AWQ" : "GPTQ",
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

// The engines to try, in order, when the job's own engine refuses it on the card given: the
// serving engines first (a batching server before a single-user one), transformers last.
std::vector<Engine> engines_for(Task task)
{
  if (is_training(task)) {
    return {Engine::transformers, Engine::deepspeed, Engine::torchtune};
  }
  std::vector<Engine> e{Engine::vllm, Engine::sglang, Engine::llama_cpp, Engine::ollama};
  if (task != Task::serve) {
    e.push_back(Engine::transformers);
  }
  return e;
}

// The first other engine that runs the job natively on the card given and fits it there, with its
// launch line (the same model, task, context and batch; that engine's own defaults otherwise).
std::optional<EngineHere> engine_here(const PlanOptions& o, const ModelArch& arch, const JobSpec& job,
                                      const std::vector<Offer>& offers, std::span<const ProviderInfo> providers,
                                      const std::string& launch_id)
{
  for (const Engine e : engines_for(job.task)) {
    if (e == job.engine) {
      continue;
    }
    PlanOptions alt = o;
    alt.engine = e;
    alt.engine_given = true;
    alt.engine_version = 0;
    alt.gguf.clear();
    if (!check_task_engine(alt.task, e)) {
      continue;
    }
    const Result<JobSpec> j = make_job(alt, arch, nullptr);
    if (!j) {
      continue;
    }
    PlanRequest request = o.request;
    if (!o.request.shard || *o.request.shard == Shard::tp || *o.request.shard == Shard::layer) {
      request.shard.reset();  // that engine's own split
    }
    const PlanResult res = rank(*j, offers, providers, card_catalog(), request, [](const JobSpec& x) { return estimate(x); });
    if (!res.card || !res.card_fits || !res.layout_ok || res.runs.status != RunStatus::native) {
      continue;
    }
    EngineHere here{res.job, res.memory, res.runs, {}};
    if (!launch_id.empty()) {
      here.launch = launch_commands(res.job, launch_id, res.card->usable);
    }
    return here;
  }
  return std::nullopt;
}

// Ranked by the hourly price: an option that delivers at least 20% more tokens per dollar than the
// choice is worth saying (plan v3: speed shows what each option delivers per dollar).
std::optional<std::string> per_dollar_hint(const PlanResult& res)
{
  if (res.ranked_by != RankBy::hourly || !res.choice || !res.choice->tokens_per_dollar) {
    return std::nullopt;
  }
  const PlanOption* best = nullptr;
  for (const auto& o : res.options) {
    if (o.choosable() && o.runs.status == res.choice->runs.status && o.tokens_per_dollar &&
        (best == nullptr || *o.tokens_per_dollar > *best->tokens_per_dollar)) {
      best = &o;
    }
  }
  const double mine = static_cast<double>(*res.choice->tokens_per_dollar);
  if (best == nullptr || mine <= 0 || static_cast<double>(*best->tokens_per_dollar) < mine * 1.2) {
    return std::nullopt;
  }
  return fmt::format("{} x {} on {} ({}/h) delivers {:.0f}% more tokens per dollar than the choice: rank by the "
                     "bill with --rank-by cost, or give the job's size (--requests, --tokens)",
                     best->nodes > 1 ? fmt::format("{} servers x {}", best->nodes, best->gpus) : std::to_string(best->gpus),
                     best->card_display, best->provider,
                     format_usd(MicroUsd{best->price_per_hour.n * best->nodes}) + (best->nodes > 1 ? " in all" : ""),
                     (static_cast<double>(*best->tokens_per_dollar) / mine - 1.0) * 100.0);
}

}  // namespace

Result<PlanReport> build_plan_report(Services& s, const PlanOptions& o, std::span<const ProviderInfo> providers)
{
  TRY_ASSIGN(const Config cfg, load_config(s));
  TRY_ASSIGN(const ResolvedPlanModel model, resolve_plan_model(s, cfg, o));
  PlanReport r;
  TRY_ASSIGN(const JobSpec job, make_job(o, model.arch, &r.defaults));
  const SpeedLoad& load = o.request.size.load;
  if (std::uint64_t{load.input_len} + load.output_len > job.context) {
    return fail(Errc::usage, fmt::format("--input-len {} + --output-len {} exceed the context of {} tokens; raise "
                                         "--context (the KV cache is sized for it)",
                                         load.input_len, load.output_len, job.context));
  }
  const std::vector<Offer> offers = current_offers(s, cfg);

  r.model_source = model.source;
  r.launch_id = model.hf_id;
  r.runtime = o.request.runtime;
  r.size = o.request.size;
  r.deadline = o.request.deadline;
  r.nodes_asked = o.request.nodes;
  r.card_given = o.request.card.has_value();
  r.result = rank(job, offers, providers, card_catalog(), o.request, [](const JobSpec& j) { return estimate(j); });
  add_layout_defaults(r, o.request);
  if (r.refused()) {
    PlanRequest elsewhere = o.request;
    elsewhere.card.reset();
    elsewhere.gpus.reset();
    const PlanResult other = rank(job, offers, providers, card_catalog(), elsewhere, [](const JobSpec& j) { return estimate(j); });
    r.runs_elsewhere = other.choice;
    r.runs_with = engine_here(o, model.arch, job, offers, providers, model.hf_id);
  }
  std::uint32_t served = 0;
  if (job.task == Task::serve && (job.engine == Engine::vllm || job.engine == Engine::sglang) && r.result.card) {
    r.serve = serve_pool(r.result.job, r.result.memory, r.result.card->usable);
    // The launch line serves as many requests at once as the pool holds at the planned context
    // (never fewer than --batch), unless the user set --batch.
    if (!o.batch_given) {
      const auto held = static_cast<std::uint32_t>(std::min(r.serve->max_concurrency, 65536.0));
      served = std::max<std::uint32_t>({held, r.result.job.batch, 1});
    }
  }
  // The fixes and the recipe start from the job as sized (vLLM's default --max-num-seqs, which its
  // profiling samples), not from the launch line's count for this job's pool.
  if (!r.fits() && !r.refused() && !r.missed_deadline()) {
    add_fixes_and_recipe(r, job, o.request);
  }
  if (served > 0) {
    r.result.job.max_seqs = served;
  }
  // --params names no model to launch; a job that does not fit or run has no line that starts (the
  // recipe's, when it fits, is the one to launch).
  if (!model.hf_id.empty() && r.fits()) {
    r.launch = launch_commands(r.result.job, model.hf_id,
                               r.result.card ? std::optional<Bytes>(r.result.card->usable) : std::nullopt);
  }
  if (const auto& c = r.result.choice; c && c->hours) {
    const StartupTime st = startup_time(r.result.job);
    r.startup_basis = fmt::format("download {:.1f} GB at {:.0f} MB/s (assumed: no provider publishes a rate) {} s, "
                                  "load at {:.2f} GiB/s {} s, engine warm-up {} s (median of 17 vLLM logs)",
                                  st.download_bytes / 1e9, k_download_bytes_per_s / 1e6, st.download.count(),
                                  k_load_bytes_per_s / static_cast<double>(k_gib), st.load.count(), st.warmup.count());
  }
  r.notes = model_notes(r.result.job);
  if (!model.launch_note.empty() && !r.launch.empty()) {
    r.notes.push_back(model.launch_note);
  }
  if (r.result.choice && r.result.job.nodes > 1 && r.result.job.engine == Engine::vllm) {
    r.notes.push_back(fmt::format("vLLM across {} servers runs on a Ray cluster of them: `ray start --head` on the "
                                  "first, `ray start --address <first>:6379` on the others, then the launch line on "
                                  "the first",
                                  r.result.job.nodes));
  }
  if (!r.launch.empty() && r.result.job.nodes > 1 && is_training(r.result.job.task)) {
    r.notes.push_back(fmt::format("the launch line runs on each of the {} servers: paste it after `gpurent run GROUP "
                                  "--env DATASET=<hub dataset id> --`; `bash -c '…'` leaves $GPURENT_NODE_RANK and "
                                  "the others to each server's shell, which `run` gives them",
                                  r.result.job.nodes));
  }
  if (auto hint = per_dollar_hint(r.result)) {
    r.notes.push_back(std::move(*hint));
  }
  for (auto& n : price_notes(r, cfg, offers, o, providers)) {
    r.notes.push_back(std::move(n));
  }
  return r;
}

std::string plan_misfit_reason(const PlanReport& report)
{
  const auto& res = report.result;
  if (!res.layout_ok) {
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
  if (report.card_given && !res.card_fits) {
    return fmt::format("the job needs {:.2f} GiB per GPU on {}{} x {}, over the {:.2f} GiB limit",
                       round2(to_gib(res.memory.total())),
                       res.job.nodes > 1 ? fmt::format("{} servers x ", res.job.nodes) : std::string(), res.job.gpus,
                       res.card->display,
                       round2(to_gib(report.fix_limit)));
  }
  if (res.options.empty()) {
    return "no offer matches the filters (provider, card, GPUs, max price)";
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

}  // namespace gpurent

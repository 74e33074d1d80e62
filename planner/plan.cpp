// SPDX-License-Identifier: MIT
// The planner's entry point (plan.hpp): the job made once, ranked, served, fixed and launched.
#include "planner/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/rounding.hpp"
#include "planner/engine_compare.hpp"
#include "planner/launch.hpp"
#include "planner/plan_recipe.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/checkpoint_use.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

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

// The engines to try, in order, when the job's own engine refuses it on the card given: the
// serving engines first (a batching server before a single-user one), transformers last.
std::vector<Engine> engines_for(Task task)
{
  if (is_training(task)) {
    return {Engine::transformers, Engine::deepspeed, Engine::torchtune};
  }
  std::vector<Engine> e{Engine::vllm, Engine::sglang, Engine::tensorrt_llm, Engine::llama_cpp, Engine::ollama};
  if (task != Task::serve) {
    e.push_back(Engine::transformers);
  }
  return e;
}

// The first other engine that runs the job natively on the card given and fits it there, with its
// launch line (the same model, task, context and batch; that engine's own defaults otherwise).
std::optional<EngineHere> engine_here(const PlanOptions& o, const ModelArch& arch, const JobSpec& job,
                                      const Catalogues& catalogues, const std::string& launch_id)
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
    const PlanResult res = rank(*j, catalogues.offers, catalogues.providers, catalogues.cards, request,
                                [](const JobSpec& x) { return estimate(x); });
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

// A serving job ranked by what it delivers: when the option cheapest per hour is not the choice,
// say what it would deliver instead (fewer output tokens per dollar, or the targets it misses).
std::optional<std::string> cheaper_per_hour_note(const PlanResult& res)
{
  const auto& c = res.choice;
  if (res.ranked_by != RankBy::cost || !c || !c->serve || !c->tokens_per_dollar || c->job_cost) {
    return std::nullopt;
  }
  const PlanOption* cheap = nullptr;
  for (const auto& o : res.options) {
    if (o.fits && o.runs.status == c->runs.status && !o.late && (cheap == nullptr || o.cost < cheap->cost)) {
      cheap = &o;
    }
  }
  if (cheap == nullptr || cheap->cost >= c->cost) {
    return std::nullopt;
  }
  const std::string what = fmt::format("{}{} x {} on {} ({}/h)", cheap->servers() > 1 ? fmt::format("{} servers of ", cheap->servers()) : "",
                                       cheap->gpus, cheap->card_display, cheap->provider,
                                       format_usd(MicroUsd{cheap->price_per_hour.n * cheap->servers()}));
  if (!cheap->serve->meets_targets) {
    return fmt::format("{} is the cheapest per hour but misses the service targets: {}", what,
                       cheap->serve->misses.empty() ? std::string("?") : cheap->serve->misses.front());
  }
  if (!cheap->tokens_per_dollar || *cheap->tokens_per_dollar == 0) {
    return std::nullopt;
  }
  const double mine = static_cast<double>(*c->tokens_per_dollar);
  const double theirs = static_cast<double>(*cheap->tokens_per_dollar);
  return fmt::format("{} is the cheapest per hour but serves {:.0f}% fewer output tokens per dollar than the choice "
                     "(${:.2f} against ${:.2f} per million output tokens)",
                     what, (1.0 - theirs / mine) * 100.0, 1e6 / theirs, 1e6 / mine);
}

}  // namespace

Result<PlanReport> plan(const PlanOptions& o, const Catalogues& catalogues, const PlanModel& model)
{
  const std::span<const Offer> offers = catalogues.offers;
  const std::span<const ProviderInfo> providers = catalogues.providers;
  // Built in the caller's return slot: a PlanReport is 7 KB, and each copy on the stack is fresh
  // pages at every start (docs/benchmarks.md, "the code a start runs, side by side").
  Result<PlanReport> out{std::in_place};
  PlanReport& r = *out;
  TRY_ASSIGN(const JobSpec job, make_job(o, model.arch, &r.defaults));
  const SpeedLoad& load = o.request.size.load;
  if (std::uint64_t{load.input_len} + load.output_len > job.context) {
    return fail(Errc::usage, fmt::format("--input-len {} + --output-len {} exceed the context of {} tokens; raise "
                                         "--context (the KV cache is sized for it)",
                                         load.input_len, load.output_len, job.context));
  }

  r.model_source = model.source;
  r.launch_id = model.hf_id;
  r.runtime = o.request.runtime;
  r.size = o.request.size;
  r.deadline = o.request.deadline;
  r.targets = o.request.targets;
  r.nodes_asked = o.request.nodes;
  r.card_given = o.request.card.has_value();
  TRY(check_engine_scale(job.engine, job.engine_version, o.request.gpus, o.request.nodes));
  PlanRequest request = o.request;
  request.alternatives_only = !request.card;  // --card: that card on every cloud that sells it
  if (job.engine == Engine::unsloth) {
    // One server; one GPU where the release has no multi-GPU training (check_engine_scale).
    request.nodes = 1;
    if (!request.gpus && !check_engine_scale(job.engine, job.engine_version, 2, 1)) {
      request.gpus = 1;
    }
  }
  r.result = rank(job, offers, providers, catalogues.cards, request, [](const JobSpec& j) { return estimate(j); });
  add_layout_defaults(r, o.request);
  if (r.refused()) {
    PlanRequest elsewhere = o.request;
    elsewhere.card.reset();
    elsewhere.gpus.reset();
    // "The cheapest card that runs it": without a job size, the lowest price per hour. Unsized
    // serving otherwise ranks by the cost of a million tokens at what each KV pool holds, which
    // named 8 x H100 ($8/h) for a 20B model refused on a T4 that one $0.4/h card serves.
    if (!o.request.rank_by && !o.request.size.sized()) {
      elsewhere.rank_by = RankBy::hourly;
    }
    r.runs_elsewhere = rank(job, offers, providers, catalogues.cards, elsewhere, [](const JobSpec& j) { return estimate(j); }).choice;
    r.runs_with = engine_here(o, model.arch, job, catalogues, model.hf_id);
  }
  std::uint32_t served = 0;
  if (job.task == Task::serve && pools_kv(job.engine) && r.result.card) {
    r.serve = serve_pool(r.result.job, r.result.memory, r.result.card->usable);
    // The launch line serves the choice's sequences per replica (--concurrency spread over its
    // replicas, or what the pool holds at the service targets); without a choice, as many requests
    // at once as the pool holds at the planned context (never fewer than --batch), unless the user
    // set --batch.
    if (const auto& c = r.result.choice; c && c->serve) {
      served = c->serve->per_replica;
    } else if (!o.batch_given) {
      const auto held = static_cast<std::uint32_t>(std::min(r.serve->max_concurrency, 65536.0));
      served = std::max<std::uint32_t>({held, r.result.job.batch, 1});
    }
  }
  // The fixes and the recipe start from the job as sized (vLLM's default --max-num-seqs, which its
  // profiling samples), not from the launch line's count for this job's pool.
  if (!r.fits() && !r.refused() && !r.missed_deadline() && !r.missed_targets()) {
    add_fixes_and_recipe(r, job, o.request);
  }
  if (job.offline_batch && !o.batch_given) {
    // The batch runs as many requests at once as the speed was computed for (what the pool holds).
    served = std::max<std::uint32_t>(r.result.speed.concurrency, 1);
    r.defaults.push_back({"concurrency", std::to_string(served),
                          fmt::format("the requests of {} + {} tokens the KV pool holds on the {}{}, at most the "
                                      "requests; --batch sets it",
                                      r.result.speed.input_len, r.result.speed.output_len,
                                      r.result.card ? r.result.card->display : std::string("card"),
                                      job.engine == Engine::vllm
                                          ? fmt::format(", at most the {} sequences vLLM's profiling pass sizes",
                                                        vllm_profile_seqs(r.result.job))
                                          : std::string()),
                          JobDefault::Kind::number});
  }
  if (served > 0) {
    r.result.job.max_seqs = served;
  }
  // --params names no model to launch; a job that does not fit or run, or meets no service target,
  // has no line that starts (the recipe's, when it fits, is the one to launch).
  if (!model.hf_id.empty() && r.fits() && !r.missed_targets()) {
    r.launch = launch_commands(r.result.job, model.hf_id,
                               r.result.card ? std::optional<Bytes>(r.result.card->usable) : std::nullopt,
                               r.result.speed.output_len > 0 ? r.result.speed.output_len : k_default_output_len);
  }
  if (const auto& c = r.result.choice; c && c->hours) {
    const StartupTime st = startup_time(r.result.job);
    r.startup_basis = fmt::format("download {:.1f} GB, the checkpoint as stored ({}), at {:.0f} MB/s (assumed: no "
                                  "offer publishes a rate) {} s, load at {:.2f} GiB/s {} s, engine warm-up {} s "
                                  "(median of 17 vLLM logs)",
                                  st.download_bytes / 1e9, st.download_source, k_download_bytes_per_s / 1e6,
                                  st.download.count(), k_load_bytes_per_s / static_cast<double>(k_gib), st.load.count(),
                                  st.warmup.count());
    r.startup = st;
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
  if (!r.launch.empty() && r.result.job.offline_batch && r.result.job.engine == Engine::tensorrt_llm) {
    const std::uint32_t at_once = std::max<std::uint32_t>(r.result.job.max_seqs, 1);
    r.notes.push_back(fmt::format("TensorRT-LLM runs the batch as its server: send the {} requests to its OpenAI API "
                                  "(port 8000, /v1/chat/completions) with {} in flight, as --max_batch_size allows: the "
                                  "hours and the bill assume that many at once",
                                  r.size.requests.value_or(0), at_once));
  }
  if (!r.launch.empty() && r.result.job.nodes > 1 && r.result.job.engine == Engine::sglang && !is_training(r.result.job.task)) {
    r.notes.push_back(fmt::format("SGLang across {} servers: one tensor-parallel group of {} GPUs; the launch line runs "
                                  "on each server: paste it after `gpurent run GROUP --`; `bash -c '…'` leaves "
                                  "$GPURENT_NODE_RANK, $MASTER_ADDR and $MASTER_PORT to each server's shell, which `run` "
                                  "gives them",
                                  r.result.job.nodes, world_gpus(r.result.job)));
  }
  if (!r.launch.empty() && r.result.job.nodes > 1 && is_training(r.result.job.task)) {
    r.notes.push_back(fmt::format("the launch line runs on each of the {} servers: paste it after `gpurent run GROUP "
                                  "--env DATASET=<hub dataset id> --`; `bash -c '…'` leaves $GPURENT_NODE_RANK and "
                                  "the others to each server's shell, which `run` gives them",
                                  r.result.job.nodes));
  }
  if (r.result.choice && is_training(r.result.job.task) && !r.result.job.compile && r.result.job.engine != Engine::unsloth) {
    r.notes.push_back("the hours are an eager run's: --compile plans it under torch.compile, which ran torchtune's "
                      "Llama 3.2 3B fine-tune 1.27x faster on an A100 (docs/speed.md \"Compiled or eager\")");
  }
  if (r.result.job.engine == Engine::llama_cpp && r.result.job.engine_version != 0) {
    const JobSpec& j = r.result.job;
    r.notes.push_back(fmt::format(
        "llama.cpp b{}: the prompt's speed is this build's ({}); the launch line uses today's flags (`-fa on|off|auto` "
        "since late August 2025; older builds take a bare `-fa`)",
        j.engine_version,
        !is_gguf(j.weights) || j.weights == WeightFormat::gguf_f16 ? "16-bit weights run cuBLAS in every build"
        : j.engine_version < k_llamacpp_first_mmq_default
            ? "before b3216 a quantized prompt is dequantized to F16 for cuBLAS on Volta and newer"
            : "from b3216 its own int8 tensor-core kernels run a quantized prompt"));
  }
  if (auto hint = per_dollar_hint(r.result)) {
    r.notes.push_back(std::move(*hint));
  }
  if (compares_engines(o, job)) {
    // Shown when at least one engine serves the job: a job none fits is the fixes' matter.
    auto engines = compare_engines(o, request, model.arch, catalogues, r.result);
    if (std::any_of(engines.begin(), engines.end(), [](const EngineOption& e) { return e.best.has_value(); })) {
      r.engines = std::move(engines);
    }
    if (auto note = engine_note(r.engines)) {
      r.notes.push_back(std::move(*note));
    }
  }
  if (auto cheaper = cheaper_per_hour_note(r.result)) {
    r.notes.push_back(std::move(*cheaper));
  }
  return out;
}

std::vector<Fix> CardFit::fixes() const { return suggest_fixes(job, limit); }

CardFit plan_on_card(const JobSpec& job, const Card& card, std::optional<Shard> shard)
{
  PlanRequest request;
  request.card = card.id;
  request.gpus = std::max<std::uint32_t>(job.gpus, 1);
  request.shard = shard;
  const Card cards[] = {card};
  const PlanResult res = rank(job, {}, {}, cards, request, [](const JobSpec& j) { return estimate(j); });
  return CardFit{res.job, res.memory, fit_limit_for(res.job, card.usable), res.card_fits, res.runs};
}

}  // namespace gpurent

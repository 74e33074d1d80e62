// SPDX-License-Identifier: MIT
// The job in an out-of-memory log, rebuilt with plan's make_job and sized with the planner's plan_on_card.
#include "cli/oom_job.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/plan_options.hpp"
#include "common/text.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

bool gguf_engine(const OomReport& r) { return r.engine == OomEngine::llama_cpp || r.engine == OomEngine::ollama; }
bool vllm_job(const OomReport& r) { return r.engine == OomEngine::vllm || r.context == OomContext::vllm; }
bool sglang_job(const OomReport& r) { return r.engine == OomEngine::sglang || r.context == OomContext::sglang; }

std::uint32_t clamp32(std::uint64_t v) { return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 16U * 1024U * 1024U)); }

// The catalogue model of the same shape: what `gpurent plan <name>` sizes. Every figure the log
// gives must match, and the shape must be fully given.
const ModelArch* catalogue_twin(const OomJobFacts& f)
{
  if (!f.n_layer || !f.n_embd || !f.n_head || !f.n_head_kv || !f.n_ff || !f.n_vocab || !f.n_ctx_train) {
    return nullptr;
  }
  for (const auto& m : model_catalog()) {
    const std::uint32_t head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
    if (m.layers == *f.n_layer && m.hidden == *f.n_embd && m.heads == *f.n_head && m.kv_heads == *f.n_head_kv &&
        m.intermediate == *f.n_ff && m.vocab == *f.n_vocab && m.max_context == *f.n_ctx_train &&
        (!f.n_embd_head_k || head_dim == *f.n_embd_head_k) && m.experts == f.n_expert.value_or(0) && m.kv_lora_rank == 0) {
      return &m;
    }
  }
  return nullptr;
}

// The model from llama.cpp's print_info lines, weighed by the file's own size.
ModelArch arch_from_facts(const OomJobFacts& f, WeightFormat format, std::uint32_t context, std::vector<std::string>& notes)
{
  ModelArch m;
  m.name = !f.model_name.empty() ? f.model_name : fmt::format("the log's {} model", f.arch.empty() ? "GGUF" : f.arch);
  m.family = f.arch;
  m.layers = clamp32(*f.n_layer);
  m.hidden = clamp32(*f.n_embd);
  m.heads = clamp32(*f.n_head);
  m.kv_heads = clamp32(*f.n_head_kv);
  m.head_dim = clamp32(f.n_embd_head_k.value_or(*f.n_embd / std::max<std::uint64_t>(*f.n_head, 1)));
  m.intermediate = clamp32(f.n_ff.value_or(0));
  m.vocab = clamp32(f.n_vocab.value_or(0));
  m.experts = clamp32(f.n_expert.value_or(0));
  m.experts_active = clamp32(f.n_expert_used.value_or(0));
  m.moe_intermediate = m.experts > 1 ? m.intermediate : 0;
  m.global_layers = m.layers;
  m.max_context = std::max<std::uint32_t>(clamp32(f.n_ctx_train.value_or(0)), context);
  m.params = f.model_params.value_or(0);
  if (f.n_swa && *f.n_swa > 0) {
    m.approximate.push_back({"kv_cache", fmt::format("the log gives a sliding window of {} but not which layers use it: "
                                                     "every layer's KV is counted at the full context",
                                                     *f.n_swa)});
  }
  if (f.file_size) {
    CheckpointWeights ck;
    ck.linear = {m.params, f.file_size->n};
    ck.format = format;
    ck.format_label = fmt::format("GGUF {}", to_string(format));
    ck.gguf = true;
    ck.source = "the log's print_info file size";
    ck.file_bytes = f.file_size->n;
    m.checkpoint = ck;
    notes.push_back(fmt::format("weights: the file's size as the log prints it ({:.2f} GiB)", to_gib(*f.file_size)));
  }
  return m;
}

std::optional<KvDtype> kv_of(std::string_view type)
{
  auto k = parse_kv_dtype(to_lower(type));  // llama.cpp's "f16"/"f32" are its aliases
  return k ? std::optional(*k) : std::nullopt;
}

std::string flags_text(const PlanOptions& o, const JobSpec& job)
{
  std::string s = fmt::format(" --task {} --engine {} --weights {} --context {}", to_string(o.task), to_string(job.engine),
                              to_string(job.weights), job.context);
  if (job.batch > 1) {
    s += fmt::format(" --batch {}", job.batch);
  }
  if (o.kv_cache_given) {
    s += fmt::format(" --kv-cache {}", to_string(o.kv_cache));
  }
  if (o.gpu_util_given) {
    s += fmt::format(" --gpu-util {}", static_cast<double>(o.gpu_util_permille) / 1000.0);
  }
  if (o.request.gpus) {
    s += fmt::format(" --gpus {}", *o.request.gpus);
  }
  if (o.engine_version != 0) {
    s += fmt::format(" --engine-version {}", engine_version_text(o.engine, o.engine_version));
  }
  return s;
}

OomLogJob llama_job(const OomReport& r)
{
  OomLogJob out;
  const OomJobFacts& f = r.job;
  const auto need = [&](bool have, std::string_view what) {
    if (!have) {
      out.missing.emplace_back(what);
    }
  };
  need(f.n_layer.has_value(), "n_layer (print_info)");
  need(f.n_embd.has_value(), "n_embd (print_info)");
  need(f.n_head.has_value(), "n_head (print_info)");
  need(f.n_head_kv.has_value(), "n_head_kv (print_info)");
  // A log cut before llama_context's lines still gives the context through the failed KV-cache
  // buffer: cells = bytes / (layers x KV heads x head size x 2 (K and V) x 2 B), at the f16 cache
  // llama.cpp allocates unless told otherwise.
  std::optional<std::uint64_t> kv_cells;
  if (!f.n_ctx && !r.context_size && r.stage == OomStage::kv_cache && r.requested && f.n_layer && f.n_head_kv &&
      (f.type_k.empty() || to_lower(f.type_k) == "f16")) {
    const std::uint64_t head = f.n_embd_head_k.value_or(f.n_embd && f.n_head && *f.n_head > 0 ? *f.n_embd / *f.n_head : 0);
    const std::uint64_t per_cell = *f.n_layer * *f.n_head_kv * head * 2 * 2;
    if (per_cell > 0 && r.requested->n % per_cell == 0 && r.requested->n / per_cell > 0) {
      kv_cells = r.requested->n / per_cell;
      out.assumed.push_back(fmt::format("context {} cells, from the failed KV-cache buffer of {} at f16: the log is cut "
                                        "before llama_context's n_ctx",
                                        *kv_cells, oom_size(*r.requested)));
    }
  }
  need(f.n_ctx.has_value() || r.context_size.has_value() || kv_cells.has_value(), "n_ctx (llama_context)");
  need(!f.file_type.empty(), "file type (print_info)");
  need(f.model_params || f.file_size || (f.n_ff && f.n_vocab), "model params or file size (print_info)");
  std::optional<WeightFormat> format;
  if (!f.file_type.empty()) {
    const std::string name = gguf_type_name(f.file_type);
    if (auto w = parse_weight_format(name); w && (is_gguf(*w) || *w == WeightFormat::bf16 || *w == WeightFormat::mxfp4)) {
      format = *w;
    } else {
      out.missing.push_back(fmt::format("a file type plan sizes (the log's is {})", f.file_type));
    }
  }
  if (!out.missing.empty()) {
    return out;
  }
  const std::uint64_t cells = f.n_ctx ? *f.n_ctx : r.context_size ? *r.context_size : *kv_cells;
  const std::uint32_t seqs = clamp32(std::max<std::uint64_t>(f.n_seq_max.value_or(1), 1));
  PlanOptions o;
  o.task = Task::infer;
  o.engine = r.engine == OomEngine::ollama ? Engine::ollama : Engine::llama_cpp;
  o.engine_given = true;
  o.weights = format;
  o.context = clamp32(std::max<std::uint64_t>(cells / seqs, 1));
  o.batch = seqs;
  o.batch_given = true;
  if (!f.n_seq_max) {
    out.assumed.emplace_back("one sequence: the log prints no n_seq_max (llama-server's -np)");
  }
  if (const auto k = kv_of(f.type_k); k && !f.type_k.empty()) {
    o.kv_cache = *k;
    o.kv_cache_given = true;
  } else {
    out.assumed.push_back(f.type_k.empty() ? "KV cache f16, llama.cpp's default: the log prints no type_k"
                                           : fmt::format("KV cache f16: the log's type_k {} is not one plan sizes", f.type_k));
  }
  const std::uint32_t gpus = std::max<std::uint32_t>(f.devices, 1);
  if (gpus > 1) {
    o.request.gpus = gpus;
  }
  ModelArch model;
  if (const ModelArch* twin = catalogue_twin(f)) {
    model = for_checkpoint(*twin, twin->hf_ids.empty() ? twin->name : twin->hf_ids.front());
    out.model = twin->name;
  } else {
    model = arch_from_facts(f, *format, *o.context, out.notes);
    out.model = model.name;
  }
  auto job = make_job(o, model);
  if (!job) {
    out.why_not = job.error().message;
    return out;
  }
  const std::string fa = to_lower(f.flash_attn);
  if (fa == "disabled" || fa == "0" || fa == "off" || fa == "false") {
    job->flash_attention = false;
  } else if (fa.empty() || fa == "auto") {
    out.assumed.emplace_back(fa.empty() ? "flash attention on, llama.cpp's default on CUDA: the log prints no flash_attn"
                                        : "flash attention on: the log says auto, which llama.cpp turns on on CUDA");
  }
  job->gpus = gpus;
  out.plan_command = catalogue_twin(f) != nullptr ? fmt::format("gpurent plan {}{}", out.model, flags_text(o, *job)) : std::string{};
  if (!job->flash_attention && !out.plan_command.empty()) {
    out.notes.emplace_back("flash attention is off in the log; plan assumes it on, so the plan line sizes a smaller compute buffer");
  }
  out.job = std::move(*job);
  return out;
}

std::optional<WeightFormat> vllm_format(std::string_view quantization)
{
  const std::string q = to_lower(quantization);
  if (q == "fp8") {
    return WeightFormat::fp8;
  }
  if (q.starts_with("awq")) {
    return WeightFormat::awq;
  }
  if (q.starts_with("gptq")) {
    return WeightFormat::gptq;
  }
  if (q == "bitsandbytes") {
    return WeightFormat::nf4;
  }
  if (q == "mxfp4") {
    return WeightFormat::mxfp4;
  }
  return std::nullopt;
}

OomLogJob serving_job(const OomReport& r, Engine engine)
{
  OomLogJob out;
  const OomJobFacts& f = r.job;
  if (f.model.empty()) {
    out.missing.emplace_back(engine == Engine::vllm ? "the model (vLLM's config line: model='...')"
                                                    : "the model (SGLang's server_args: model_path='...')");
    return out;
  }
  const ModelArch* arch = find_model_ptr(f.model);
  if (arch == nullptr) {
    out.why_not = fmt::format("{} is not in the built-in catalogue; `gpurent plan {} --task serve --engine {}` sizes it from its "
                              "files",
                              f.model, f.model, to_string(engine));
    return out;
  }
  PlanOptions o;
  o.model = f.model;
  o.task = Task::serve;
  o.engine = engine;
  o.engine_given = true;
  const std::uint64_t len = f.max_model_len ? *f.max_model_len : r.max_model_len.value_or(0);
  if (len > 0) {
    o.context = clamp32(len);
  } else {
    out.assumed.emplace_back("the model's maximum context, the engine's default: the log prints no max_model_len");
  }
  if (!f.quantization.empty()) {
    if (auto w = vllm_format(f.quantization)) {
      o.weights = w;
    } else {
      out.missing.push_back(fmt::format("a quantization plan sizes (the log's is {})", f.quantization));
      return out;
    }
  }
  if (!f.kv_cache_dtype.empty() && f.kv_cache_dtype != "auto") {
    const std::string kv = to_lower(f.kv_cache_dtype).starts_with("fp8") ? "fp8" : f.kv_cache_dtype;
    if (auto k = parse_kv_dtype(kv)) {
      o.kv_cache = *k;
      o.kv_cache_given = true;
    }
  }
  if (!f.engine_version.empty()) {
    o.engine_version = parse_engine_version(o.engine, f.engine_version).value_or(0);
  }
  const double share = f.gpu_memory_utilization ? *f.gpu_memory_utilization : r.gpu_memory_utilization.value_or(0.0);
  if (share > 0 && share <= 1) {
    o.gpu_util_permille = static_cast<std::uint32_t>(share * 1000.0 + 0.5);
    o.gpu_util_given = true;
  } else if (engine == Engine::vllm) {
    out.assumed.emplace_back("gpu_memory_utilization 0.9, vLLM's default: the log prints none");
  }
  const std::uint32_t tp = clamp32(std::max<std::uint64_t>(f.tensor_parallel_size.value_or(1), 1)) *
                           clamp32(std::max<std::uint64_t>(f.pipeline_parallel_size.value_or(1), 1));
  if (!f.tensor_parallel_size) {
    out.assumed.emplace_back("one GPU: the log prints no tensor_parallel_size");
  }
  if (tp > 1) {
    o.request.gpus = tp;
  }
  out.assumed.emplace_back("one full-context sequence, plan's default batch (what the engine must hold to start)");
  auto job = make_job(o, for_checkpoint(*arch, named_hf_id(*arch, f.model)));
  if (!job) {
    out.why_not = job.error().message;
    return out;
  }
  job->gpus = tp;
  out.model = arch->name;
  out.plan_command = fmt::format("gpurent plan {}{}", f.model, flags_text(o, *job));
  out.job = std::move(*job);
  return out;
}

std::string job_line(const JobSpec& j)
{
  return fmt::format("{}, {} weights, context {}, {} sequence{}, KV cache {}, {} GPU{}", to_string(j.engine), to_string(j.weights),
                     j.context, j.batch, j.batch == 1 ? "" : "s", to_string(resolve_kv_dtype(j)), j.gpus, j.gpus == 1 ? "" : "s");
}

// The engine's flags for plan's fix, as the oom fixes print them.
std::string fix_command(const Fix& f, Engine engine)
{
  const std::string key(to_string(engine));
  const auto it = f.flags.find(key);
  if (it == f.flags.end() || it->second.find('<') != std::string::npos) {
    return {};  // a flag with a placeholder (a file to download) is said in words
  }
  return it->second;
}

std::string fix_value(const Fix& f)
{
  if (f.id == "quantize-weights") {
    return std::string(to_string(f.modified.weights));
  }
  if (f.id == "reduce-context") {
    return std::to_string(f.modified.context);
  }
  if (f.id.starts_with("kv-cache")) {
    return std::string(to_string(f.modified.kv_cache));
  }
  if (f.id == "fewer-sequences") {
    return std::to_string(f.modified.batch);
  }
  return {};
}

}  // namespace

OomLogJob job_from_log(const OomReport& r)
{
  if (gguf_engine(r)) {
    return llama_job(r);
  }
  if (vllm_job(r)) {
    return serving_job(r, Engine::vllm);
  }
  if (sglang_job(r)) {
    return serving_job(r, Engine::sglang);
  }
  OomLogJob out;
  out.why_not = "the log does not say which model ran, so the need is the message's own numbers";
  return out;
}

CardFit plan_card_fit(const JobSpec& job, const Card& card) { return plan_on_card(job, card); }

OomJobInput estimate_log_job(const OomReport& report, const std::optional<Card>& given, std::span<const OomCardOption> options)
{
  OomJobInput in;
  OomLogJob built = job_from_log(report);
  in.missing = built.missing;
  if (!built.job) {
    in.why_not = !built.why_not.empty() ? built.why_not : "the log lacks what plan's estimate needs";
    return in;
  }
  const JobSpec& job = *built.job;
  const MemoryEstimate m = estimate(job);
  OomJobEstimate e;
  e.model = built.model;
  e.job = job_line(job);
  e.plan_command = built.plan_command;
  e.weights_format = std::string(to_string(job.weights));
  e.kv_cache = std::string(to_string(resolve_kv_dtype(job)));
  e.context = job.context;
  e.gpus = std::max<std::uint32_t>(job.gpus, 1);
  e.weights = m.weights;
  e.kv_cache_bytes = m.kv_cache;
  e.activations = m.activations;
  e.overhead = m.overhead;
  e.total = m.total();
  e.assumed = built.assumed;
  e.notes = built.notes;
  std::optional<CardFit> limit_fit;  // the card plan's fixes are measured against
  if (given) {
    const CardFit fit = plan_card_fit(job, *given);
    e.on_card = OomCardVerdict{{given->id, given->display, given->usable, {}, 1, std::nullopt},
                               fit.limit, fit.memory.total(), fit.fits, true, e.gpus};
    // On the card the estimate is the job as the engine runs it there (hardware rules).
    e.total = fit.memory.total();
    e.weights = fit.memory.weights;
    e.kv_cache_bytes = fit.memory.kv_cache;
    e.activations = fit.memory.activations;
    e.overhead = fit.memory.overhead;
    limit_fit = fit;
  } else if (!report.job.device_name.empty()) {
    if (auto card = find_card(report.job.device_name)) {
      limit_fit = plan_card_fit(job, *card);
    }
  }
  // Every card plan fits the job on (at the log's GPU count); diagnose_oom names the smallest.
  e.card_searched = true;
  std::vector<std::string> checked;  // one verdict per card, whatever its number of offers
  for (const auto& option : options) {
    if (std::find(checked.begin(), checked.end(), option.card) != checked.end()) {
      continue;
    }
    checked.push_back(option.card);
    if (auto card = find_card(option.card); card && plan_card_fit(job, *card).fits) {
      e.cards_fitting.push_back(option.card);
    }
  }
  if (limit_fit) {
    e.fixes_known = true;
    for (const auto& f : limit_fit->fixes()) {
      e.fixes.push_back({f.id, f.description, fix_command(f, job.engine), fix_value(f), f.saves, f.fits_alone});
    }
    if (is_gguf(job.weights) && std::none_of(e.fixes.begin(), e.fixes.end(), [](const OomPlanFix& f) { return f.id == "quantize-weights"; }) &&
        !limit_fit->fits) {
      e.notes.push_back(fmt::format("no GGUF type smaller than {} saves memory for this job", to_string(job.weights)));
    }
  }
  in.estimate = std::move(e);
  return in;
}

}  // namespace gpurent

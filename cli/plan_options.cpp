// SPDX-License-Identifier: MIT
#include "cli/plan_options.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

Error usage(std::string message) { return Error{Errc::usage, std::move(message)}; }

// A value parser's result, with an error rewritten as a usage error that names the flag.
template <class T>
Result<T> for_flag(std::string_view flag, Result<T> r)
{
  if (!r) {
    return std::unexpected(usage(fmt::format("{}: {}", flag, r.error().message)));
  }
  return r;
}

}  // namespace

Result<void> check_task_engine(Task task, Engine engine)
{
  const bool training = task == Task::train || task == Task::lora || task == Task::qlora;
  const bool trainer = engine == Engine::transformers || engine == Engine::torchtune || engine == Engine::deepspeed;
  if (training && !trainer) {
    return fail(Errc::usage, fmt::format("--engine {} cannot {}; use transformers, torchtune or deepspeed",
                                         to_string(engine), to_string(task)));
  }
  if (!training && (engine == Engine::torchtune || engine == Engine::deepspeed)) {
    return fail(Errc::usage, fmt::format("--engine {} is for training; for --task {} use vllm, llama.cpp, ollama or "
                                         "transformers",
                                         to_string(engine), to_string(task)));
  }
  if (task == Task::serve && engine == Engine::transformers) {
    return fail(Errc::usage, "--task serve needs a serving engine; use --engine vllm, llama.cpp or ollama");
  }
  return {};
}

Result<void> check_weights(Task task, Engine engine, WeightFormat w)
{
  const bool gguf_engine = engine == Engine::llama_cpp || engine == Engine::ollama;
  const bool sixteen = w == WeightFormat::fp32 || w == WeightFormat::bf16 || w == WeightFormat::fp16;
  if (gguf_engine && !is_gguf(w) && !sixteen && w != WeightFormat::mxfp4) {
    return fail(Errc::usage, fmt::format("--weights {} is not a GGUF type; {} loads GGUF files: use e.g. Q4_K_M, "
                                         "Q8_0 or F16",
                                         to_string(w), to_string(engine)));
  }
  if (engine == Engine::sglang && is_gguf(w)) {
    return fail(Errc::usage, fmt::format("--weights {} is a GGUF type and SGLang does not load GGUF files; use "
                                         "--engine llama.cpp, ollama or vllm, or a format such as bf16, fp8 or awq",
                                         to_string(w)));
  }
  if (!gguf_engine && is_gguf(w) && engine != Engine::vllm) {
    return fail(Errc::usage, fmt::format("--weights {} is a GGUF type; use --engine llama.cpp or ollama, or a "
                                         "format such as bf16, int8 or nf4",
                                         to_string(w)));
  }
  if (task == Task::train && !sixteen) {
    return fail(Errc::usage, fmt::format("--task train updates every weight, which needs fp32, bf16 or fp16 "
                                         "weights, not {}; use --task qlora for a quantized base",
                                         to_string(w)));
  }
  const bool four_bit = w == WeightFormat::nf4 || w == WeightFormat::int4 || w == WeightFormat::gptq ||
                        w == WeightFormat::awq;
  if (task == Task::qlora && !four_bit) {
    return fail(Errc::usage, fmt::format("--task qlora trains on a 4-bit base (nf4, int4, or a GPTQ/AWQ checkpoint), "
                                         "not {}; use --task lora for a 16-bit base",
                                         to_string(w)));
  }
  return {};
}

namespace {

Result<void> check_shard(Task task, std::optional<Shard> shard)
{
  const bool training = task == Task::train || task == Task::lora || task == Task::qlora;
  if (shard && !training && *shard != Shard::none && *shard != Shard::tp) {
    return fail(Errc::usage, fmt::format("--shard {} shards training state; for --task {} use tp or none",
                                         to_string(*shard), to_string(task)));
  }
  return {};
}

// --tokens/--epochs (training), --requests/--input-len/--output-len/--concurrency (inference),
// --rank-by, --deadline.
Result<void> validate_job_size(const PlanArgs& a, PlanOptions& o)
{
  const bool training = o.task == Task::train || o.task == Task::lora || o.task == Task::qlora;
  JobSize& size = o.request.size;
  if (!a.tokens.empty()) {
    if (!training) {
      return fail(Errc::usage, fmt::format("--tokens sizes a training job; for --task {} give --requests N (with "
                                           "--input-len and --output-len)",
                                           to_string(o.task)));
    }
    TRY_ASSIGN(size.tokens, parse_token_count(a.tokens, "--tokens"));
  }
  if (!a.epochs.empty()) {
    if (a.tokens.empty()) {
      return fail(Errc::usage, "--epochs multiplies --tokens; give --tokens N (the tokens of one epoch)");
    }
    TRY_ASSIGN(size.epochs, parse_count(a.epochs, "--epochs", 1, 10000));
  }
  if (!a.requests.empty()) {
    if (training) {
      return fail(Errc::usage, fmt::format("--requests sizes an inference job; for --task {} give --tokens N",
                                           to_string(o.task)));
    }
    TRY_ASSIGN(size.requests, parse_token_count(a.requests, "--requests"));
  }
  const bool lengths = !a.input_len.empty() || !a.output_len.empty() || !a.concurrency.empty();
  if (lengths && training) {
    return fail(Errc::usage, fmt::format("--input-len, --output-len and --concurrency describe inference requests, "
                                         "not --task {}; use --context and --batch",
                                         to_string(o.task)));
  }
  if (!a.input_len.empty()) {
    TRY_ASSIGN(size.load.input_len, for_flag("--input-len", parse_context(a.input_len)));
  }
  if (!a.output_len.empty()) {
    TRY_ASSIGN(size.load.output_len, for_flag("--output-len", parse_context(a.output_len)));
  }
  if (!a.concurrency.empty()) {
    if (o.task != Task::serve) {
      return fail(Errc::usage, "--concurrency is the requests a server runs at once: use it with --task serve "
                               "(other inference runs one request at a time; --batch sets its batch)");
    }
    TRY_ASSIGN(size.load.concurrency, parse_count(a.concurrency, "--concurrency", 1, 65536));
  } else if (o.task == Task::serve && o.batch_given) {
    size.load.concurrency = o.batch;  // --batch is the launch line's --max-num-seqs
  }
  if (!a.rank_by.empty()) {
    TRY_ASSIGN(o.request.rank_by, parse_rank_by(a.rank_by));
  }
  if (!a.deadline.empty()) {
    if (!size.sized()) {
      return fail(Errc::usage, "--deadline needs the job's size to know its hours: give --tokens N (training) or "
                               "--requests N (inference)");
    }
    TRY_ASSIGN(o.request.deadline, parse_deadline(a.deadline));
  }
  return {};
}

// --micro-batch, --grad-accum and --pack shape a training job's steps (cli.md plan v4): the
// micro-batch is --batch's other name for training (both given must agree).
Result<void> read_training_batch(const PlanArgs& a, PlanOptions& o)
{
  const bool training = is_training(o.task);
  const auto training_only = [&](const char* flag) {
    return fail(Errc::usage, fmt::format("{} shapes a training job's steps, not --task {}; use --batch (sequences "
                                         "in flight) for inference",
                                         flag, to_string(o.task)));
  };
  if (!a.micro_batch.empty()) {
    if (!training) {
      return training_only("--micro-batch");
    }
    TRY_ASSIGN(const std::uint32_t m, parse_count(a.micro_batch, "--micro-batch", 1, 4096));
    if (o.batch_given && m != o.batch) {
      return fail(Errc::usage, fmt::format("--batch {} and --micro-batch {} disagree: for training they are the same "
                                           "thing (sequences per GPU per step); give one",
                                           o.batch, m));
    }
    o.batch = m;
    o.batch_given = true;
  }
  if (!a.grad_accum.empty()) {
    if (!training) {
      return training_only("--grad-accum");
    }
    TRY_ASSIGN(o.grad_accum, parse_count(a.grad_accum, "--grad-accum", 1, 65536));
    o.grad_accum_given = true;
  }
  if (a.pack) {
    if (!training) {
      return training_only("--pack");
    }
    o.pack = true;
  }
  return {};
}

}  // namespace

Result<PlanOptions> validate_plan_args(const PlanArgs& a)
{
  PlanOptions o;
  o.model = std::string(trim(a.model));
  o.offline = a.offline;
  o.gguf = std::string(trim(a.gguf));
  if (a.grad_checkpointing && a.no_grad_checkpointing) {
    return fail(Errc::usage, "give --grad-checkpointing or --no-grad-checkpointing, not both");
  }
  if (a.grad_checkpointing || a.no_grad_checkpointing) {
    o.grad_checkpointing = a.grad_checkpointing;
  }
  o.request.spot = a.spot;

  if (!a.params.empty()) {
    TRY_ASSIGN(o.params, for_flag("--params", parse_param_count(a.params)));
    if (!o.model.empty() || !o.gguf.empty()) {
      return fail(Errc::usage, "give a MODEL (or --gguf) or --params, not both; --params is for a model gpurent "
                               "does not know");
    }
  } else if (o.model.empty() && o.gguf.empty()) {
    return fail(Errc::usage, "no model given; name one (e.g. `gpurent plan llama-3.1-8b`, see `gpurent models`), "
                             "give --gguf FILE, or --params 7B");
  }
  if (!a.task.empty()) {
    TRY_ASSIGN(o.task, for_flag("--task", parse_task(a.task)));
  }
  if (!a.weights.empty()) {
    TRY_ASSIGN(o.weights, for_flag("--weights", parse_weight_format(a.weights)));
  }
  // The engine when --engine is not given (make_job states it): serving on vLLM, else
  // transformers; a GGUF file (--gguf) or type (--weights Q4_K_M) runs under llama.cpp.
  o.engine = o.task == Task::serve ? Engine::vllm : Engine::transformers;
  if (!o.gguf.empty() || (o.weights && is_gguf(*o.weights))) {
    o.engine = Engine::llama_cpp;
  }
  if (!a.engine.empty()) {
    TRY_ASSIGN(o.engine, for_flag("--engine", parse_engine(a.engine)));
    o.engine_given = true;
  }
  if (!o.gguf.empty() && o.engine != Engine::llama_cpp && o.engine != Engine::ollama && o.engine != Engine::vllm) {  // incl. sglang
    return fail(Errc::usage, fmt::format("--gguf sizes a GGUF file, which --engine {} does not load; use llama.cpp, "
                                         "ollama or vllm",
                                         to_string(o.engine)));
  }
  TRY(check_task_engine(o.task, o.engine));
  if (o.weights) {
    TRY(check_weights(o.task, o.engine, *o.weights));
  }
  if (!a.kv_cache.empty()) {
    TRY_ASSIGN(o.kv_cache, for_flag("--kv-cache", parse_kv_dtype(a.kv_cache)));
    o.kv_cache_given = true;
  }
  if (!a.context.empty()) {
    TRY_ASSIGN(o.context, for_flag("--context", parse_context(a.context)));
  }
  if (!a.batch.empty()) {
    TRY_ASSIGN(o.batch, parse_count(a.batch, "--batch", 1, 4096));
    o.batch_given = true;
  }
  TRY(read_training_batch(a, o));
  if (!a.optimizer.empty()) {
    TRY_ASSIGN(o.optimizer, for_flag("--optimizer", parse_optimizer(a.optimizer)));
    o.optimizer_given = true;
  }
  if (!a.lora_rank.empty()) {
    TRY_ASSIGN(o.lora_rank, parse_count(a.lora_rank, "--lora-rank", 1, 4096));
    o.lora_rank_given = true;
  }
  if (!a.gpus.empty()) {
    TRY_ASSIGN(o.request.gpus, parse_count(a.gpus, "--gpus", 1, k_max_gpus_per_server));
  }
  if (!a.nodes.empty()) {
    TRY_ASSIGN(o.request.nodes, parse_count(a.nodes, "--nodes", 1, k_max_nodes));
  }
  if (!a.shard.empty()) {
    TRY_ASSIGN(o.request.shard, for_flag("--shard", parse_shard(a.shard)));
  }
  TRY(check_shard(o.task, o.request.shard));
  if (!a.gpu_util.empty()) {
    TRY_ASSIGN(o.gpu_util_permille, for_flag("--gpu-util", parse_gpu_util(a.gpu_util)));
    o.gpu_util_given = true;
  }
  if (!a.engine_version.empty()) {
    const auto release = parse_engine_release(a.engine_version);
    if (!release) {
      return fail(Errc::usage, fmt::format("--engine-version: {} is not a release; give one such as 0.10.1 or v0.5.5",
                                           printable_ascii(a.engine_version) && a.engine_version.size() <= 40
                                               ? "'" + a.engine_version + "'"
                                               : "the value given"));
    }
    o.engine_version = *release;
  }
  if (!a.card.empty()) {
    auto card = find_card(a.card);
    if (!card) {
      return fail(Errc::usage, "--card: " + card.error().message);
    }
    o.request.card = card->id;
    o.card_display = card->display;
  }
  if (!a.provider.empty()) {
    auto provider = find_provider(a.provider);
    if (!provider) {
      return fail(Errc::usage, "--provider: " + provider.error().message);
    }
    o.request.provider = provider->name;
    if (a.spot && !provider->spot_available) {  // as `cost` does: never on-demand prices in place of spot
      return fail(Errc::unsupported, "--spot with --provider " + provider->name + ": " + provider->spot_note +
                                         "; drop --spot, or pick a provider with spot servers");
    }
  }
  if (!a.hours.empty()) {
    TRY_ASSIGN(o.request.runtime, for_flag("--hours", parse_hours(a.hours)));
  }
  if (!a.max_price.empty()) {
    TRY_ASSIGN(o.request.max_price, for_flag("--max-price", parse_usd_per_hour(a.max_price)));
  }
  TRY(validate_job_size(a, o));
  return o;
}

}  // namespace gpurent

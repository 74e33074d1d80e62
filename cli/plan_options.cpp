// SPDX-License-Identifier: MIT
#include "cli/plan_options.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "providers/offer_select.hpp"
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

namespace {

// Inference splits by tensor (vLLM, SGLang) or by layer (llama.cpp, ollama, transformers): --shard
// names the split the engine does; training shards its state (cli.md `--shard`).
Result<void> check_shard(Task task, Engine engine, std::optional<Shard> shard)
{
  const bool training = task == Task::train || task == Task::lora || task == Task::qlora;
  if (!shard || *shard == Shard::none) {
    return {};
  }
  if (training && *shard == Shard::layer) {
    return fail(Errc::usage, fmt::format("--shard layer splits inference by layer; for --task {} use ddp, fsdp, "
                                         "zero1, zero2, zero3 or tp",
                                         to_string(task)));
  }
  if (training && engine == Engine::unsloth && *shard != Shard::ddp) {
    return fail(Errc::usage, fmt::format("--shard {}: Unsloth runs on several GPUs only as DDP (a whole copy of the "
                                         "model on each, accelerate launch); use --shard ddp or none",
                                         to_string(*shard)));
  }
  if (training) {
    return {};
  }
  const bool by_layer = engine == Engine::llama_cpp || engine == Engine::ollama || engine == Engine::transformers;
  if (*shard == Shard::tp && by_layer) {
    return fail(Errc::usage, fmt::format("{} splits a model across GPUs by layer (one GPU works at a time), not by "
                                         "tensor: use --shard layer, or --engine vllm for tensor parallel",
                                         to_string(engine)));
  }
  if (*shard == Shard::layer && !by_layer) {
    return fail(Errc::usage, fmt::format("{} splits a model across GPUs by tensor (and by pipeline stage where the "
                                         "heads do not split): use --shard tp",
                                         to_string(engine)));
  }
  if (*shard != Shard::tp && *shard != Shard::layer) {
    return fail(Errc::usage, fmt::format("--shard {} shards training state; for --task {} use {} or none",
                                         to_string(*shard), to_string(task), by_layer ? "layer" : "tp"));
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
  if ((!a.min_user_speed.empty() || !a.max_ttft.empty()) && o.task != Task::serve) {
    return fail(Errc::usage, "--min-user-speed and --max-ttft are service targets of a server: use them with --task "
                             "serve");
  }
  if (!a.min_user_speed.empty()) {
    TRY_ASSIGN(o.request.targets.min_user_tokens_per_s,
               parse_positive(a.min_user_speed, "--min-user-speed", k_max_user_tokens_per_s));
    o.request.targets.min_user_given = true;
  }
  if (!a.max_ttft.empty()) {
    TRY_ASSIGN(o.request.targets.max_ttft_s, parse_positive(a.max_ttft, "--max-ttft", k_max_ttft_s));
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
  if (a.compile) {
    if (!training) {
      return fail(Errc::usage, fmt::format("--compile compiles a training step, not --task {}; vLLM and SGLang compile "
                                           "their own graphs at start-up",
                                           to_string(o.task)));
    }
    if (o.engine == Engine::unsloth) {
      return fail(Errc::usage, "--compile: Unsloth compiles its own kernels on every run (its published speed counts "
                               "them); drop --compile");
    }
    o.compile = true;
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
  if (!o.gguf.empty() && o.engine != Engine::llama_cpp && o.engine != Engine::ollama && o.engine != Engine::vllm) {  // incl. sglang, trtllm
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
  TRY(check_shard(o.task, o.engine, o.request.shard));
  if (!a.gpu_util.empty()) {
    TRY_ASSIGN(o.gpu_util_permille, for_flag("--gpu-util", parse_gpu_util(a.gpu_util)));
    o.gpu_util_given = true;
  }
  if (!a.engine_version.empty()) {
    const auto release = parse_engine_version(o.engine, a.engine_version);
    if (!release) {
      const std::string given =
          printable_ascii(a.engine_version) && a.engine_version.size() <= 40 ? "'" + a.engine_version + "'" : "the value given";
      return fail(Errc::usage, o.engine == Engine::llama_cpp
                                   ? fmt::format("--engine-version: {} is not a llama.cpp build; give one such as b3216", given)
                                   : fmt::format("--engine-version: {} is not a release; give one such as 0.10.1 or v0.5.5", given));
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
    TRY_ASSIGN(o.request.filter.clouds, parse_cloud_list(a.provider));
    if (a.spot) {  // as `cost` does: never on-demand prices in place of spot where no cloud asked for has spot
      std::vector<ProviderInfo> without;
      for (const auto& name : o.request.filter.clouds) {
        TRY_ASSIGN(const ProviderInfo p, find_provider(name));
        if (!p.spot_available) {
          without.push_back(p);
        }
      }
      if (without.size() == o.request.filter.clouds.size()) {
        return fail(Errc::unsupported, "--spot with --provider " + without.front().name + ": " + without.front().spot_note +
                                           "; drop --spot, or pick a provider with spot servers");
      }
    }
  }
  o.request.filter.rentable_only = a.rentable;
  if (!a.region.empty()) {
    const std::string_view region = trim(a.region);
    if (region.empty() || !printable_ascii(region)) {
      return fail(Errc::usage, "--region `" + a.region + "`: give a region as the offers list it (gpurent offers), e.g. us-east-1");
    }
    o.request.filter.region = std::string(region);
  }
  if (!a.hours.empty()) {
    TRY_ASSIGN(o.request.runtime, for_flag("--hours", parse_hours(a.hours)));
  }
  if (!a.max_price.empty()) {
    TRY_ASSIGN(o.request.max_price, for_flag("--max-price", parse_usd_per_hour(a.max_price)));
  }
  TRY(validate_job_size(a, o));
  // A batch of requests (--task infer --requests N) runs on a batching engine: vLLM's offline
  // batch (make_job says why), unless --engine or a GGUF file says otherwise.
  if (!o.engine_given && o.task == Task::infer && o.request.size.requests && o.engine == Engine::transformers) {
    o.engine = Engine::vllm;
  }
  return o;
}

}  // namespace gpurent

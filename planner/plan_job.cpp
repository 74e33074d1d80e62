// SPDX-License-Identifier: MIT
// The job plan sizes for a model: every default of docs/sizing.md §0, stated (job.defaults).
#include <fmt/format.h>

#include <utility>

#include "planner/job_request.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

bool gguf_engine(Engine e) { return e == Engine::llama_cpp || e == Engine::ollama; }

// The engine when --engine is not given, and why: a GGUF checkpoint runs under llama.cpp (its
// file, --gguf, or a GGUF --weights type), serving on vLLM, anything else on transformers.
std::pair<Engine, std::string> default_engine(const PlanOptions& o, const ModelArch& m)
{
  const bool inference = !is_training(o.task);
  if (!o.gguf.empty()) {
    return {o.engine, "--gguf names a GGUF file, which llama.cpp runs unless --engine says otherwise"};
  }
  if (o.weights && is_gguf(*o.weights)) {
    return {o.engine, fmt::format("--weights {} is a GGUF type, which llama.cpp runs unless --engine says otherwise",
                                  to_string(*o.weights))};
  }
  if (m.checkpoint && m.checkpoint->gguf && inference) {
    return {Engine::llama_cpp, fmt::format("the checkpoint is a GGUF file ({}), which llama.cpp runs unless --engine "
                                           "says otherwise",
                                           m.checkpoint->source)};
  }
  if (o.task == Task::infer && o.request.size.requests && o.engine == Engine::vllm) {
    return {o.engine, fmt::format("a batch of {} requests runs on vLLM's offline batch (vllm run-batch), which keeps as "
                                  "many requests in flight as its KV pool holds; transformers' generate would run "
                                  "them one at a time (--engine transformers does)",
                                  *o.request.size.requests)};
  }
  return {o.engine, o.task == Task::serve ? "serving runs on vLLM unless --engine says otherwise (cli.md)"
                                          : "transformers unless --engine says otherwise (cli.md)"};
}

// The weight format the job runs in when --weights is not given (docs/sizing.md "Defaults"). The
// checkpoint's own format comes from its files' headers when they were read, else from
// config.json quantization_config (the catalogue records it for built-in models).
std::pair<WeightFormat, std::string> default_weights(Task task, Engine engine, const ModelArch& m)
{
  const WeightFormat native = checkpoint_format(m);
  const std::string from = checkpoint_format_source(m);
  const bool four_bit = native == WeightFormat::nf4 || native == WeightFormat::int4 || native == WeightFormat::gptq ||
                        native == WeightFormat::awq;
  const std::string sixteen = "16-bit, as the checkpoint is published (no quantization_config)";
  if (gguf_engine(engine) || (engine == Engine::vllm && is_gguf(native))) {
    if (is_gguf(native)) {
      return {native, fmt::format("the GGUF file's own type ({})", from)};
    }
    if (native == WeightFormat::mxfp4) {
      return {native, "the checkpoint's own MXFP4 experts, which its GGUF keeps"};
    }
    if (engine == Engine::ollama && !m.ollama_tag.empty()) {
      if (const auto q = parse_weight_format(m.ollama_quant)) {
        return {*q, fmt::format("the quantization of ollama's library tag {}", m.ollama_tag)};
      }
    }
    return {WeightFormat::gguf_q4_k_m, "Q4_K_M, the GGUF type llama.cpp's and ollama's model pages default to"};
  }
  if (is_gguf(native)) {
    // transformers dequantizes a GGUF file as it loads it (gguf_file=…).
    return {WeightFormat::bf16, fmt::format("{} dequantizes the GGUF file ({}) to 16 bits", to_string(engine), from)};
  }
  if (task == Task::qlora) {
    if (four_bit) {
      return {native, fmt::format("the checkpoint is already 4-bit ({}): LoRA trains on it as published, as Qwen's "
                                  "Q-LoRA recipe does on its Int4 checkpoints",
                                  from)};
    }
    return {WeightFormat::nf4, "NF4 with double quantization, the QLoRA paper's recipe (bitsandbytes "
                               "bnb_4bit_quant_type=nf4, bnb_4bit_use_double_quant=True)"};
  }
  if (task == Task::lora && four_bit) {
    return {native, fmt::format("LoRA on the checkpoint's own {} weights ({})", to_string(native), from)};
  }
  if (is_training(task)) {
    if (is_quantized(native)) {
      return {WeightFormat::bf16, fmt::format("training updates 16-bit weights: the {} checkpoint ({}) loads as bf16",
                                              to_string(native), from)};
    }
    return {WeightFormat::bf16, from.empty() ? sixteen : fmt::format("16-bit training weights ({})", from)};
  }
  if (!from.empty()) {
    if (native == WeightFormat::fp32) {
      return {WeightFormat::bf16, fmt::format("the checkpoint stores fp32 ({}); the engines serve it in 16 bits", from)};
    }
    return {native, fmt::format("the checkpoint's own format ({})", from)};
  }
  if (!m.quant_method.empty()) {
    return {WeightFormat::bf16, fmt::format("quantization_config {} is not a format gpurent sizes: sized as 16-bit",
                                            m.quant_method)};
  }
  return {WeightFormat::bf16, sixteen};
}

}  // namespace

Result<void> check_task_engine(Task task, Engine engine)
{
  const bool training = task == Task::train || task == Task::lora || task == Task::qlora;
  const bool trainer = engine == Engine::transformers || engine == Engine::torchtune || engine == Engine::deepspeed ||
                       engine == Engine::unsloth;
  if (training && !trainer) {
    return fail(Errc::usage, fmt::format("--engine {} cannot {}; use transformers, torchtune, deepspeed or unsloth",
                                         to_string(engine), to_string(task)));
  }
  if (engine == Engine::unsloth && task == Task::train) {
    // Unsloth's published VRAM tables and speed factors are for LoRA and QLoRA (docs/sizing.md
    // "Unsloth"); its full_finetuning=True is not sized.
    return fail(Errc::usage, "--engine unsloth plans LoRA and QLoRA fine-tuning (--task lora or qlora), the "
                             "fine-tuning its published VRAM tables and speed figures cover; for full fine-tuning "
                             "(--task train) use transformers, torchtune or deepspeed");
  }
  if (!training && engine == Engine::unsloth) {
    return fail(Errc::usage, fmt::format("--engine unsloth is for LoRA and QLoRA fine-tuning; for --task {} use vllm, "
                                         "sglang, trtllm, llama.cpp, ollama or transformers",
                                         to_string(task)));
  }
  if (!training && (engine == Engine::torchtune || engine == Engine::deepspeed)) {
    return fail(Errc::usage, fmt::format("--engine {} is for training; for --task {} use vllm, sglang, trtllm, "
                                         "llama.cpp, ollama or transformers",
                                         to_string(engine), to_string(task)));
  }
  if (task == Task::serve && engine == Engine::transformers) {
    return fail(Errc::usage, "--task serve needs a serving engine; use --engine vllm, sglang, trtllm, llama.cpp or "
                             "ollama");
  }
  return {};
}

Result<void> check_engine_scale(Engine engine, std::uint32_t engine_version, std::optional<std::uint32_t> gpus,
                                std::optional<std::uint32_t> nodes)
{
  if (engine != Engine::unsloth) {
    return {};
  }
  const std::uint32_t release = engine_version == 0 ? k_unsloth_current_release : engine_version;
  const std::uint32_t n = gpus.value_or(1) * nodes.value_or(1);
  if (n > 1 && release < k_unsloth_first_multi_gpu) {
    return fail(Errc::refused,
                fmt::format("Unsloth {} trains on one GPU only: its trainer stops with \"Unsloth currently does not "
                            "support multi GPU setups - but we are working on it!\" (unsloth/models/llama.py, releases "
                            "before 2025.3.7); plan it with --gpus 1, or with Unsloth 2025.3.7 or newer, whose "
                            "multi-GPU training is DDP (accelerate launch)",
                            engine_release_text(release)));
  }
  if (nodes.value_or(1) > 1) {
    return fail(Errc::refused,
                fmt::format("Unsloth {} trains on several GPUs only as DDP inside one server (its multi-GPU guide: "
                            "accelerate launch); across {} servers use --engine transformers or deepspeed",
                            engine_release_text(release), *nodes));
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
  if (engine == Engine::tensorrt_llm && is_gguf(w)) {
    return fail(Errc::usage, fmt::format("--weights {} is a GGUF type and TensorRT-LLM loads Hugging Face checkpoints, "
                                         "not GGUF files; use --engine llama.cpp, ollama or vllm, or a format such as "
                                         "bf16, fp8 or nvfp4",
                                         to_string(w)));
  }
  if (engine == Engine::tensorrt_llm && (w == WeightFormat::awq || w == WeightFormat::gptq || w == WeightFormat::int8 ||
                                         w == WeightFormat::int4 || w == WeightFormat::nf4)) {
    // On no card: its Hugging Face loader reads ModelOpt, fp8, mxfp4, nvfp4 and compressed-tensors
    // quantization configs (tests/data/trtllm/support.md), and its PyTorch backend has no
    // bitsandbytes or SmoothQuant path.
    return fail(Errc::usage, fmt::format("--weights {}: TensorRT-LLM serves bf16, fp16, fp8, nvfp4 and mxfp4 "
                                         "checkpoints (its loader reads no {} quantization); use --engine vllm or "
                                         "sglang, or a checkpoint quantized by TensorRT Model Optimizer",
                                         to_string(w), to_string(w)));
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
  // FastLanguageModel.from_pretrained loads a 4-bit NF4 base (load_in_4bit), an 8-bit one
  // (load_in_8bit) or a 16-bit one (load_in_16bit); gpurent's launch script and memory cover those.
  const bool unsloth_loads = task == Task::qlora ? w == WeightFormat::nf4
                                                 : (w == WeightFormat::bf16 || w == WeightFormat::fp16 || w == WeightFormat::int8);
  if (engine == Engine::unsloth && !unsloth_loads) {
    return fail(Errc::usage, fmt::format("--weights {}: Unsloth's FastLanguageModel loads the base for {} as {}",
                                         to_string(w), to_string(task),
                                         task == Task::qlora ? "4-bit NF4 (--weights nf4, load_in_4bit=True)"
                                                             : "bf16/fp16 or 8-bit int8 (load_in_8bit=True)"));
  }
  return {};
}

Result<JobSpec> make_job(const PlanOptions& o, const ModelArch& model, std::vector<JobDefault>* defaults)
{
  std::vector<JobDefault> chosen;
  const auto note = [&chosen](std::string key, std::string value, std::string why,
                              JobDefault::Kind kind = JobDefault::Kind::text) {
    chosen.push_back({std::move(key), std::move(value), std::move(why), kind});
  };
  JobSpec job;
  job.model = model;
  job.task = o.task;
  job.engine = o.engine;
  job.kv_cache = o.kv_cache;
  job.batch = o.batch;
  job.grad_accumulation = o.grad_accum;
  job.pack = o.pack;
  job.compile = o.compile;
  // Training without --micro-batch/--batch: each option takes the micro-batch that trains fastest
  // in its card's memory (planner/micro_batch.hpp).
  job.micro_batch_chosen = is_training(o.task) && !o.batch_given;
  job.optimizer = o.optimizer;
  job.lora_rank = o.lora_rank;
  job.gpu_util_permille = o.gpu_util_permille;
  job.gpu_util_given = o.gpu_util_given;
  job.engine_version = o.engine_version;
  const bool training = is_training(o.task);
  // What the command line gives always wins; the rest follows the model's own files.
  if (!o.engine_given) {
    const auto [engine, why] = default_engine(o, model);
    job.engine = engine;
    note("engine", std::string(to_string(engine)), why);
  }
  if (o.weights) {
    job.weights = *o.weights;
  } else {
    const auto [weights, why] = default_weights(o.task, job.engine, model);
    job.weights = weights;
    note("weights", std::string(to_string(weights)), why);
  }
  TRY(check_weights(job.task, job.engine, job.weights));
  // TensorRT-LLM runs the batch as its server with as many requests in flight as its pool holds
  // (the plan's note says to send them so), never one at a time.
  job.offline_batch = job.task == Task::infer && o.request.size.requests.has_value() && pools_kv(job.engine);
  // A LoRA adapter directory: served with its rank, or trained on at it.
  const bool adapter_rank = !o.lora_rank_given && model.adapter && model.adapter->rank > 0;
  if (adapter_rank) {
    job.lora_rank = model.adapter->rank;
    note("lora_rank", std::to_string(job.lora_rank), "the adapter's own rank (adapter_config.json r)",
         JobDefault::Kind::number);
  }
  if (training) {
    job.grad_checkpointing = o.grad_checkpointing.value_or(o.task != Task::train);
    if (!o.grad_checkpointing) {
      note("grad_checkpointing", job.grad_checkpointing ? "true" : "false",
           o.task == Task::train ? "off, as transformers' TrainingArguments default; the recipe turns it on when "
                                   "memory is short"
           : o.engine == Engine::unsloth
               ? "on, Unsloth's default use_gradient_checkpointing=\"unsloth\": the checkpointed layer inputs "
                 "in CPU RAM; --no-grad-checkpointing turns it off"
               : "on, as every LoRA/QLoRA recipe runs it (peft prepare_model_for_kbit_training "
                 "use_gradient_checkpointing=True, TRL's trainers); --no-grad-checkpointing turns it off",
           JobDefault::Kind::boolean);
    }
    if (!o.optimizer_given) {
      note("optimizer", std::string(to_string(o.optimizer)), "AdamW, transformers' default optimizer (cli.md)");
    }
    if (o.task != Task::train && !o.lora_rank_given && !adapter_rank) {
      note("lora_rank", std::to_string(o.lora_rank), "rank 16 on every linear layer (cli.md)", JobDefault::Kind::number);
    }
  } else if (o.grad_checkpointing) {
    return fail(Errc::usage, fmt::format("--grad-checkpointing and --no-grad-checkpointing are for training; "
                                         "--task {} does not train",
                                         to_string(o.task)));
  }
  const std::uint32_t max = model.max_context;
  if (o.context) {
    if (max > 0 && *o.context > max) {
      return fail(Errc::usage, fmt::format("--context {} is longer than {}'s maximum of {} tokens; give at most {}",
                                           *o.context, model.name, max, max));
    }
    job.context = *o.context;
  } else if (const SpeedLoad& load = o.request.size.load; o.task == Task::serve && load.input_len > 0) {
    // A served sequence holds its prompt and its output: the engine's --max-model-len.
    const ServeLengths lengths = serve_lengths(std::max(k_default_context, load.input_len + 1), load);
    if (max > 0 && lengths.tokens() > max) {
      return fail(Errc::usage, fmt::format("--input-len {} + --output-len {} = {} tokens is longer than {}'s maximum "
                                           "context of {} tokens",
                                           lengths.input, lengths.output, lengths.tokens(), model.name, max));
    }
    job.context = static_cast<std::uint32_t>(lengths.tokens());
    note("context", std::to_string(job.context),
         fmt::format("--input-len {} + --output-len {}{}: each sequence holds its prompt and its output", lengths.input,
                     lengths.output, load.output_len > 0 ? "" : " (the default)"),
         JobDefault::Kind::number);
  } else {
    job.context = max > 0 ? std::min(k_default_context, max) : k_default_context;
    note("context", std::to_string(job.context),
         max > 0 && max < k_default_context ? "the model's maximum (below the default 4096)"
                                            : "4096 tokens, capped at the model's maximum (cli.md)",
         JobDefault::Kind::number);
  }
  if (!o.batch_given && training) {
    note("micro_batch", "chosen per card",
         "the micro-batch that trains fastest in the memory the card leaves (cli.md plan v4); --micro-batch sets it");
  } else if (!o.batch_given && !job.offline_batch && !(o.task == Task::serve && o.request.size.load.concurrency > 0)) {
    note("batch", "1", "one sequence in flight (cli.md)", JobDefault::Kind::number);
  }
  if (!training && !o.kv_cache_given && model.layers > 0) {
    note("kv_cache", std::string(to_string(resolve_kv_dtype(job))), "the compute dtype (cli.md `auto`)");
  }
  if (job.engine == Engine::vllm && o.engine_version == 0) {
    note("engine_version", engine_release_text(k_vllm_current_release),
         "vLLM's current release, whose rules gpurent follows; --engine-version sizes another (before 0.8: the V0 "
         "engine, which profiles a whole prompt)");
  }
  if (job.engine == Engine::vllm && !o.gpu_util_given) {
    note("gpu_util", "0.9", "vLLM's gpu_memory_utilization default", JobDefault::Kind::number);
  }
  if (job.engine == Engine::tensorrt_llm && !o.gpu_util_given) {
    note("gpu_util", "0.9", "TensorRT-LLM's kv_cache_free_gpu_memory_fraction default: the KV cache takes 0.9 of "
                            "what its profiling run leaves free (not of the card)",
         JobDefault::Kind::number);
  }
  if (job.engine == Engine::sglang && !o.gpu_util_given) {
    note("gpu_util", "auto", "SGLang's mem_fraction_static: (card MiB - its reserve for activations and CUDA graphs) "
                             "/ card MiB, per card (server_args.py _handle_gpu_memory_settings)");
  }
  if (defaults != nullptr) {
    *defaults = std::move(chosen);
  }
  return job;
}

}  // namespace gpurent

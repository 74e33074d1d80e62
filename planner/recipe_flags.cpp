// SPDX-License-Identifier: MIT
// The engine flags a recipe's changes add (docs/sizing.md "Recipe"); the launch line of the
// recipe (planner/launch.cpp) carries them all.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"
#include "planner/recipe_detail.hpp"

namespace gpurent::recipe_detail {
namespace {

std::string join(const std::vector<std::string>& parts)
{
  std::string out;
  for (const auto& p : parts) {
    if (!p.empty()) {
      out += (out.empty() ? "" : " ") + p;
    }
  }
  return out;
}

int zero_stage(Shard s)
{
  switch (s) {
  case Shard::zero1: return 1;
  case Shard::zero2: return 2;
  default: return 3;
  }
}

// Unsloth's script: the keyword arguments that change (planner/launch_unsloth.cpp).
std::vector<std::string> unsloth_flags(const JobSpec& a, const JobSpec& d)
{
  std::vector<std::string> f;
  if (d.gpus != a.gpus) {
    f.push_back(fmt::format("accelerate launch --num_processes {}", d.gpus));
  }
  if (d.task != a.task && d.task == Task::qlora) {
    f.emplace_back("load_in_4bit=True");
  }
  if (d.grad_checkpointing && !a.grad_checkpointing) {
    f.emplace_back("use_gradient_checkpointing=\"unsloth\"");
  }
  if (d.optimizer != a.optimizer) {
    f.emplace_back("optim=\"paged_adamw_8bit\"");
  }
  if (d.batch != a.batch) {
    f.push_back(fmt::format("per_device_train_batch_size={}, gradient_accumulation_steps={}", d.batch, d.grad_accumulation));
  }
  if (d.context != a.context) {
    f.push_back(fmt::format("max_seq_length={0}, max_length={0}", d.context));
  }
  return f;
}

std::vector<std::string> training_flags(const JobSpec& a, const JobSpec& d)
{
  if (d.engine == Engine::unsloth) {
    return unsloth_flags(a, d);
  }
  std::vector<std::string> f;
  const bool tune = d.engine == Engine::torchtune;
  if (d.gpus != a.gpus) {
    if (tune) {
      f.push_back(fmt::format("tune run --nproc_per_node {}", d.gpus));
    } else if (d.engine == Engine::deepspeed) {
      f.push_back(fmt::format("accelerate launch --num_processes {} --use_deepspeed --zero_stage {}", d.gpus,
                              zero_stage(d.shard)));
    } else {
      f.push_back(fmt::format("torchrun --nproc_per_node {}", d.gpus));
      f.push_back(d.shard == Shard::fsdp && !d.offload_optimizer ? "--fsdp \"full_shard auto_wrap\"" : "");
    }
  }
  if (d.task != a.task) {
    if (tune) {
      f.push_back(fmt::format("model.lora_rank={}", d.lora_rank));
    } else {
      f.push_back(fmt::format("--use_peft --lora_r {} --lora_target_modules all-linear", d.lora_rank));
      if (d.task == Task::qlora && d.weights == WeightFormat::nf4) {
        f.push_back("--load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant");
      }
    }
  }
  if (d.grad_checkpointing && !a.grad_checkpointing) {
    f.push_back(tune ? "enable_activation_checkpointing=True" : "--gradient_checkpointing");
  }
  if (d.optimizer != a.optimizer) {
    f.push_back(tune ? "optimizer._component_=bitsandbytes.optim.PagedAdamW8bit" : "--optim paged_adamw_8bit");
  }
  if (d.embeddings_16bit && !a.embeddings_16bit) {
    f.push_back(d.fp16_compute ? "--dtype float16" : "--dtype bfloat16");
  }
  if (d.activation_offload && !a.activation_offload) {
    f.push_back(tune ? "enable_activation_offloading=True" : "--activation_offloading");
  }
  if (d.batch != a.batch) {
    f.push_back(tune ? fmt::format("batch_size={} gradient_accumulation_steps={}", d.batch, d.grad_accumulation)
                     : fmt::format("--per_device_train_batch_size {} --gradient_accumulation_steps {}", d.batch,
                                   d.grad_accumulation));
  }
  if (d.context != a.context) {
    f.push_back(tune ? fmt::format("tokenizer.max_seq_len={}", d.context) : fmt::format("--max_length {}", d.context));
  }
  if (d.offload_optimizer) {
    if (tune) {
      f.push_back("fsdp_cpu_offload=True");
    } else if (d.engine == Engine::deepspeed) {
      f.push_back("--offload_optimizer_device cpu");
    } else {
      f.push_back("--fsdp \"full_shard offload auto_wrap\"");
    }
  }
  return f;
}

std::vector<std::string> serving_flags(const JobSpec& a, const JobSpec& d)
{
  std::vector<std::string> f;
  const std::uint32_t slots = std::max<std::uint32_t>(d.batch, 1);
  switch (d.engine) {
  case Engine::vllm:
    if (d.weights != a.weights) {
      f.push_back(d.weights == WeightFormat::fp8 ? "--quantization fp8" : "--quantization bitsandbytes");
    }
    if (d.kv_cache != a.kv_cache) {
      f.push_back("--kv-cache-dtype fp8");
    }
    if (d.gpus != a.gpus) {
      f.push_back(fmt::format("--tensor-parallel-size {}", tp_degree(d)));
      f.push_back(d.pipeline > 1 ? fmt::format("--pipeline-parallel-size {}", d.pipeline) : "");
    }
    f.push_back(d.batch != a.batch ? fmt::format("--max-num-seqs {}", d.batch) : "");
    f.push_back(d.context != a.context ? fmt::format("--max-model-len {}", d.context) : "");
    f.push_back(d.gpu_util_permille != a.gpu_util_permille
                    ? fmt::format("--gpu-memory-utilization {:.2f}", d.gpu_util_permille / 1000.0)
                    : "");
    f.push_back(d.offload_bytes > 0 ? fmt::format("--cpu-offload-gb {}", d.offload_bytes / k_gib) : "");
    break;
  case Engine::tensorrt_llm:
    f.push_back(d.kv_cache != a.kv_cache ? "--kv_cache_dtype fp8" : "");
    if (d.gpus != a.gpus) {
      f.push_back(fmt::format("--tp_size {}", tp_degree(d)));
      f.push_back(d.pipeline > 1 ? fmt::format("--pp_size {}", d.pipeline) : "");
    }
    f.push_back(d.batch != a.batch ? fmt::format("--max_batch_size {}", d.batch) : "");
    f.push_back(d.context != a.context ? fmt::format("--max_seq_len {}", d.context) : "");
    f.push_back(d.gpu_util_permille != a.gpu_util_permille
                    ? fmt::format("--kv_cache_free_gpu_memory_fraction {:.2f}", d.gpu_util_permille / 1000.0)
                    : "");
    break;
  case Engine::sglang:
    f.push_back(d.weights != a.weights ? fmt::format("--quantization {}", d.weights == WeightFormat::fp8 ? "fp8" : "bitsandbytes")
                                       : "");
    f.push_back(d.kv_cache != a.kv_cache ? "--kv-cache-dtype fp8_e5m2" : "");
    f.push_back(d.gpus != a.gpus ? fmt::format("--tp {}", tp_degree(d)) : "");
    f.push_back(d.batch != a.batch ? fmt::format("--max-running-requests {}", d.batch) : "");
    f.push_back(d.context != a.context ? fmt::format("--context-length {}", d.context) : "");
    f.push_back(d.gpu_util_permille != a.gpu_util_permille
                    ? fmt::format("--mem-fraction-static {:.2f}", d.gpu_util_permille / 1000.0)
                    : "");
    f.push_back(d.offload_bytes > 0 ? fmt::format("--cpu-offload-gb {}", d.offload_bytes / k_gib) : "");
    break;
  case Engine::llama_cpp:
    f.push_back(d.weights != a.weights ? fmt::format("a {} GGUF file", to_string(d.weights)) : "");
    f.push_back(d.kv_cache != a.kv_cache ? "-fa on --cache-type-k q8_0 --cache-type-v q8_0" : "");
    f.push_back(d.gpus != a.gpus ? "--split-mode layer" : "");
    if (d.batch != a.batch || d.context != a.context) {
      f.push_back(fmt::format("-c {} -np {}", std::uint64_t{d.context} * slots, slots));
    }
    f.push_back(d.offload_bytes > 0 ? fmt::format("-ngl {}", d.model.layers - offloaded_layers(d)) : "");
    break;
  case Engine::ollama:
    f.push_back(d.weights != a.weights ? fmt::format("a {} GGUF", to_string(d.weights)) : "");
    f.push_back(d.kv_cache != a.kv_cache ? "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0" : "");
    f.push_back(d.gpus != a.gpus ? "OLLAMA_SCHED_SPREAD=1" : "");
    f.push_back(d.batch != a.batch ? fmt::format("OLLAMA_NUM_PARALLEL={}", d.batch) : "");
    f.push_back(d.context != a.context ? fmt::format("OLLAMA_CONTEXT_LENGTH={}", d.context) : "");
    f.push_back(d.offload_bytes > 0 ? fmt::format("num_gpu {}", d.model.layers - offloaded_layers(d)) : "");
    break;
  default:
    if (d.weights != a.weights) {
      f.push_back(d.weights == WeightFormat::int8 ? "BitsAndBytesConfig(load_in_8bit=True)"
                                                  : "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")");
    }
    f.push_back(d.gpus != a.gpus ? "device_map=\"auto\" over the GPUs" : "");
    f.push_back(d.batch != a.batch ? fmt::format("{} prompts per batch", d.batch) : "");
    f.push_back(d.context != a.context ? fmt::format("max_length={}", d.context) : "");
    f.push_back(d.offload_bytes > 0 ? fmt::format("max_memory with {} GiB on the CPU", d.offload_bytes / k_gib) : "");
    break;
  }
  return f;
}

}  // namespace

std::map<std::string, std::string> flags(const JobSpec& asked, const JobSpec& done)
{
  std::map<std::string, std::string> out;
  const std::string text = join(is_training(done.task) ? training_flags(asked, done) : serving_flags(asked, done));
  if (!text.empty()) {
    out[std::string(to_string(done.engine))] = text;
  }
  return out;
}

}  // namespace gpurent::recipe_detail

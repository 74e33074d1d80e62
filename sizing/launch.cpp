// SPDX-License-Identifier: MIT
// Command lines that run a job as sized (cli.md `launch`).
#include "sizing/launch.hpp"

#include <fmt/format.h>

#include "sizing/checkpoint_use.hpp"
#include "sizing/estimate.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

std::string base_name(std::string_view hf_id)
{
  const auto slash = hf_id.rfind('/');
  return std::string(slash == std::string_view::npos ? hf_id : hf_id.substr(slash + 1));
}

// The GGUF file type a non-GGUF format maps to.
std::string_view gguf_type(WeightFormat f)
{
  if (is_gguf(f)) {
    return to_string(f);
  }
  switch (f) {
  case WeightFormat::fp8:
  case WeightFormat::int8: return "Q8_0";
  case WeightFormat::int4:
  case WeightFormat::nf4:
  case WeightFormat::awq:
  case WeightFormat::gptq:
  case WeightFormat::mxfp4: return "Q4_K_M";
  default: return "F16";
  }
}

std::string vllm_command(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format("vllm serve {} --tensor-parallel-size {} --max-model-len {} --max-num-seqs {} "
                              "--gpu-memory-utilization {:.2f}",
                              id, tp_degree(j), j.context, std::max<std::uint32_t>(j.batch, 1),
                              static_cast<double>(j.gpu_util_permille) / 1000.0);
  if (resolve_kv_dtype(j) == KvDtype::fp8) {
    s += " --kv-cache-dtype fp8";
  }
  switch (j.weights) {
  case WeightFormat::fp8: s += " --quantization fp8"; break;
  case WeightFormat::awq: s += " --quantization awq"; break;
  case WeightFormat::gptq: s += " --quantization gptq"; break;
  case WeightFormat::int4:
  case WeightFormat::nf4:
  case WeightFormat::int8: s += " --quantization bitsandbytes"; break;
  case WeightFormat::fp32: s += " --dtype float32"; break;
  case WeightFormat::fp16: s += " --dtype float16"; break;
  default: break;
  }
  return s;
}

std::string llama_cpp_command(const JobSpec& j, std::string_view id)
{
  const std::uint32_t np = std::max<std::uint32_t>(j.batch, 1);
  std::string file = fmt::format("{}.{}.gguf", base_name(id), gguf_type(j.weights));
  if (const auto& ck = j.model.checkpoint; ck && ck->gguf && !ck->files.empty() && loads_as_stored(*ck, j.weights)) {
    file = base_name(ck->files.front());  // the file that was sized (part 1 of a split one)
  }
  std::string s = fmt::format("llama-server -m {} -c {} -np {} -ngl 999", file, std::uint64_t{j.context} * np, np);
  s += j.flash_attention ? " -fa on" : " -fa off";
  const KvDtype kv = resolve_kv_dtype(j);
  if (kv == KvDtype::q8_0 || kv == KvDtype::q4_0) {
    s += fmt::format(" --cache-type-k {0} --cache-type-v {0}", to_string(kv));
  }
  if (j.gpus > 1) {
    s += " --split-mode layer";
  }
  return s;
}

std::string ollama_command(const JobSpec& j, std::string_view id)
{
  std::string env = fmt::format("OLLAMA_CONTEXT_LENGTH={} OLLAMA_NUM_PARALLEL={}", j.context, std::max<std::uint32_t>(j.batch, 1));
  const KvDtype kv = resolve_kv_dtype(j);
  if (j.flash_attention) {
    env += " OLLAMA_FLASH_ATTENTION=1";
  }
  if (kv == KvDtype::q8_0 || kv == KvDtype::q4_0) {
    env += fmt::format(" OLLAMA_KV_CACHE_TYPE={}", to_string(kv));
  }
  return fmt::format("{} ollama serve & ollama run hf.co/{}:{}", env, id, gguf_type(j.weights));
}

std::string transformers_infer(const JobSpec& j, std::string_view id)
{
  std::string q;
  switch (j.weights) {
  case WeightFormat::int8: q = ", quantization_config=BitsAndBytesConfig(load_in_8bit=True)"; break;
  case WeightFormat::nf4:
  case WeightFormat::int4: q = ", quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")"; break;
  default: break;
  }
  const std::string_view dtype = j.weights == WeightFormat::fp32 ? "float32" : (j.weights == WeightFormat::fp16 ? "float16" : "bfloat16");
  return fmt::format("python -c 'import torch; from transformers import AutoModelForCausalLM, BitsAndBytesConfig; "
                     "m = AutoModelForCausalLM.from_pretrained(\"{}\", torch_dtype=torch.{}, device_map=\"auto\"{})' "
                     "# generate(max_length={}) on batches of {}",
                     id, dtype, q, j.context, std::max<std::uint32_t>(j.batch, 1));
}

std::string_view hf_optim(Optimizer o)
{
  switch (o) {
  case Optimizer::adamw_8bit: return "paged_adamw_8bit";
  case Optimizer::sgd: return "sgd";
  case Optimizer::adafactor: return "adafactor";
  default: return "adamw_torch";
  }
}

std::string hf_train_args(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format("train.py --model_name_or_path {} --per_device_train_batch_size {} --max_seq_length {} "
                              "--optim {}",
                              id, std::max<std::uint32_t>(j.batch, 1), j.context, hf_optim(j.optimizer));
  s += j.weights == WeightFormat::fp32 ? "" : " --bf16";
  if (j.grad_checkpointing) {
    s += " --gradient_checkpointing";
  }
  if (j.task == Task::lora || j.task == Task::qlora) {
    s += fmt::format(" --use_peft --lora_r {} --lora_target_modules all-linear", j.lora_rank);
  }
  if (j.task == Task::qlora) {
    s += " --load_in_4bit --bnb_4bit_quant_type nf4";
  }
  return s;
}

std::string transformers_train(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format("torchrun --nproc_per_node {} {}", std::max<std::uint32_t>(j.gpus, 1), hf_train_args(j, id));
  if (j.gpus > 1 && j.shard == Shard::fsdp) {
    s += " --fsdp \"full_shard auto_wrap\"";
  }
  return s;
}

std::string deepspeed_train(const JobSpec& j, std::string_view id)
{
  int stage = 0;
  switch (j.shard) {
  case Shard::zero1: stage = 1; break;
  case Shard::zero2: stage = 2; break;
  case Shard::zero3:
  case Shard::fsdp: stage = 3; break;
  default: break;
  }
  return fmt::format("deepspeed --num_gpus {} {} --deepspeed ds_zero{}.json  # zero_optimization.stage={}",
                     std::max<std::uint32_t>(j.gpus, 1), hf_train_args(j, id), stage, stage);
}

std::string torchtune_train(const JobSpec& j, std::string_view id)
{
  const bool lora = j.task == Task::lora || j.task == Task::qlora;
  const bool multi = j.gpus > 1;
  std::string recipe = std::string(lora ? "lora_finetune" : "full_finetune") + (multi ? "_distributed" : "_single_device");
  std::string s = "tune run ";
  if (multi) {
    s += fmt::format("--nproc_per_node {} ", j.gpus);
  }
  s += fmt::format("{} --config {}.yaml checkpointer.checkpoint_dir=./{} batch_size={} tokenizer.max_seq_len={} "
                   "enable_activation_checkpointing={}",
                   recipe, recipe, base_name(id), std::max<std::uint32_t>(j.batch, 1), j.context,
                   j.grad_checkpointing ? "True" : "False");
  if (lora) {
    s += fmt::format(" model.lora_rank={}", j.lora_rank);
  }
  if (j.task == Task::qlora) {
    s += " model.quantize_base=True";
  }
  if (j.optimizer == Optimizer::adamw_8bit) {
    s += " optimizer._component_=bitsandbytes.optim.PagedAdamW8bit";
  }
  return s;
}

}  // namespace

std::map<std::string, std::string> launch_commands(const JobSpec& job, std::string_view hf_id)
{
  std::map<std::string, std::string> out;
  const std::string key{to_string(job.engine)};
  if (is_training(job.task)) {
    switch (job.engine) {
    case Engine::torchtune: out[key] = torchtune_train(job, hf_id); break;
    case Engine::deepspeed: out[key] = deepspeed_train(job, hf_id); break;
    default: out["transformers"] = transformers_train(job, hf_id); break;
    }
    return out;
  }
  switch (job.engine) {
  case Engine::vllm: out[key] = vllm_command(job, hf_id); break;
  case Engine::llama_cpp: out[key] = llama_cpp_command(job, hf_id); break;
  case Engine::ollama: out[key] = ollama_command(job, hf_id); break;
  default: out["transformers"] = transformers_infer(job, hf_id); break;
  }
  return out;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// Fixes that change how a model is trained: batch, precision, checkpointing, optimizer, LoRA.
#include <fmt/format.h>

#include "sizing/estimate.hpp"
#include "planner/fixes_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent::fixes_detail {

std::optional<Fix> fix_reduce_batch(const JobSpec& job, Bytes limit)
{
  if (!is_training(job.task) || job.batch <= 1) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.batch = largest_fitting(1, job.batch - 1, [&](std::uint32_t b) {
    JobSpec t = job;
    t.batch = b;
    return fits(t, limit);
  });
  const std::uint32_t steps = (job.batch + m.batch - 1) / m.batch;
  Fix f = make_fix(job, m, limit, "reduce-batch",
                   fmt::format("batch {} per GPU (was {}) with gradient accumulation over {} steps, same effective batch",
                               m.batch, job.batch, steps));
  const std::string hf = fmt::format("per_device_train_batch_size={} gradient_accumulation_steps={}", m.batch, steps);
  f.flags["transformers"] = hf;
  f.flags["deepspeed"] = fmt::format("train_micro_batch_size_per_gpu={} gradient_accumulation_steps={}", m.batch, steps);
  f.flags["torchtune"] = fmt::format("batch_size={} gradient_accumulation_steps={}", m.batch, steps);
  f.flags["unsloth"] = fmt::format("SFTConfig(per_device_train_batch_size={}, gradient_accumulation_steps={})", m.batch, steps);
  return f;
}

std::optional<Fix> fix_mixed_precision(const JobSpec& job, Bytes limit)
{
  if (job.weights != WeightFormat::fp32) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.weights = WeightFormat::bf16;
  if (m.kv_cache == KvDtype::fp32) {
    m.kv_cache = KvDtype::auto_;
  }
  Fix f = make_fix(job, m, limit, "mixed-precision", "bf16 mixed precision instead of fp32 (weights and activations in 16 bits)");
  if (is_training(job.task)) {
    f.flags["transformers"] = "bf16=True";
    f.flags["deepspeed"] = "\"bf16\": {\"enabled\": true}";
    f.flags["torchtune"] = "dtype=bf16";
  } else {
    f.flags["transformers"] = "torch_dtype=torch.bfloat16";
    f.flags["vllm"] = "--dtype bfloat16";
  }
  return f;
}

std::optional<Fix> fix_grad_checkpointing(const JobSpec& job, Bytes limit)
{
  if (!is_training(job.task) || job.grad_checkpointing) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.grad_checkpointing = true;
  Fix f = make_fix(job, m, limit, "grad-checkpointing",
                   "activation (gradient) checkpointing: keep each layer's input, recompute the rest in backward");
  f.flags["transformers"] = "gradient_checkpointing=True";
  f.flags["deepspeed"] = "gradient_checkpointing=True";
  f.flags["torchtune"] = "enable_activation_checkpointing=True";
  f.flags["unsloth"] = "use_gradient_checkpointing=\"unsloth\"";
  return f;
}

std::optional<Fix> fix_8bit_optimizer(const JobSpec& job, Bytes limit)
{
  // LoRA too: a 70B model's rank-16 adapters carry 1.5 GiB of fp32 AdamW states, 0.4 GiB in 8 bits.
  if (!is_training(job.task) || job.optimizer == Optimizer::adamw_8bit) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.optimizer = Optimizer::adamw_8bit;
  Fix f = make_fix(job, m, limit, "8bit-optimizer",
                   fmt::format("8-bit paged AdamW (bitsandbytes) instead of {}: 2 bytes of state per parameter",
                               to_string(job.optimizer)));
  f.flags["transformers"] = "optim=\"paged_adamw_8bit\"";
  f.flags["deepspeed"] = "optim=\"paged_adamw_8bit\"";
  f.flags["torchtune"] = "optimizer._component_=bitsandbytes.optim.PagedAdamW8bit";
  f.flags["unsloth"] = "SFTConfig(optim=\"paged_adamw_8bit\")";
  return f;
}

// TRL loads the parameters bitsandbytes leaves unquantized (embeddings, lm_head, norms) in fp32 by
// default; --dtype bfloat16 keeps them in 16 bits (docs/sizing.md "QLoRA levers").
std::optional<Fix> fix_embeddings_16bit(const JobSpec& job, Bytes limit)
{
  if (job.task != Task::qlora || job.embeddings_16bit ||
      (job.engine != Engine::transformers && job.engine != Engine::deepspeed)) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.embeddings_16bit = true;
  Fix f = make_fix(job, m, limit, "embeddings-16bit",
                   "embeddings, lm_head and norms kept in 16 bits instead of fp32 (the 4-bit layers are unchanged)");
  const std::string dtype = job.fp16_compute ? "float16" : "bfloat16";
  f.flags["transformers"] = fmt::format("dtype=\"{}\" (trl sft --dtype {})", dtype, dtype);
  f.flags["deepspeed"] = f.flags["transformers"];
  return f;
}

// The checkpointed layer inputs kept in CPU RAM during the step, brought back for backward.
std::optional<Fix> fix_activation_offload(const JobSpec& job, Bytes limit)
{
  // Unsloth offloads the checkpointed layer inputs itself (use_gradient_checkpointing="unsloth").
  if (!is_training(job.task) || job.activation_offload || job.engine == Engine::unsloth) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.activation_offload = true;
  m.grad_checkpointing = true;  // TRL's recipe: the checkpointed layer inputs are what it offloads
  Fix f = make_fix(job, m, limit, "activation-offload",
                   std::string("activation offloading: the layers' saved activations in CPU RAM until backward needs "
                               "them (copies overlap the compute)") +
                       (job.grad_checkpointing ? "" : ", with gradient checkpointing"));
  f.flags["transformers"] = job.grad_checkpointing
                                ? "activation_offloading=True (trl sft --activation_offloading)"
                                : "activation_offloading=True gradient_checkpointing=True (trl sft "
                                  "--activation_offloading --gradient_checkpointing)";
  f.flags["deepspeed"] = f.flags["transformers"];
  f.flags["torchtune"] = job.grad_checkpointing
                             ? "enable_activation_offloading=True"
                             : "enable_activation_offloading=True enable_activation_checkpointing=True";
  return f;
}

std::optional<Fix> fix_lora(const JobSpec& job, Bytes limit)
{
  if (job.task != Task::train) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.task = Task::lora;
  Fix f = make_fix(job, m, limit, "lora",
                   fmt::format("LoRA rank {} on q,k,v,o,gate,up,down instead of full fine-tuning (base weights frozen)",
                               job.lora_rank));
  const std::string peft = fmt::format("peft.LoraConfig(r={}, target_modules=\"all-linear\")", job.lora_rank);
  f.flags["transformers"] = peft;
  f.flags["deepspeed"] = peft;
  f.flags["torchtune"] = fmt::format("tune run lora_finetune_single_device model.lora_rank={}", job.lora_rank);
  return f;
}

std::optional<Fix> fix_qlora(const JobSpec& job, Bytes limit)
{
  if (job.task != Task::train && job.task != Task::lora) {
    return std::nullopt;
  }
  JobSpec m = job;
  m.task = Task::qlora;
  m.weights = WeightFormat::nf4;
  m.grad_checkpointing = true;  // prepare_model_for_kbit_training turns it on
  Fix f = make_fix(job, m, limit, "qlora",
                   fmt::format("QLoRA: base weights in 4-bit NF4 with double quantization, LoRA rank {} adapters in "
                               "32-bit, gradient checkpointing",
                               job.lora_rank));
  const std::string bnb = fmt::format(
      "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\", bnb_4bit_use_double_quant=True, "
      "bnb_4bit_compute_dtype=torch.bfloat16) + peft.LoraConfig(r={}, target_modules=\"all-linear\")",
      job.lora_rank);
  f.flags["transformers"] = bnb;
  f.flags["deepspeed"] = bnb;
  f.flags["torchtune"] = fmt::format("tune run lora_finetune_single_device model.quantize_base=True model.lora_rank={}", job.lora_rank);
  f.flags["unsloth"] = "FastLanguageModel.from_pretrained(load_in_4bit=True)";
  return f;
}

}  // namespace gpurent::fixes_detail

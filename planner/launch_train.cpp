// SPDX-License-Identifier: MIT
// Training command lines (docs/sizing.md "Launch lines"): TRL's SFT script for transformers and
// DeepSpeed (through accelerate), torchtune's recipes with the config it ships for the model.
#include <fmt/format.h>

#include <string>

#include "common/text.hpp"
#include "sizing/estimate.hpp"
#include "planner/launch.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

using launch_detail::base_name;
using launch_detail::hf_optim;
using launch_detail::shell_word;

int zero_stage(Shard s);

// The line runs under FSDP (TRL's --fsdp through torchrun) or DeepSpeed ZeRO-3: both shard the
// parameters themselves.
bool shards_parameters(const JobSpec& j)
{
  if (j.engine == Engine::deepspeed) {
    return zero_stage(j.shard) == 3;
  }
  const bool torchrun = std::max<std::uint32_t>(j.gpus, 1) > 1 || j.nodes > 1 || j.offload_optimizer;
  return torchrun && (j.offload_optimizer || j.shard == Shard::fsdp);
}

// TRL `sft` arguments (ScriptArguments, SFTConfig, ModelConfig). The dataset comes from $DATASET.
std::string trl_args(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format(
      "--model_name_or_path {} --dataset_name \"${{DATASET:?set DATASET to a Hub dataset id}}\" --output_dir {} "
      "--per_device_train_batch_size {}",
      shell_word(id), shell_word("./" + base_name(id) + "-sft"), std::max<std::uint32_t>(j.batch, 1));
  if (j.grad_accumulation > 1) {
    s += fmt::format(" --gradient_accumulation_steps {}", j.grad_accumulation);
  }
  s += fmt::format(" --max_length {} --optim {}", j.context, hf_optim(j.optimizer));
  s += j.pack ? " --packing" : "";  // SFTConfig.packing: sequences packed to max_length
  s += j.compile ? " --torch_compile True" : "";  // TrainingArguments.torch_compile
  // Mixed precision: bf16 where the card has it, fp16 (with loss scaling) where it does not.
  // TRL's parser wants a value for these `bool | None` fields: a bare --bf16 is an argparse error.
  s += j.weights == WeightFormat::fp32 ? "" : (j.fp16_compute ? " --fp16 true" : " --bf16 true");
  s += j.grad_checkpointing ? " --gradient_checkpointing" : " --gradient_checkpointing false";
  if (j.task == Task::lora || j.task == Task::qlora) {
    s += fmt::format(" --use_peft --lora_r {} --lora_target_modules all-linear", j.lora_rank);
  }
  if (j.task == Task::qlora && j.weights == WeightFormat::nf4) {
    s += " --load_in_4bit --bnb_4bit_quant_type nf4 --use_bnb_nested_quant";
    // FSDP and ZeRO-3 shard only floating-point tensors, and wrap a unit only when all of its
    // parameters share one dtype: the 4-bit weights are stored in the compute dtype and the rest of
    // the model loads in it too (bitsandbytes docs "FSDP-QLoRA": "It is very important the
    // quant_storage data type matches the data types used throughout the model"; TRL's ModelConfig
    // --dtype defaults to float32). docs/sizing.md "Launch lines".
    if (shards_parameters(j)) {
      const std::string_view dtype = j.fp16_compute ? "float16" : "bfloat16";
      s += fmt::format(" --dtype {0} --bnb_4bit_quant_storage {0}", dtype);
    }
  }
  // TRL loads the model in --dtype float32 unless told (ModelConfig.dtype): LoRA's frozen 16-bit
  // base is sized in 16 bits, and QLoRA's unquantized parameters too once the embeddings-16bit
  // lever is on.
  if ((j.task == Task::lora && j.weights != WeightFormat::fp32) || (j.task == Task::qlora && j.embeddings_16bit)) {
    s += j.fp16_compute ? " --dtype float16" : " --dtype bfloat16";
  }
  if (j.activation_offload) {
    s += " --activation_offloading";
  }
  return s;
}

int zero_stage(Shard s)
{
  switch (s) {
  case Shard::zero1: return 1;
  case Shard::zero2: return 2;
  case Shard::zero3:
  case Shard::fsdp: return 3;
  default: return 0;
  }
}

using launch_detail::on_each_node;

// torchrun's rendezvous across servers: each server runs the same line with its own rank
// (`gpurent run GROUP` sets GPURENT_NODE_RANK, MASTER_ADDR and MASTER_PORT on every member).
std::string nodes_args(const JobSpec& j)
{
  if (j.nodes <= 1) {
    return "";
  }
  return fmt::format("--nnodes {} --node_rank \"$GPURENT_NODE_RANK\" --master_addr \"$MASTER_ADDR\" --master_port "
                     "\"$MASTER_PORT\" ",
                     j.nodes);
}

std::string transformers_train(const JobSpec& j, std::string_view id)
{
  const std::uint32_t n = std::max<std::uint32_t>(j.gpus, 1);
  if (n == 1 && j.nodes <= 1 && !j.offload_optimizer) {
    return "trl sft " + trl_args(j, id);
  }
  std::string s = fmt::format("torchrun {}--nproc_per_node {} -m trl.scripts.sft {}", nodes_args(j), n, trl_args(j, id));
  if (j.offload_optimizer) {
    s += " --fsdp \"full_shard offload auto_wrap\"";
  } else if (j.shard == Shard::fsdp) {
    s += " --fsdp \"full_shard auto_wrap\"";
  }
  return on_each_node(j, std::move(s));
}

std::string deepspeed_train(const JobSpec& j, std::string_view id)
{
  std::string s = fmt::format("accelerate launch --num_processes {} --use_deepspeed --zero_stage {}",
                              world_gpus(j), zero_stage(j.shard));
  if (j.nodes > 1) {
    // Each server starts its own processes (accelerate's default DeepSpeed launcher, pdsh, would
    // log in to the others from the first one: launch.py DEEPSPEED_MULTINODE_LAUNCHERS).
    s += fmt::format(" --num_machines {} --machine_rank \"$GPURENT_NODE_RANK\" --main_process_ip \"$MASTER_ADDR\" "
                     "--main_process_port \"$MASTER_PORT\" --deepspeed_multinode_launcher standard",
                     j.nodes);
  }
  if (j.offload_optimizer) {
    s += " --offload_optimizer_device cpu";
  }
  return on_each_node(j, s + " -m trl.scripts.sft " + trl_args(j, id));
}

// The tokenizer files of each torchtune family, relative to the downloaded checkpoint.
std::string tokenizer_overrides(std::string_view family, const std::string& dir)
{
  if (family.starts_with("llama3")) {
    return fmt::format("tokenizer.path={}/original/tokenizer.model", dir);
  }
  if (family.starts_with("qwen") || family.starts_with("phi4")) {
    return fmt::format("tokenizer.path={0}/vocab.json tokenizer.merges_file={0}/merges.txt", dir);
  }
  return fmt::format("tokenizer.path={}/tokenizer.model", dir);
}

// torchtune's last release (v0.6.1, 2025-04) predates its Qwen3 and Llama 4 configs: they exist
// only on its main branch (tests/data/engine_flags/torchtune_main.json), which the line installs,
// pinned to the commit the flag tables were read from.
constexpr std::string_view k_torchtune_main = "bd2a0fc7c314";  // bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1

bool torchtune_main_only(std::string_view family) { return family.starts_with("qwen3") || family.starts_with("llama4"); }

std::string torchtune_train(const JobSpec& j, std::string_view id)
{
  const std::string config = torchtune_config(j);
  if (config.empty()) {
    return "";
  }
  const std::string install =
      torchtune_main_only(j.model.torchtune)
          ? fmt::format("pip install git+https://github.com/pytorch/torchtune@{} && ", k_torchtune_main)
          : std::string();
  const bool multi = world_gpus(j) > 1;
  const bool lora = j.task == Task::lora || j.task == Task::qlora;
  const std::string recipe = std::string(lora ? "lora_finetune" : "full_finetune") + (multi ? "_distributed" : "_single_device");
  const std::string dir = shell_word("./" + base_name(id));
  std::string s = fmt::format("{}tune download {} --output-dir {} && tune run ", install, shell_word(id), dir);
  if (multi) {
    s += fmt::format("{}--nproc_per_node {} ", nodes_args(j), j.gpus);
  }
  s += fmt::format("{} --config {} checkpointer.checkpoint_dir={} {} batch_size={} gradient_accumulation_steps={} "
                   "tokenizer.max_seq_len={} enable_activation_checkpointing={}",
                   recipe, config, dir, tokenizer_overrides(j.model.torchtune, dir), std::max<std::uint32_t>(j.batch, 1),
                   std::max<std::uint32_t>(j.grad_accumulation, 1), j.context, j.grad_checkpointing ? "True" : "False");
  if (lora) {
    s += fmt::format(" model.lora_rank={}", j.lora_rank);
  }
  if (j.weights == WeightFormat::fp32) {
    s += " dtype=fp32";  // torchtune refuses fp16; fp32 where the card has no bf16
  }
  if (j.optimizer == Optimizer::adamw_8bit) {
    s += " optimizer._component_=bitsandbytes.optim.PagedAdamW8bit";
  }
  if (j.activation_offload) {
    s += " enable_activation_offloading=True";
  }
  if (j.pack) {
    s += " dataset.packed=True";
  }
  if (j.compile) {
    s += " compile=True";
  }
  if (j.offload_optimizer && multi) {
    s += " fsdp_cpu_offload=True";
  }
  return on_each_node(j, std::move(s));
}

}  // namespace

std::string torchtune_config(const JobSpec& job)
{
  const ModelArch& m = job.model;
  if (m.torchtune.empty()) {
    return "";
  }
  const bool multi = world_gpus(job) > 1;
  std::vector<std::string_view> wanted;
  switch (job.task) {
  case Task::qlora:
    if (job.weights != WeightFormat::nf4) {
      return "";  // torchtune's QLoRA quantizes the base to NF4 itself
    }
    wanted = {multi ? "qlora" : "qlora_single_device"};
    break;
  case Task::lora: wanted = {multi ? "lora" : "lora_single_device"}; break;
  default: wanted = multi ? std::vector<std::string_view>{"full"}
                          : std::vector<std::string_view>{"full_single_device", "full_low_memory"};
    break;
  }
  for (const auto kind : wanted) {
    for (const auto have : split(m.torchtune_kinds, ' ')) {
      if (have == kind) {
        return m.torchtune + "_" + std::string(kind);
      }
    }
  }
  return "";
}

namespace launch_detail {

// A line that reads the server's own environment (its rank): `bash -c '…'`, so that the shell
// on each server expands "$GPURENT_NODE_RANK", not the laptop's shell when the line is pasted
// after `gpurent run GROUP --` (which passes several words to the server quoted as they are).
std::string on_each_node(const JobSpec& j, std::string line)
{
  if (j.nodes <= 1) {
    return line;
  }
  std::string quoted;
  for (const char c : line) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return "bash -c '" + quoted + "'";
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

std::string training_command(const JobSpec& job, std::string_view hf_id)
{
  switch (job.engine) {
  case Engine::torchtune: return torchtune_train(job, hf_id);
  case Engine::deepspeed: return deepspeed_train(job, hf_id);
  case Engine::unsloth: return unsloth_train(job, hf_id);
  default: return transformers_train(job, hf_id);
  }
}

}  // namespace launch_detail

}  // namespace gpurent

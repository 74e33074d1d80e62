// SPDX-License-Identifier: MIT
// Unsloth's launch script (docs/sizing.md "Launch lines"): FastLanguageModel loads the base as
// sized (4-bit NF4 for QLoRA, 8-bit or 16-bit for LoRA) and adds the adapters, TRL's SFTTrainer
// trains them on $DATASET. Every keyword is a named parameter at the releases pinned in
// tests/data/engine_flags/unsloth.json (Unsloth 2026.8.19, TRL v0.24.0, the newest its
// pyproject.toml allows). On several GPUs the script goes to a file that `accelerate launch`
// runs once per GPU (Unsloth's DDP guide), each process loading the model on its own GPU.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "planner/launch.hpp"
#include "sizing/estimate.hpp"

namespace gpurent::launch_detail {
namespace {

// The base as the job sizes it: QLoRA's 4-bit NF4 (bitsandbytes, double quantization in Unsloth's
// pre-quantized checkpoints and its own), LoRA's 8-bit (LLM.int8) or 16-bit.
std::string load_args(const JobSpec& j)
{
  if (j.task == Task::qlora) {
    return "load_in_4bit=True";
  }
  if (j.weights == WeightFormat::int8) {
    return "load_in_4bit=False, load_in_8bit=True";
  }
  return "load_in_4bit=False, load_in_16bit=True";
}

}  // namespace

std::string unsloth_train(const JobSpec& j, std::string_view id)
{
  const std::uint32_t gpus = world_gpus(j);
  // "unsloth": checkpointed layer inputs offloaded to CPU RAM (the memory estimate's assumption).
  const std::string_view checkpointing = j.grad_checkpointing ? "\"unsloth\"" : "False";
  std::string load = fmt::format("model_name=model_id, max_seq_length={}, dtype=None, {}, use_gradient_checkpointing={}",
                                 j.context, load_args(j), checkpointing);
  if (gpus > 1) {
    load += ", device_map={\"\": int(os.environ.get(\"LOCAL_RANK\", \"0\"))}";  // one whole copy per GPU
  }
  const std::string peft =
      fmt::format("model, r={0}, lora_alpha={0}, target_modules=[\"q_proj\", \"k_proj\", \"v_proj\", \"o_proj\", "
                  "\"gate_proj\", \"up_proj\", \"down_proj\"], use_gradient_checkpointing={1}",
                  j.lora_rank, checkpointing);
  std::string config = fmt::format("output_dir={}, per_device_train_batch_size={}, gradient_accumulation_steps={}, "
                                   "max_length={}, packing={}, optim={}",
                                   python_string("./" + base_name(id) + "-sft"), std::max<std::uint32_t>(j.batch, 1),
                                   std::max<std::uint32_t>(j.grad_accumulation, 1), j.context, j.pack ? "True" : "False",
                                   python_string(hf_optim(j.optimizer)));
  config += j.fp16_compute ? ", fp16=True, bf16=False" : ", bf16=True, fp16=False";
  const std::string script = python_line({
      "import os",
      "from unsloth import FastLanguageModel",  // before trl and transformers, which it patches
      "from datasets import load_dataset",
      "from trl import SFTConfig, SFTTrainer",
      "model_id = " + python_string(id),
      "model, tokenizer = FastLanguageModel.from_pretrained(" + load + ")",
      "model = FastLanguageModel.get_peft_model(" + peft + ")",
      "assert os.environ.get(\"DATASET\"), \"set DATASET to a Hub dataset id\"",
      "dataset = load_dataset(os.environ[\"DATASET\"], split=\"train\")",
      "trainer = SFTTrainer(model=model, processing_class=tokenizer, train_dataset=dataset, args=SFTConfig(" + config +
          "))",
      "trainer.train()",
  });
  if (gpus <= 1) {
    return script;
  }
  // The script's body (the quoted word after `python -c`) written to a file for accelerate's processes.
  const std::string body = script.substr(std::string_view("python -c ").size());
  return fmt::format("printf '%s\\n' {} > unsloth_sft.py && accelerate launch --num_processes {} unsloth_sft.py", body,
                     gpus);
}

}  // namespace gpurent::launch_detail

// SPDX-License-Identifier: MIT
#pragma once
// The job as the user asks for it, typed (the command line's flags are translated into it by
// cli/plan_options.cpp), and make_job: the one JobSpec with every default applied, which memory,
// speed, the launch lines and the bill all read (planner/plan_job.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "planner/rank.hpp"
#include "sizing/job.hpp"
#include "sizing/model.hpp"

namespace gpurent {

inline constexpr std::uint32_t k_default_context = 4096;

// Validated and typed, with cli.md's defaults applied. What depends on the model (the engine of a
// GGUF checkpoint, the weight format, the LoRA rank of an adapter, the context, checkpointing)
// stays unset, or flagged as not given, until make_job knows it.
struct PlanOptions {
  std::string model;                    // empty when only --params is given
  std::optional<std::uint64_t> params;  // --params
  Task task = Task::infer;
  Engine engine = Engine::transformers;
  bool engine_given = false;
  std::optional<WeightFormat> weights;   // --weights; nullopt: the checkpoint's own (make_job)
  KvDtype kv_cache = KvDtype::auto_;
  bool kv_cache_given = false;
  std::optional<std::uint32_t> context;  // --context as given
  std::uint32_t batch = 1;
  bool batch_given = false;  // --batch or --micro-batch
  std::uint32_t grad_accum = 1;  // --grad-accum: micro-batches per optimizer step (training)
  bool grad_accum_given = false;
  bool pack = false;             // --pack: sequences packed to the context (training)
  bool compile = false;          // --compile: torch.compile the training step
  Optimizer optimizer = Optimizer::adamw;
  bool optimizer_given = false;
  std::optional<bool> grad_checkpointing;  // --grad-checkpointing / --no-grad-checkpointing
  std::uint32_t lora_rank = 16;
  bool lora_rank_given = false;
  std::uint32_t gpu_util_permille = 900;
  bool gpu_util_given = false;
  PlanRequest request;  // gpus, shard, hours, provider, spot, max price, card (ids)
  std::string card_display;  // the --card as found, for messages
  bool offline = false;
  std::string gguf;          // --gguf FILE|URL: size that GGUF file
  std::uint32_t engine_version = 0;  // --engine-version (sizing/engine_release.hpp); 0 = the current release
};

// The engine loads that weight format and the task can train on it (GGUF types under
// llama.cpp/ollama/vllm, 16-bit for full training, 4-bit for qlora); Errc::usage.
// The engine can run the task (training engines train, serving engines serve); Errc::usage.
[[nodiscard]] Result<void> check_task_engine(Task task, Engine engine);
[[nodiscard]] Result<void> check_weights(Task task, Engine engine, WeightFormat weights);
// The GPUs and servers the engine's release trains on: Unsloth before 2025.3.7 on one GPU, and
// DDP on one server from then on (docs/hardware.md "Unsloth"); Errc::refused naming the release.
[[nodiscard]] Result<void> check_engine_scale(Engine engine, std::uint32_t engine_version,
                                              std::optional<std::uint32_t> gpus, std::optional<std::uint32_t> nodes);

// A value plan chose for the user (cli.md plan v2 `job.defaults`), with the reason and source.
struct JobDefault {
  enum class Kind { text, number, boolean };
  std::string key;    // "weights", "grad_checkpointing", "context", …
  std::string value;  // "mxfp4", "true", "4096"
  std::string why;
  Kind kind = Kind::text;
};

// The job for `model` with every default of docs/sizing.md "Defaults" applied: the weights in the
// checkpoint's own format (QLoRA: NF4 with double quantization; GGUF engines: ollama's tag
// quantization or Q4_K_M), gradient checkpointing on for LoRA/QLoRA, context 4096 capped at the
// model's maximum. An explicit --context above the maximum, or --weights the task cannot train
// on, is a usage error. `defaults` (when given) receives every value chosen for the user.
// Defined in plan_job.cpp.
[[nodiscard]] Result<JobSpec> make_job(const PlanOptions& opts, const ModelArch& model,
                                       std::vector<JobDefault>* defaults = nullptr);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// Internal to the recipe search (planner/recipe*.cpp): the discrete levers, the changes a recipe
// lists, and the engine flags that make them.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "planner/recipe.hpp"

namespace gpurent::recipe_detail {

// One combination of the discrete levers and its invasiveness points.
struct Choice {
  Task task = Task::infer;
  WeightFormat weights = WeightFormat::bf16;
  bool grad_checkpointing = false;
  Optimizer optimizer = Optimizer::adamw;
  KvDtype kv_cache = KvDtype::auto_;
  std::uint32_t gpus = 1;
  bool offload_optimizer = false;
  bool embeddings_16bit = false;
  bool activation_offload = false;
  std::uint32_t points = 0;
};

// Points (docs/sizing.md "Recipe"): gradient checkpointing 1, batch -> accumulation 1, KV cache
// in 8 bits 1, QLoRA's embeddings in 16 bits 1, fewer sequences 2, 8-bit optimizer 2, activation
// offload 3, 8-bit weights 2, LoRA -> QLoRA 3, 4-bit
// weights 3-4, full -> LoRA 4, context kept >= 1/2: 5 (>= 1/4: 7, less: 9), 3-bit weights 5,
// 2-bit 7-8, offload 8, more GPUs 2 per doubling.
[[nodiscard]] std::vector<Choice> choices(const JobSpec& job, std::span<const std::uint32_t> gpu_counts);
[[nodiscard]] JobSpec apply(const JobSpec& job, const Choice& c);

// What changed from `asked` to `done`, in a fixed order, each with the bytes it saves per GPU.
[[nodiscard]] std::vector<RecipeChange> describe(const JobSpec& asked, const JobSpec& done);
// The flags of those changes for the job's engine (one entry, keyed by engine name).
[[nodiscard]] std::map<std::string, std::string> flags(const JobSpec& asked, const JobSpec& done);

// Whole layers of a GGUF model that `offload_bytes` moves to the CPU.
[[nodiscard]] std::uint32_t offloaded_layers(const JobSpec& job);

}  // namespace gpurent::recipe_detail

// SPDX-License-Identifier: MIT
#pragma once
// When a job does not fit as asked: the cheapest, least invasive combination of the fixes that
// fits a card (docs/sizing.md "Recipe"). Every lever has a cost in "invasiveness" points; the
// search walks the combinations in order of their points and returns the first that fits, or,
// when none does, the combination that comes nearest.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "sizing/job.hpp"

namespace gpurent {

struct RecipeChange {
  std::string id;    // "qlora", "grad-checkpointing", "quantize-weights", "reduce-batch", "more-gpus", …
  std::string from;  // "lora bf16"
  std::string to;    // "qlora nf4"
  Bytes saves;       // per GPU, applied in the listed order (offload: bytes moved off the GPU)
};

struct Recipe {
  bool fits = false;
  JobSpec job;             // the asked job with every change applied (layout resolved)
  MemoryEstimate memory;   // estimate(job), offload included
  Bytes limit;             // fit_limit_for(job, card)
  std::vector<RecipeChange> changes;
  std::map<std::string, std::string> flags;  // the job's engine -> the flags the changes add
  std::uint32_t points = 0;                  // invasiveness (lower is better)
};

// The best recipe for `job` on a card whose CUDA-reported memory is `card_usable`, with any GPU
// count of `gpu_counts` that is >= job.gpus (empty: job.gpus only). Changes never leave the
// task's family (inference stays inference; LoRA never becomes full fine-tuning).
[[nodiscard]] Recipe find_recipe(const JobSpec& job, Bytes card_usable, std::span<const std::uint32_t> gpu_counts);

}  // namespace gpurent

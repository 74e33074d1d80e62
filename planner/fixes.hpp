// SPDX-License-Identifier: MIT
#pragma once
// What to change when a job does not fit: the seeds' fixes, in their order, each recomputed by
// the same estimate and given with the flags of every engine it applies to.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "sizing/job.hpp"

namespace gpurent {

struct Fix {
  std::string id;           // "reduce-batch", "reduce-context", "kv-cache-fp8", "more-gpus", …
  std::string description;  // names the concrete new value ("context 8192 (was 131072)")
  Bytes saves;              // estimate(job).total() - estimate(modified).total(), per GPU; offload: bytes moved off the GPU
  bool fits_alone = false;  // this fix alone brings the job under the limit
  std::map<std::string, std::string> flags;  // engine name ("vllm", "llama.cpp", …) -> flags
  JobSpec modified;         // the job after the fix (offload fixes: unchanged)
};

// Empty when the job fits `limit_per_gpu`. Otherwise, in this order, the fixes that apply to the
// task/engine and save memory: reduce-batch, reduce-context, mixed-precision,
// grad-checkpointing, quantize-weights, 8bit-optimizer, embeddings-16bit, activation-offload,
// lora, qlora, kv-cache-fp8 /
// kv-cache-q8_0, fewer-sequences, cpu-offload, moe-expert-offload, more-gpus. more-gpus tries
// only `gpu_counts` (what is sold for the card; empty: 1..8) on layouts the engine can run.
[[nodiscard]] std::vector<Fix> suggest_fixes(const JobSpec& job, Bytes limit_per_gpu,
                                             std::span<const std::uint32_t> gpu_counts = {});

}  // namespace gpurent

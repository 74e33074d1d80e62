// SPDX-License-Identifier: MIT
#pragma once
// How the estimate uses a checkpoint's own files (ModelArch::checkpoint): the one seam between the
// headers and estimate_weights. A job that loads the checkpoint in its stored format gets the
// stored bytes exactly; a job that converts it (bf16 checkpoint loaded as nf4, a fp32 master copy
// for training, another GGUF type) gets the exact parameters of each part times the format's bits.
#include <cstdint>
#include <optional>

#include "sizing/job.hpp"
#include "sizing/precision.hpp"

namespace gpurent {

// Two formats store the same bytes for the same tensors (bf16 and fp16; a GPTQ/AWQ/compressed
// int4 checkpoint under --weights int4; GGUF F16 and 16-bit).
[[nodiscard]] bool formats_match(WeightFormat job, WeightFormat checkpoint) noexcept;

// The format a job holds its weights in: --weights, except full fine-tuning, which updates a
// 16-bit copy (fp32 master weights under transformers or with fp32 weights).
[[nodiscard]] WeightFormat weights_in_memory(const JobSpec& job) noexcept;

// Whether a job holding its weights as `in_memory` loads the checkpoint's tensors as stored.
[[nodiscard]] bool loads_as_stored(const CheckpointWeights& ck, WeightFormat in_memory) noexcept;

struct CheckpointBytes {
  std::uint64_t total = 0;      // all weights
  std::uint64_t experts = 0;    // routed experts
  std::uint64_t embedding = 0;  // embedding and lm_head
  std::uint64_t host_embedding = 0;  // a GGUF file's token_embd that llama.cpp keeps in host memory
  bool exact = false;           // every part as stored
};
// The weights of `job.model.checkpoint` held as `in_memory` with `bits` per part (what
// estimate_weights computed for the job); nullopt when the model has no checkpoint.
[[nodiscard]] std::optional<CheckpointBytes> checkpoint_bytes(const JobSpec& job, WeightFormat in_memory,
                                                              const WeightBits& bits) noexcept;

// The trained LoRA parameters for job.lora_rank when the model comes with an adapter
// (ModelArch::adapter: its parameter count scaled from its own rank); nullopt otherwise.
[[nodiscard]] std::optional<std::uint64_t> checkpoint_adapter_params(const JobSpec& job) noexcept;
// The adapter's stored bytes when the job serves it (inference tasks); 0 otherwise.
[[nodiscard]] std::uint64_t serving_adapter_bytes(const JobSpec& job) noexcept;

}  // namespace gpurent

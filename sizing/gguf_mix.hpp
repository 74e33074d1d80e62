// SPDX-License-Identifier: MIT
#pragma once
// The tensor types llama.cpp's quantizer gives each tensor of a model for a GGUF file type (its
// `llama_tensor_get_type` rules, restated: docs/sizing.md §1 "GGUF K-quant mixes"), and the
// bytes that makes, for models sized without their GGUF file. Pure.
#include <cstdint>
#include <optional>

#include "sizing/job.hpp"

namespace gpurent {

struct GgufMix {
  std::uint64_t embedding = 0;  // token_embd and output
  std::uint64_t token_embd = 0; // of which token_embd (llama.cpp keeps it in host memory unless tied)
  std::uint64_t linear = 0;     // attention, dense MLPs, shared experts
  std::uint64_t experts = 0;    // routed experts (ffn_*_exps)
  std::uint64_t other = 0;      // norms, biases, routers (F32) and tensors outside the text model (F16)
  std::uint64_t raised = 0;     // tensors the rules give a larger type than the file type's base type
  std::uint64_t fallbacks = 0;  // tensors whose row length forced llama.cpp's fallback type
  [[nodiscard]] std::uint64_t total() const noexcept { return embedding + linear + experts + other; }
};

// The tensors of `model`'s GGUF file of type `f` as llama.cpp quantizes them from a 16-bit
// conversion (no --tensor-type overrides; an importance matrix only for IQ2_XXS/IQ3_XXS, which
// require one). nullopt when `f` is not a GGUF type or the model has no architecture (--params).
[[nodiscard]] std::optional<GgufMix> gguf_mix(const ModelArch& model, WeightFormat f);

}  // namespace gpurent

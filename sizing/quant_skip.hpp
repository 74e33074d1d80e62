// SPDX-License-Identifier: MIT
#pragma once
// The decoder linear layers a quantized checkpoint keeps in 16 bits: config.json
// quantization_config `modules_to_not_convert` (fbgemm_fp8, fp8, AWQ, GPTQ, bitsandbytes),
// `ignore` (compressed-tensors) or `ignored_layers` (vLLM-style), matched against the Hugging Face
// module names of the architecture (docs/sizing.md §1 "Modules kept in 16 bits"). Pure.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sizing/model.hpp"

namespace gpurent {

struct UnquantizedLinears {
  std::uint64_t linear = 0;   // weights of attention, dense MLP and shared-expert layers kept 16-bit
  std::uint64_t experts = 0;  // weights of routed experts kept 16-bit
  std::uint32_t unmatched = 0;  // entries that name nothing of the decoder (lm_head, vision modules, typos)
  std::uint32_t unsupported = 0;  // "re:" patterns using regex syntax this matcher does not read
};

// Whether `entry` names the module `name` (or a module above it): a plain entry matches when it
// is the name, or a run of the name's dot-separated parts ("model.layers.0" matches
// "model.layers.0.mlp.up_proj", "self_attn" any attention projection, "mlp.gate" the router but
// not "mlp.gate_proj"); a "re:" entry is a regular expression matched from the start of the name
// (compressed-tensors), supporting literals, '.', '\d', '\w', escaped characters, '*', '+', '?',
// '^' and '$'. `supported` is false for other regex syntax (groups, classes, alternation).
[[nodiscard]] bool module_matches(std::string_view entry, std::string_view name, bool* supported = nullptr) noexcept;

// The decoder linear weights of `model` that the entries keep out of quantization, counted over
// every layer (and expert) by the module names transformers gives them
// (model.layers.N.self_attn.q_proj, model.layers.N.mlp.gate_proj, model.layers.N.mlp.experts.E.
// down_proj, model.layers.N.mlp.shared_experts.up_proj; Mixtral's block_sparse_moe.experts.E.w1).
[[nodiscard]] UnquantizedLinears unquantized_linears(const ModelArch& model, std::span<const std::string> entries);

}  // namespace gpurent

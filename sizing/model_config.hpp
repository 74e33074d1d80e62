// SPDX-License-Identifier: MIT
#pragma once
// Reads a Hugging Face config.json into a ModelArch (pure: text in, value out).
#include <cstdint>
#include <string_view>

#include "common/result.hpp"
#include "sizing/model.hpp"

namespace gpurent {

// Larger inputs are refused before parsing (real config.json files are a few KiB).
inline constexpr std::uint64_t k_max_model_config_bytes = 16ULL * 1024 * 1024;

// Supports the usual decoder-only architectures by model_type: llama, mistral, mixtral, qwen2,
// qwen2_moe, qwen3, qwen3_moe, gemma, gemma2, gemma3, gemma3_text, phi3, phi, deepseek_v2,
// deepseek_v3, gpt_oss; multimodal configs are read through their `text_config`.
// `params` is derived from the architecture with count_params(); `source` is stored as given.
// Any problem (malformed JSON, missing key, wrong type, zero/negative/absurd size, unknown
// architecture, oversized input) is one Errc::invalid_input error naming the key; never throws.
[[nodiscard]] Result<ModelArch> parse_model_config(std::string_view json_text, std::string_view source);

// The number of bytes per parameter of a torch_dtype ("bfloat16" -> 2), 0 when unknown.
[[nodiscard]] std::uint32_t dtype_bytes(std::string_view torch_dtype) noexcept;

}  // namespace gpurent

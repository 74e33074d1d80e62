// SPDX-License-Identifier: MIT
#pragma once
// The format a checkpoint stores its weights in (config.json `quantization_config`), which is the
// format `plan` sizes by default: a FP8 checkpoint is served in FP8, gpt-oss's MXFP4 experts stay
// MXFP4. Sources: docs/sizing.md "Defaults".
#include <cstdint>
#include <optional>
#include <string_view>

#include "sizing/job.hpp"
#include "sizing/model.hpp"

namespace gpurent {

// fp8 / fbgemm_fp8 -> fp8; mxfp4 -> mxfp4; gptq -> gptq (8 bits: int8); awq -> awq;
// bitsandbytes -> nf4 (8 bits: int8); compressed-tensors -> fp8 (float, 8 bits), int8, int4
// (int, 4 bits) or nf4 (float, 4 bits: NVFP4's 4.5 bits). nullopt for a method gpurent does not
// size (hqq, aqlm, …) or "" (a 16-bit checkpoint).
[[nodiscard]] std::optional<WeightFormat> quant_method_format(std::string_view method, std::uint32_t bits,
                                                              bool is_float) noexcept;

// The checkpoint's own format: quant_method_format of the model, else bf16.
[[nodiscard]] WeightFormat checkpoint_format(const ModelArch& model) noexcept;

// True when the job runs the weights in the format the checkpoint is published in (no
// quantization flag needed: vLLM and transformers read it from config.json).
[[nodiscard]] bool native_weights(const JobSpec& job) noexcept;

// The catalogue entry as the checkpoint `hf_id` publishes it: one of m.quantized carries its
// own quant_method; any other id keeps m's.
[[nodiscard]] ModelArch for_checkpoint(const ModelArch& model, std::string_view hf_id);

}  // namespace gpurent

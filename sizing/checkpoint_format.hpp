// SPDX-License-Identifier: MIT
#pragma once
// The format a checkpoint stores its weights in, which is the format `plan` sizes by default: a
// FP8 checkpoint is served in FP8, gpt-oss's MXFP4 experts stay MXFP4, a GPTQ repack loads as
// GPTQ. Two sources, in this order: the checkpoint's own files (ModelArch::checkpoint, read from
// safetensors/GGUF headers: the truth of what is stored), then config.json `quantization_config`
// (ModelArch::quant_method, which the catalogue records for its built-in models, whose headers are
// never read). Sources: docs/sizing.md "Defaults".
#include <cstdint>
#include <optional>
#include <string>
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

// The checkpoint's own format: the format its files' headers show (model.checkpoint->format),
// else quant_method_format of config.json's quantization_config, else bf16.
[[nodiscard]] WeightFormat checkpoint_format(const ModelArch& model) noexcept;

// Where checkpoint_format came from, for the stated defaults: "the safetensors header of
// model.safetensors: GPTQ int4 (group 128)", "config.json quantization_config: fp8", or "" when
// nothing says the checkpoint is other than 16-bit.
[[nodiscard]] std::string checkpoint_format_source(const ModelArch& model);

// True when the checkpoint is published quantized (its headers or its quantization_config say
// so) and the job runs its weights in that format: no quantization flag is needed, vLLM and
// transformers read it from the checkpoint.
[[nodiscard]] bool native_weights(const JobSpec& job) noexcept;

// The catalogue entry as the checkpoint `hf_id` publishes it: one of m.quantized carries its
// own quant_method; any other id keeps m's.
[[nodiscard]] ModelArch for_checkpoint(const ModelArch& model, std::string_view hf_id);

}  // namespace gpurent

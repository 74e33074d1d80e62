// SPDX-License-Identifier: MIT
#pragma once
// MXFP4 routed experts as the serving engines hold them (gpt-oss): vLLM and SGLang pad the
// experts' intermediate and hidden sizes up to what their MoE kernels need before loading the
// checkpoint, so the weights in memory exceed the stored 17 bytes per 32 weights (docs/sizing.md
// §1 "MXFP4 experts"). Pure.
#include <cstdint>
#include <optional>
#include <string_view>

#include "sizing/job.hpp"

namespace gpurent {

// vLLM's Mxfp4Backend choices (vllm/model_executor/layers/quantization/mxfp4.py) and SGLang's.
enum class Mxfp4Backend {
  stored,             // no padding: the checkpoint's layout (transformers, llama.cpp)
  vllm_marlin,        // CC 8.x and 12.x, and Hopper without triton_kernels: n % 256, k % 128
  vllm_triton,        // CC 9.0 / 10.x with triton_kernels: the intermediate size to 64
  vllm_flashinfer_sm90,   // CC 9.0 with VLLM_USE_FLASHINFER_MOE_MXFP4_BF16: both to 128
  vllm_flashinfer_sm100,  // CC 10.x with FlashInfer (the default there): both to 256
  sglang,             // SGLang's Mxfp4MoEMethod on CUDA: the intermediate size to 64
  // TensorRT-LLM's MXFP4 MoE (fused_moe/quantization.py): weight_alignment 128 on both sizes, as
  // its CUTLASS backend held gpt-oss-120b on a GB10 (63.52 GiB, tests/data/trtllm/memory_logs.json);
  // its Hopper (Triton) and SM100 (TRTLLM-Gen, hidden to 512) backends are sized the same, unmeasured.
  trtllm,
};
[[nodiscard]] std::string_view to_string(Mxfp4Backend b) noexcept;

// The backend an engine picks for MXFP4 experts on a card of compute capability `cc` (major x 10
// + minor). Without a card (nullopt) vLLM is taken to run Marlin: the backend of every card below
// CC 9.0 (A100, A10, L4, L40S, RTX 3090/4090, A6000) and of CC 12.x, and the widest padding at
// tensor parallel 2 and more.
[[nodiscard]] Mxfp4Backend mxfp4_backend(Engine engine, std::optional<std::uint32_t> cc) noexcept;

struct Mxfp4Padding {
  std::uint32_t intermediate = 1;  // each rank's expert intermediate size is rounded up to this
  std::uint32_t hidden = 1;        // the experts' hidden size is rounded up to this
};
[[nodiscard]] Mxfp4Padding mxfp4_padding(Mxfp4Backend b) noexcept;

// The bytes of every routed expert of `model` held by one of `tp` tensor-parallel ranks: the
// fused gate/up and the down projections in MXFP4 (16 B of 4-bit values + 1 B of e8m0 scale per
// 32 weights) and their bf16 biases, at the padded sizes. 0 when the model has no gated experts.
[[nodiscard]] std::uint64_t mxfp4_expert_bytes_per_rank(const ModelArch& model, std::uint32_t tp, Mxfp4Padding pad) noexcept;

}  // namespace gpurent

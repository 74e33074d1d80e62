// SPDX-License-Identifier: MIT
#include "sizing/mxfp4_layout.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;

U round_up(U v, U to) noexcept { return to <= 1 ? v : (v + to - 1) / to * to; }

}  // namespace

std::string_view to_string(Mxfp4Backend b) noexcept
{
  switch (b) {
  case Mxfp4Backend::stored: return "as stored";
  case Mxfp4Backend::vllm_marlin: return "vLLM Marlin";
  case Mxfp4Backend::vllm_triton: return "vLLM Triton";
  case Mxfp4Backend::vllm_flashinfer_sm90: return "vLLM FlashInfer SM90";
  case Mxfp4Backend::vllm_flashinfer_sm100: return "vLLM FlashInfer SM100";
  case Mxfp4Backend::sglang: return "SGLang";
  case Mxfp4Backend::trtllm: return "TensorRT-LLM";
  }
  return "as stored";
}

Mxfp4Backend mxfp4_backend(Engine engine, std::optional<std::uint32_t> cc) noexcept
{
  if (engine == Engine::sglang) {
    return Mxfp4Backend::sglang;
  }
  if (engine == Engine::tensorrt_llm) {
    return Mxfp4Backend::trtllm;
  }
  if (engine != Engine::vllm) {
    return Mxfp4Backend::stored;
  }
  if (!cc) {
    return Mxfp4Backend::vllm_marlin;
  }
  // get_mxfp4_backend: FlashInfer on the SM100 family; triton_kernels on 9.0 <= CC < 11.0;
  // Marlin everywhere else (Ampere, Ada, consumer Blackwell sm_120).
  if (*cc >= 100 && *cc < 110) {
    return Mxfp4Backend::vllm_flashinfer_sm100;
  }
  if (*cc >= 90 && *cc < 110) {
    return Mxfp4Backend::vllm_triton;
  }
  return Mxfp4Backend::vllm_marlin;
}

Mxfp4Padding mxfp4_padding(Mxfp4Backend b) noexcept
{
  switch (b) {
  case Mxfp4Backend::vllm_marlin: return {128, 256};  // "n % 256 == 0 and k % 128 == 0"
  case Mxfp4Backend::vllm_triton: return {64, 1};
  case Mxfp4Backend::vllm_flashinfer_sm90: return {128, 128};
  case Mxfp4Backend::vllm_flashinfer_sm100: return {256, 256};
  case Mxfp4Backend::sglang: return {64, 1};
  case Mxfp4Backend::trtllm: return {128, 128};
  case Mxfp4Backend::stored: break;
  }
  return {};
}

std::uint64_t mxfp4_expert_bytes_per_rank(const ModelArch& m, std::uint32_t tp, Mxfp4Padding pad) noexcept
{
  if (!m.is_moe() || !m.gated_mlp || tp == 0) {
    return 0;
  }
  const U width = m.moe_intermediate > 0 ? m.moe_intermediate : m.intermediate;
  const U inter = round_up(width / tp, pad.intermediate);
  const U hidden = round_up(m.hidden, pad.hidden);
  const U moe_layers = m.dense_layers < m.layers ? m.layers - m.dense_layers : m.layers;
  // w13: [2 x inter, hidden / 2] uint8 + [2 x inter, hidden / 32] scales + [2 x inter] bf16 bias;
  // w2: [hidden, inter / 2] + [hidden, inter / 32] + [hidden] bf16 bias (mxfp4.py create_weights).
  const U w13 = 2 * inter * (hidden / 2 + hidden / 32) + (m.mlp_bias ? 2 * inter * 2 : 0);
  const U w2 = hidden * (inter / 2 + inter / 32) + (m.mlp_bias ? hidden * 2 : 0);
  return (w13 + w2) * m.experts * moe_layers;
}

}  // namespace gpurent

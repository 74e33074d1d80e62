// SPDX-License-Identifier: MIT
// The speed model's constants, fitted by `build/speed_fit` (tests/tools/speed_fit.cpp) on the fit
// half of tests/data/speed/measurements.json, and its spread on the check half (docs/speed.md,
// "Constants" and "Measured spread"). Refit and copy both when the data or the formulas change;
// tests/providers/test_speed_measured.cpp fails when the spread here is not the measured one.
#include "planner/speed.hpp"

namespace gpurent {

const SpeedConstants& speed_constants(SpeedEngine e) noexcept
{
  // llama.cpp: 22 fit cases (decode and prefill, llama-bench). Its one-token kernels reach 0.95 of a
  // GDDR card's bandwidth but 0.65 of a data-centre card's HBM; its prompt's matrix multiplications
  // (cuBLAS for 16-bit weights, its own MMQ kernels for quantized ones from b3216, cuBLAS after a
  // dequantization before it) top out near 150 TFLOPS on every card measured.
  static const SpeedConstants llama_cpp{.bandwidth = 0.95, .bandwidth_hbm = 0.65, .layer_s = 100e-6, .step_s = 0,
                                        .compute = 0.98, .compute_cap_tflops = 150, .compute_cap_f16_tflops = 0,
                                        .allreduce_s = 10e-6, .mfu = 0, .mfu_fp8 = 0};
  // vLLM: 31 fit cases (decode, prefill, serving); the HBM fraction fitted no better than the GDDR one.
  static const SpeedConstants vllm{.bandwidth = 0.95, .layer_s = 52e-6, .step_s = 2750e-6, .compute = 0.74,
                                   .compute_cap_tflops = 0, .allreduce_s = 10e-6, .mfu = 0, .mfu_fp8 = 0};
  // TensorRT-LLM (--engine trtllm): 11 fit cases (its performance tables, GPUStack).
  // It has no decode cases: its bandwidth and per-layer cost stay at the fitter's start (0.80, 20 us).
  // Its all-reduce cost (332 us) carries every tensor-parallel overhead of its static-batch runs.
  static const SpeedConstants tensorrt_llm{.bandwidth = 0.80, .layer_s = 20e-6, .step_s = 0, .compute = 0.66,
                                           .compute_cap_tflops = 0, .allreduce_s = 332e-6, .mfu = 0, .mfu_fp8 = 0};
  // Trainers (transformers/TRL, torchtune, DeepSpeed; fitted on llm-foundry, NeMo and Megatron-Bridge):
  // 19 fit cases. The peak utilisation with the tokens per step that reach half of it (llm-foundry's
  // runs of one model at several micro-batches among them: docs/speed.md "Micro-batch and packing").
  // 16-bit: 0.70 of an Ampere/Ada card's peak, 0.47 of a Hopper's ("Card class"); FP8 (H100 only) 0.47.
  static const SpeedConstants trainer{.bandwidth = 0.95, .layer_s = 0, .step_s = 0, .compute = 0,
                                      .compute_cap_tflops = 0, .allreduce_s = 0, .mfu = 0.70, .mfu_sm90 = 0.47,
                                      .mfu_fp8 = 0.47, .train_half_tokens = 700};
  switch (e) {
  case SpeedEngine::llama_cpp: return llama_cpp;
  case SpeedEngine::tensorrt_llm: return tensorrt_llm;
  case SpeedEngine::trainer: return trainer;
  // SGLang (4 measurements, all kept to check) and transformers' own generate (none collected)
  // run on vLLM's constants.
  case SpeedEngine::vllm:
  case SpeedEngine::sglang:
  case SpeedEngine::transformers: return vllm;
  }
  return vllm;
}

std::uint32_t speed_range_pct(SpeedEngine e, SpeedKind k) noexcept
{
  // An engine's own spread where its check half holds at least k_min_check_cases cases; else
  // k_range_unmeasured, never another engine's (SGLang: 2 decode and 2 serving cases; TensorRT-LLM
  // 2 prefill and no decode; vLLM 3 prefill; transformers none).
  switch (k) {
  case SpeedKind::decode:
    return e == SpeedEngine::llama_cpp ? 10 : e == SpeedEngine::vllm ? 23 : k_range_unmeasured;
  case SpeedKind::prefill: return e == SpeedEngine::llama_cpp ? 19 : k_range_unmeasured;
  case SpeedKind::serve:
    return e == SpeedEngine::vllm ? 24 : e == SpeedEngine::tensorrt_llm ? 10 : k_range_unmeasured;
  case SpeedKind::train: return e == SpeedEngine::trainer ? 21 : k_range_unmeasured;
  }
  return k_range_unmeasured;
}

}  // namespace gpurent

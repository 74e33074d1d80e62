// SPDX-License-Identifier: MIT
// The speed model's constants, fitted by `build/speed_fit` (tests/tools/speed_fit.cpp) on the fit
// half of tests/data/speed/measurements.json, and its spread on the check half (docs/speed.md,
// "Constants" and "Measured spread"). Refit and copy both when the data or the formulas change;
// tests/providers/test_speed_measured.cpp fails when the spread here is not the measured one.
#include "planner/speed.hpp"

namespace gpurent {

const SpeedConstants& speed_constants(SpeedEngine e) noexcept
{
  // llama.cpp: 21 fit cases (decode and prefill, llama-bench); its kernels top out near 100 TFLOPS
  // on every card measured (A100, H100, L40S, RTX 4090).
  static const SpeedConstants llama_cpp{.bandwidth = 0.95, .layer_s = 104e-6, .step_s = 0, .compute = 0.98,
                                        .compute_cap_tflops = 100, .allreduce_s = 10e-6, .mfu = 0, .mfu_fp8 = 0};
  // vLLM: 28 fit cases (decode, prefill, serving).
  static const SpeedConstants vllm{.bandwidth = 0.95, .layer_s = 52e-6, .step_s = 2750e-6, .compute = 0.74,
                                   .compute_cap_tflops = 0, .allreduce_s = 10e-6, .mfu = 0, .mfu_fp8 = 0};
  // TensorRT-LLM: 12 fit cases (its performance tables); not a plan engine.
  // It has no decode cases: its bandwidth and per-layer cost stay at the fitter's start (0.80, 20 us).
  static const SpeedConstants tensorrt_llm{.bandwidth = 0.80, .layer_s = 20e-6, .step_s = 0, .compute = 0.66,
                                           .compute_cap_tflops = 0, .allreduce_s = 100e-6, .mfu = 0, .mfu_fp8 = 0};
  // Trainers (transformers/TRL, torchtune, DeepSpeed; fitted on llm-foundry, NeMo and Megatron-Bridge):
  // 19 fit cases. The peak utilisation with the tokens per step that reach half of it (llm-foundry's
  // runs of one model at several micro-batches among them: docs/speed.md "Micro-batch and packing").
  static const SpeedConstants trainer{.bandwidth = 0.95, .layer_s = 0, .step_s = 0, .compute = 0,
                                      .compute_cap_tflops = 0, .allreduce_s = 0, .mfu = 0.61, .mfu_fp8 = 0.53,
                                      .train_half_tokens = 1300};
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
  // An engine's own spread where its check half holds at least 3 cases, else the kind's spread
  // over every engine.
  switch (k) {
  case SpeedKind::decode:
    return e == SpeedEngine::llama_cpp ? 35 : e == SpeedEngine::vllm ? 23 : 35;
  case SpeedKind::prefill:
    return e == SpeedEngine::llama_cpp ? 33 : e == SpeedEngine::vllm ? 30 : 33;
  case SpeedKind::serve:
    return e == SpeedEngine::vllm ? 44 : 42;  // TensorRT-LLM's own 42 is also the spread over all engines
  case SpeedKind::train: return 31;
  }
  return 100;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// The names of the report's enumerations, as --json prints them.
#include "oom/parse.hpp"

namespace gpurent {

std::string_view to_string(OomEngine e) noexcept
{
  switch (e) {
  case OomEngine::pytorch: return "pytorch";
  case OomEngine::pytorch_rocm: return "pytorch-rocm";
  case OomEngine::pytorch_mps: return "pytorch-mps";
  case OomEngine::cuda_runtime: return "cuda-runtime";
  case OomEngine::hip_runtime: return "hip-runtime";
  case OomEngine::vllm: return "vllm";
  case OomEngine::sglang: return "sglang";
  case OomEngine::tgi: return "tgi";
  case OomEngine::llama_cpp: return "llama.cpp";
  case OomEngine::ollama: return "ollama";
  case OomEngine::jax: return "jax";
  case OomEngine::tensorflow: return "tensorflow";
  case OomEngine::nccl: return "nccl";
  case OomEngine::unsloth: return "unsloth";
  case OomEngine::tensorrt_llm: return "tensorrt-llm";
  }
  return "pytorch";
}

std::string_view to_string(OomFormat f) noexcept
{
  switch (f) {
  case OomFormat::unknown: return "unknown";
  case OomFormat::pytorch_2_2: return "pytorch>=2.2";
  case OomFormat::pytorch_2_0: return "pytorch-2.0";
  case OomFormat::pytorch_1x: return "pytorch-1.x";
  case OomFormat::pytorch_legacy: return "pytorch-legacy";
  case OomFormat::pytorch_async: return "pytorch-async";
  case OomFormat::pytorch_cpu: return "pytorch-cpu";
  case OomFormat::mps: return "pytorch-mps";
  case OomFormat::cuda_runtime: return "cuda-runtime";
  case OomFormat::hip_runtime: return "hip-runtime";
  case OomFormat::vllm: return "vllm";
  case OomFormat::sglang: return "sglang";
  case OomFormat::tgi: return "tgi";
  case OomFormat::llama_cpp: return "llama.cpp";
  case OomFormat::ollama: return "ollama";
  case OomFormat::xla: return "xla";
  case OomFormat::xla_compile: return "xla-compile";
  case OomFormat::tensorflow: return "tensorflow";
  case OomFormat::nccl: return "nccl";
  case OomFormat::unsloth_studio: return "unsloth-studio";
  case OomFormat::trtllm_executor: return "trtllm-executor";
  case OomFormat::trtllm_kv_blocks: return "trtllm-kv-blocks";
  }
  return "unknown";
}

std::string_view to_string(OomMemory m) noexcept
{
  switch (m) {
  case OomMemory::device: return "gpu";
  case OomMemory::host: return "host";
  case OomMemory::unified: return "unified";
  }
  return "gpu";
}

std::string_view to_string(OomContext c) noexcept
{
  switch (c) {
  case OomContext::none: return "none";
  case OomContext::vllm: return "vllm";
  case OomContext::sglang: return "sglang";
  case OomContext::tgi: return "tgi";
  case OomContext::trainer: return "trainer";
  case OomContext::diffusion: return "diffusion";
  case OomContext::unsloth: return "unsloth";
  case OomContext::tensorrt_llm: return "tensorrt-llm";
  }
  return "none";
}

std::string_view to_string(OomStage s) noexcept
{
  switch (s) {
  case OomStage::unknown: return "unknown";
  case OomStage::weights: return "weights";
  case OomStage::kv_cache: return "kv_cache";
  case OomStage::compute: return "compute";
  }
  return "unknown";
}

bool oom_on_rocm(const OomReport& r) noexcept { return r.rocm; }

}  // namespace gpurent

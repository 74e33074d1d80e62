// SPDX-License-Identifier: MIT
#pragma once
// What an engine's release changes in the memory it reserves (docs/sizing.md §5 "Which release"):
// the release a job names (`--engine-version`), vLLM's V0 and V1 engines, and the defaults its
// profiling pass runs with. Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sizing/job.hpp"

namespace gpurent {

// major x 1,000,000 + minor x 1,000 + patch.
[[nodiscard]] constexpr std::uint32_t engine_release(std::uint32_t major, std::uint32_t minor, std::uint32_t patch = 0) noexcept
{
  return major * 1'000'000 + minor * 1'000 + patch;
}
// The vLLM release gpurent's rules follow when a job names none (docs/hardware.md).
inline constexpr std::uint32_t k_vllm_current_release = engine_release(0, 30, 0);
// The Unsloth release gpurent's Unsloth plans follow (pip `unsloth` 2026.8.19, commit 015bdef0) and
// the first release whose trainer no longer stops on several GPUs (2025.3.7: before it, llama.py
// raised "Unsloth currently does not support multi GPU setups - but we are working on it!").
inline constexpr std::uint32_t k_unsloth_current_release = engine_release(2026, 8, 19);
inline constexpr std::uint32_t k_unsloth_first_multi_gpu = engine_release(2025, 3, 7);
// llama.cpp names its releases by build number (b2836); a JobSpec holds that number for it. Builds
// before b3216 (PR #8075, 2024-06-24: "use MMQ instead of cuBLAS by default") ran a quantized
// prompt of more than 32 (later 64) tokens on a Volta or newer GPU by dequantizing each weight
// matrix to F16 and calling cuBLAS; from it, its own kernels (MMQ, on int8 tensor cores from
// Turing) run it, except on Volta (docs/speed.md "llama.cpp's prompt path").
inline constexpr std::uint32_t k_llamacpp_first_mmq_default = 3216;
// "b2836", "2836", and llama-bench's "build 8c570c94 (2836)" -> 2836; nullopt for anything else
// (a build number of one to six digits, at least 1).
[[nodiscard]] std::optional<std::uint32_t> parse_llamacpp_build(std::string_view text) noexcept;
// --engine-version for `engine`: llama.cpp's build ("b2836"), any other engine's release ("0.10.1").
[[nodiscard]] std::optional<std::uint32_t> parse_engine_version(Engine engine, std::string_view text) noexcept;
// "b2836" for llama.cpp, else engine_release_text(); "current" for 0.
[[nodiscard]] std::string engine_version_text(Engine engine, std::uint32_t release);
// True when the job's llama.cpp dequantizes a quantized prompt's weights for cuBLAS on a card of
// compute capability `cc` (x10, e.g. 89; 0 unknown): a build before b3216 on Volta or newer, any
// build on Volta itself (no int8 tensor cores). A job that names no build runs the current one.
[[nodiscard]] bool llamacpp_dequantizes(const JobSpec& job, std::uint32_t cc) noexcept;
// vLLM made V1 its default engine in 0.8.0; older releases (or VLLM_USE_V1=0) run V0.
inline constexpr std::uint32_t k_vllm_first_v1 = engine_release(0, 8, 0);

// "0.10.1", "v0.5.5.post3", "0.9" -> the packed release; a suffix after the third number
// (".post3", "rc1", "+cu128", ".1") is ignored. nullopt for anything else (one to three numbers
// of at most three digits each, the first of at most two, or a year from 2000 for calendar-versioned
// releases such as Unsloth's "2026.8.19").
[[nodiscard]] std::optional<std::uint32_t> parse_engine_release(std::string_view text) noexcept;
// "0.10.1"; "current" for 0.
[[nodiscard]] std::string engine_release_text(std::uint32_t release);

// True when the job's vLLM runs the V0 engine (a named release before 0.8).
[[nodiscard]] bool vllm_v0(const JobSpec& job) noexcept;
// The tokens vLLM's profiling forward pass runs: --max-num-batched-tokens when given; V1: 8192 on
// cards of 70 GiB or more other than the A100, else 2048 (the OpenAI server's defaults); V0:
// chunked prefill is on only above 32,768 tokens of context (then 2048), otherwise the pass is one
// whole prompt of max(context, 2048) tokens.
[[nodiscard]] std::uint32_t vllm_profile_tokens(const JobSpec& job) noexcept;
// The sequences whose logits the profiling pass samples: --max-num-seqs when given, else 1024 on
// the large cards (V1) and 256 elsewhere.
[[nodiscard]] std::uint32_t vllm_profile_seqs(const JobSpec& job) noexcept;

}  // namespace gpurent

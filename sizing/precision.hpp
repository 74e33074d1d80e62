// SPDX-License-Identifier: MIT
#pragma once
// CLI values of a job (task, engine, weight format, KV dtype, shard, optimizer): parsers, names,
// and the storage cost of each weight format and KV dtype. Sources: docs/sizing.md §1-2.
#include <cstdint>
#include <span>
#include <string_view>

#include "common/result.hpp"
#include "sizing/job.hpp"

namespace gpurent {

// Parsers accept the spellings of cli.md, case-insensitive, surrounding spaces ignored. The
// error (Errc::usage) lists the valid values.
[[nodiscard]] Result<Task> parse_task(std::string_view s);
[[nodiscard]] Result<Engine> parse_engine(std::string_view s);        // "llama.cpp", "llamacpp", "llama-cpp"
[[nodiscard]] Result<WeightFormat> parse_weight_format(std::string_view s);  // "bf16", "Q4_K_M", "q4-k-m", "IQ4_XS"
[[nodiscard]] Result<KvDtype> parse_kv_dtype(std::string_view s);     // auto fp16 bf16 fp8 q8_0 q4_0 (fp32 too)
[[nodiscard]] Result<Shard> parse_shard(std::string_view s);
[[nodiscard]] Result<Optimizer> parse_optimizer(std::string_view s);  // "adamw-8bit" (also adamw_8bit, paged_adamw_8bit)

// Canonical names, as the JSON output and the parsers use them (parse(to_string(x)) == x).
[[nodiscard]] std::string_view to_string(Task v) noexcept;
[[nodiscard]] std::string_view to_string(Engine v) noexcept;         // "llama.cpp"
[[nodiscard]] std::string_view display_name(Engine v) noexcept;      // as its users write it: "TensorRT-LLM"
[[nodiscard]] std::string_view to_string(WeightFormat v) noexcept;   // "bf16", "Q4_K_M"
[[nodiscard]] std::string_view to_string(KvDtype v) noexcept;        // "auto", "q8_0"
[[nodiscard]] std::string_view to_string(Shard v) noexcept;
[[nodiscard]] std::string_view to_string(Optimizer v) noexcept;      // "adamw-8bit"

// Every value of each enum, for listings and property tests.
[[nodiscard]] std::span<const Task> all_tasks() noexcept;
[[nodiscard]] std::span<const Engine> all_engines() noexcept;
[[nodiscard]] std::span<const WeightFormat> all_weight_formats() noexcept;
[[nodiscard]] std::span<const KvDtype> all_kv_dtypes() noexcept;
[[nodiscard]] std::span<const Shard> all_shards() noexcept;
[[nodiscard]] std::span<const Optimizer> all_optimizers() noexcept;

[[nodiscard]] bool is_gguf(WeightFormat f) noexcept;
// Formats below 16 bits per weight.
[[nodiscard]] bool is_quantized(WeightFormat f) noexcept;
// The engine can load the job's checkpoint in a smaller format: vLLM (fp8, bitsandbytes) and
// transformers (bitsandbytes) quantize 16-bit weights as they load them; GGUF files of every type
// are made from the 16-bit original. An already quantized checkpoint (FP8, MXFP4, GPTQ, AWQ)
// loads only as it is.
[[nodiscard]] bool requantizable(const JobSpec& job) noexcept;
// GGUF file types from the largest to the smallest (what the quantize fix steps through).
[[nodiscard]] std::span<const WeightFormat> gguf_by_size() noexcept;

// How a weight format stores a model, in bits per weight x 10,000 (integers, exact to 1e-4 bit).
struct WeightBits {
  std::uint32_t linear = 160000;     // decoder linear layers (attention, dense MLP, shared experts)
  std::uint32_t experts = 160000;    // routed experts (MXFP4 quantizes only these)
  std::uint32_t embedding = 160000;  // token embedding and lm_head
  std::uint32_t other = 160000;      // norms, biases, router, vision tower
  bool whole_file = false;           // GGUF: `linear` is the file's mean bits per weight over all tensors
};
// Storage of `f` as loaded by `engine` (bitsandbytes NF4 4.5 bits; torchao NF4 under torchtune
// 4.127 bits with double quantization; GGUF file-type means measured on Llama-3.1-8B).
[[nodiscard]] WeightBits weight_bits(WeightFormat f, Engine engine) noexcept;

// KV element size in bytes per 32 elements (fp16 64, fp8 32, q8_0 34, q4_0 18). `auto` must be
// resolved first (resolve_kv_dtype); for `auto` this returns the 16-bit size.
[[nodiscard]] std::uint32_t kv_bytes_per_32(KvDtype d) noexcept;
// `auto` = the compute dtype: fp32 for fp32 weights, fp16 under llama.cpp/ollama (F16 cache),
// bf16 otherwise.
[[nodiscard]] KvDtype resolve_kv_dtype(const JobSpec& job) noexcept;

}  // namespace gpurent

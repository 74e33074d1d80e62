// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: the lexical layer of the message grammar, matched on normalised
// text (all whitespace, line breaks and log prefixes removed, so that any wrapping of a message
// matches the same), and the anchors that start a report or record context.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/units.hpp"

namespace gpurent::oom_detail {

enum class Status { ok, eof, mismatch };

// One matched placeholder of a pattern:
//   {s} a size (number and unit: bytes, B, KiB..TiB, KB..TB, K/M/G/T), at most 1 PiB
//   {z} a size that may be absurd (containers print 2^64 for "this process"): `absurd` is set
//   {i} a small integer (device, pid)       {n} a count (tokens, blocks, bytes), at most 10^12
//   {b} a byte count (an integer, at most 1 PiB)
//   {d} a decimal number without unit      {t} a TensorFlow dtype name (`value` = its size)
//   {w} a word [A-Za-z0-9_]; followed by literal text, the shortest word that text follows
//   {l} a comma-separated list of integers (a tensor shape): `value` is the product
struct Field {
  Bytes bytes;
  std::uint64_t value = 0;
  double real = 0.0;
  std::uint64_t factor = 0;  // {s}: bytes per unit of the number as printed
  std::string_view word;     // {w}, {l}: the text (valid until the scanner's text changes)
  bool absurd = false;
};

inline constexpr std::size_t k_max_fields = 6;

struct Match {
  Status status = Status::mismatch;
  std::size_t end = 0;
  std::array<Field, k_max_fields> fields{};
  std::size_t count = 0;
  std::string error;  // set (with status mismatch) when a number is invalid
};

// One placeholder read at text[pos] (oom/fields.cpp): `end` is where it stops; `then` is
// the literal text that follows it in the pattern ({w} reads the shortest word that text follows).
struct Piece {
  Status status = Status::mismatch;
  std::size_t end = 0;
  Field field;
  std::string error;
};
[[nodiscard]] Piece read_placeholder(char type, std::string_view text, std::size_t pos, bool final, std::string_view then);

// Matches `pattern` (literal text with placeholders) at text[pos]. With `final`, the end of
// `text` is the end of the input, so a partial match is a mismatch rather than eof.
[[nodiscard]] Match match_pattern(std::string_view text, std::size_t pos, std::string_view pattern, bool final);

// Looks back from `end` (exclusive) for the last `word` within `window` bytes and matches
// `pattern` (which starts with `word`) from there; ok only when the match ends exactly at `end`.
[[nodiscard]] Match match_ending_at(std::string_view text, std::size_t end, std::string_view word, std::string_view pattern,
                                    std::size_t window);

// What an anchor starts. Reports first, then context read before or after a report, then hints
// (words that tell which engine's log this is).
enum class Anchor : std::uint8_t {
  cuda_oom,          // "CUDA out of memory"
  hip_oom,           // "HIP out of memory"
  tried,             // "Tried to allocate" without the prefix
  cuda_async,        // "Allocation on device 0 would exceed allowed memory" (cudaMallocAsync)
  cpu_allocator,     // "DefaultCPUAllocator: not enough memory: you tried to allocate N bytes"
  mps,               // "MPS backend out of memory ("
  cuda_runtime,      // "CUDA error: out of memory", "cudaErrorMemoryAllocation", "cuda runtime error (2)"
  hip_runtime,       // "HIP error: out of memory", "hipErrorOutOfMemory"
  cuda_driver,       // "CUDA_ERROR_OUT_OF_MEMORY"
  vllm_len,          // "max seq len ("
  vllm_kv_needed,    // "KV cache is needed, which is larger than"
  vllm_no_kv,        // "No available memory for the cache blocks"
  vllm_free,         // "Free memory on device"
  sglang_increase,   // "Not enough memory. Please try to increase --mem-fraction-static"
  sglang_weights,    // "Loaded weights leave no GPU memory for the KV cache"
  tgi,               // "Not enough memory to handle"
  llama_malloc,      // "cudaMalloc failed: out of memory"
  llama_failed,      // "failed to allocate" (a ggml buffer, or TF's stream executor)
  llama_unable,      // "unable to allocate" (llama_model_load)
  llama_vulkan,      // "Device memory allocation of size"
  ollama_requires,   // "model requires more system memory ("
  ollama_too_large,  // "model request too large for system"
  xla_oom,           // "Out of memory while trying to allocate"
  xla_request,       // "Failed to allocate request for ...", "Failed to allocate N bytes for new constant"
  xla_tpu,           // "Ran out of memory in memory space"
  tf_oom,            // "OOM when allocating tensor"
  nccl_cuda,         // "Cuda failure" (NCCL)
  nccl_hip,          // "HIP failure" (RCCL)
  unsloth_host,      // Unsloth Studio: "Failed to load model: About N GB of this model does not fit in GPU memory"
  trtllm_executor,   // TensorRT-LLM (PyTorch backend): "Executor creation failed due to insufficient GPU memory"
  trtllm_no_blocks,  // TensorRT-LLM's KV cache manager: "Can't allocate new blocks[ for window size N]. No free blocks left."
  // Context, read around reports.
  vllm_blocks,       // "GPU blocks: n"
  sglang_load_begin, // "Load weight begin. avail mem="
  sglang_load_end,   // "avail mem=A, mem usage=W"
  llama_layers,      // "offloaded n/m layers to GPU"
  llama_ctx,         // "n_ctx = N"
  ollama_kvsize,     // "KvSize:N"
  vllm_util,         // "gpu_memory_utilization=0.9" (vLLM's config)
  sglang_fraction,   // "mem_fraction_static=0.88" (SGLang's server args)
  tgi_prefill,       // "max_batch_prefill_tokens: 4096" (TGI's arguments)
  nccl_size,         // "Failed to CUDA calloc N bytes" (amends the last NCCL report)
  cublas_alloc,      // "CUBLAS_STATUS_ALLOC_FAILED": not a sized report, a hint at the end
  // Hints: which engine's log this is.
  hint_vllm,
  hint_sglang,
  hint_tgi,
  hint_trainer,
  hint_diffusion,
  hint_ollama,
  hint_llama,
  hint_jax,
  hint_tensorflow,
  hint_unsloth,
  hint_trtllm,
};
inline constexpr std::size_t k_hint_count = 11;
[[nodiscard]] constexpr bool is_hint(Anchor a) noexcept { return a >= Anchor::hint_vllm; }
[[nodiscard]] constexpr std::size_t hint_index(Anchor a) noexcept
{
  return static_cast<std::size_t>(a) - static_cast<std::size_t>(Anchor::hint_vllm);
}

struct AnchorHit {
  std::size_t pos = std::string_view::npos;
  Anchor anchor = Anchor::cuda_oom;
  std::size_t length = 0;
};

// The first anchor at or after `from` (npos when none); a prefilter on the first two bytes
// keeps this one pass over the text whatever the number of anchors.
[[nodiscard]] AnchorHit find_anchor(std::string_view text, std::size_t from) noexcept;
// Longest anchor text: the scanner keeps that much unsearched text for an anchor split by a read.
[[nodiscard]] std::size_t longest_anchor() noexcept;
// Hints in a stripped log prefix ("(EngineCore_DP0 pid=1)", "vllm-1  |", "ollama[12]:"): a bit per hint.
[[nodiscard]] unsigned prefix_hints(std::string_view prefix) noexcept;

}  // namespace gpurent::oom_detail

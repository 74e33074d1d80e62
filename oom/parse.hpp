// SPDX-License-Identifier: MIT
#pragma once
// Finds the last out-of-memory report in a log of any size, fed chunk by chunk: PyTorch (CUDA,
// ROCm, MPS), the bare CUDA/HIP runtime errors, vLLM, SGLang, TGI, llama.cpp, Ollama, JAX/XLA,
// TensorFlow and NCCL. Pure: no I/O. Memory stays bounded (about 256 KiB) whatever the input,
// including a multi-gigabyte single line. See docs/oom.md for the shapes recognised.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "oom/job_facts.hpp"

namespace gpurent {

// Who printed the message ("engine" in --json).
enum class OomEngine {
  pytorch,
  pytorch_rocm,
  pytorch_mps,
  cuda_runtime,
  hip_runtime,
  vllm,
  sglang,
  tgi,
  llama_cpp,
  ollama,
  jax,
  tensorflow,
  nccl,
  unsloth,
  tensorrt_llm,
};
// The message shape, named as in docs/oom.md ("pytorch>=2.2", "pytorch-2.0", ...).
enum class OomFormat {
  unknown,
  pytorch_2_2,
  pytorch_2_0,
  pytorch_1x,
  pytorch_legacy,
  pytorch_async,  // the cudaMallocAsync backend: "Allocation on device 0 would exceed allowed memory"
  pytorch_cpu,    // DefaultCPUAllocator: system RAM
  mps,
  cuda_runtime,
  hip_runtime,
  vllm,
  sglang,
  tgi,
  llama_cpp,
  ollama,
  xla,
  xla_compile,
  tensorflow,
  nccl,
  unsloth_studio,  // Unsloth Studio: a GGUF model that would run partly from system RAM
  trtllm_executor,  // TensorRT-LLM's PyTorch executor: a component it could not create
  trtllm_kv_blocks,  // TensorRT-LLM's KV cache manager at run time: no free blocks left for the requests in flight
};
// What the numbers mean; the diagnosis dispatches on it.
enum class OomKind {
  allocator,            // PyTorch caching allocator (CUDA or HIP): "Tried to allocate R ..."
  mps_allocator,        // PyTorch on Apple MPS: allocated + other against max allowed
  runtime,              // a CUDA/HIP runtime or driver error, usually without numbers
  kv_cache_too_small,   // vLLM: max seq len larger than the KV cache
  no_kv_cache_memory,   // vLLM: "No available memory for the cache blocks"
  vllm_startup_memory,  // vLLM: free memory on startup below gpu_memory_utilization x total
  sglang_static,        // SGLang: the static pool (weights + KV) does not fit mem_fraction_static
  tgi_warmup,           // TGI: warm-up could not run the prefill batch
  device_alloc,         // llama.cpp / Ollama: a device (or host) buffer could not be allocated
  host_memory,          // system RAM: Ollama's "model requires more system memory", PyTorch's DefaultCPUAllocator
  xla_alloc,            // JAX/XLA: "Out of memory while trying to allocate N bytes"
  xla_compile,          // XLA on TPU: the compiled program needs more HBM than the chip has
  tf_tensor,            // TensorFlow: "OOM when allocating tensor with shape[...]"
  nccl,                 // NCCL: a CUDA allocation failed inside the communicator
  trtllm_component,     // TensorRT-LLM: the executor could not create one component (the KV cache, the model, ...)
  trtllm_kv_blocks,     // TensorRT-LLM: the requests in flight need more KV blocks than its pool has left
};
// Which memory ran out.
enum class OomMemory { device, host, unified };
// The serving engine or trainer around a PyTorch error, read from the log (paths, prefixes).
// unsloth: a trainer run through Unsloth (its banner, its compiled trainers, unsloth_zoo's frames).
// tensorrt_llm: trtllm-serve or the LLM API (its [TRT-LLM] log prefix, tensorrt_llm/ frames).
enum class OomContext { none, vllm, sglang, tgi, trainer, diffusion, unsloth, tensorrt_llm };
// llama.cpp: what the failed buffer was for.
enum class OomStage { unknown, weights, kv_cache, compute };

struct OomOtherProcess {
  std::uint64_t pid = 0;
  Bytes used;
};

// Every field the message gives; absent fields stay empty (never zero by default).
struct OomReport {
  OomEngine engine = OomEngine::pytorch;
  OomFormat format = OomFormat::unknown;
  OomKind kind = OomKind::allocator;
  OomMemory memory = OomMemory::device;
  OomContext context = OomContext::none;
  bool rocm = false;       // an AMD GPU (HIP): the checks name rocm-smi/amd-smi, not nvidia-smi
  std::uint64_t line = 0;  // 1-based input line on which the report was recognised
  std::optional<std::uint32_t> device;
  std::optional<Bytes> requested;             // R
  std::optional<Bytes> total;                 // T
  std::optional<Bytes> free;                  // F
  std::optional<Bytes> process_in_use;        // P ("this process has P memory in use")
  bool process_in_use_invalid = false;        // P was printed but impossible (containers print 2^64)
  std::optional<Bytes> allocated;             // A (MPS: "MPS allocated")
  std::optional<Bytes> reserved_unallocated;  // U (1.x: RT - A; <= 1.0: C)
  std::optional<Bytes> reserved_total;        // RT (1.x only)
  std::optional<Bytes> allowed;               // "X allowed;" (set_per_process_memory_fraction)
  std::optional<Bytes> private_pools;         // "with X allocated in private pools"
  std::vector<OomOtherProcess> other_processes;  // "Process p has X memory in use" (first 256 kept)
  Bytes other_processes_sum;                     // sum over all of them, also those not kept
  std::size_t other_process_count = 0;
  // PyTorch on MPS.
  std::optional<Bytes> other_allocations;  // O ("other allocations")
  std::optional<Bytes> max_allowed;        // M ("max allowed", PYTORCH_MPS_HIGH_WATERMARK_RATIO)
  std::string pool;                        // "private" or "shared"
  // vLLM.
  std::optional<std::uint64_t> max_model_len;    // N
  std::optional<std::uint64_t> kv_cache_tokens;  // K (v1: the estimated maximum model length)
  std::optional<Bytes> kv_cache_needed;          // v1: "(X KV cache is needed"
  std::optional<Bytes> kv_cache_available;       // v1: "available KV cache memory (Y)"
  std::optional<std::uint64_t> gpu_blocks;       // the last "# GPU blocks: n" before the report
  std::optional<double> gpu_memory_utilization;  // startup check: the fraction asked for
  std::optional<std::uint64_t> max_num_seqs;     // "warming up sampler with N dummy requests"
  // SGLang.
  std::optional<double> mem_fraction_static;      // the value in use
  std::optional<double> min_mem_fraction_static;  // "minimum viable = 1 - available/pre = x"
  std::string component;  // TensorRT-LLM: the executor component it could not create ("KV cache", "model", ...)
  std::optional<Bytes> weights;                   // "Load weight end. ... mem usage=W"
  std::optional<Bytes> avail_after_weights;       // "Load weight end. ... avail mem=A"
  std::optional<Bytes> avail_before_weights;      // "Load weight begin. avail mem=P"
  // TGI.
  std::optional<std::uint64_t> prefill_tokens;
  std::optional<std::uint64_t> batch_total_tokens;
  // llama.cpp / Ollama.
  std::string backend;  // "CUDA0", "ROCm1", "Metal", "CPU", ...
  OomStage stage = OomStage::unknown;
  std::optional<std::uint64_t> gpu_layers;    // "offloaded n/m layers to GPU"
  std::optional<std::uint64_t> model_layers;  // m
  std::optional<std::uint64_t> context_size;  // n_ctx / KvSize
  // Ollama host memory.
  std::optional<Bytes> swap_free;
  // JAX / XLA.
  std::optional<Bytes> xla_parameters;
  std::optional<Bytes> xla_live_out;
  std::optional<Bytes> xla_temp;
  std::optional<Bytes> xla_total;  // "total allocation" of the program (BufferAssignment), or the TPU use
  std::optional<Bytes> xla_fragmentation;
  std::string memory_space;  // TPU: "hbm", "vmem", "smem"
  // TensorFlow.
  std::vector<std::uint64_t> tensor_shape;
  std::string dtype;
  std::string allocator_name;  // "GPU_0_bfc", "cpu"
  // What the log printed about the job before the report (model, shape, context, settings).
  OomJobFacts job;
};

[[nodiscard]] std::string_view to_string(OomEngine e) noexcept;
[[nodiscard]] std::string_view to_string(OomFormat f) noexcept;
[[nodiscard]] std::string_view to_string(OomMemory m) noexcept;
[[nodiscard]] std::string_view to_string(OomContext c) noexcept;
[[nodiscard]] std::string_view to_string(OomStage s) noexcept;
// ROCm reports: fixes name rocm-smi/amd-smi, not nvidia-smi.
[[nodiscard]] bool oom_on_rocm(const OomReport& r) noexcept;

namespace oom_detail {
class ReportParser;
struct ScanState;
}

// Incremental scanner. feed() any number of chunks of any size, then finish() once.
class OomScanner {
public:
  OomScanner();
  ~OomScanner();
  OomScanner(const OomScanner&) = delete;
  OomScanner& operator=(const OomScanner&) = delete;
  OomScanner(OomScanner&&) noexcept;
  OomScanner& operator=(OomScanner&&) noexcept;

  void feed(std::string_view chunk);
  // The last report in the input; an error when there is none or when its numbers are invalid
  // (non-finite, negative, absurdly large). The scanner must not be fed after finish().
  [[nodiscard]] Result<OomReport> finish();

  [[nodiscard]] std::uint64_t bytes_seen() const noexcept { return m_bytes; }
  [[nodiscard]] std::uint64_t lines_seen() const noexcept { return m_lines; }
  // Upper bound of the text the scanner holds, for the bounded-memory tests.
  [[nodiscard]] std::size_t retained_bytes() const noexcept;

  static constexpr std::size_t k_segment = 64 * 1024;   // longest piece of a line held at once
  static constexpr std::size_t k_capture = 64 * 1024;   // longest report text (whitespace removed)

private:
  void on_segment(std::string_view seg, bool line_start);
  void on_text(std::string_view text, bool line_start);
  void scan(bool final);
  void close_capture();

  std::uint64_t m_bytes = 0;
  std::uint64_t m_lines = 0;
  std::string m_line;        // the unfinished input line (at most k_segment)
  bool m_line_start = true;  // m_line begins at the start of an input line
  bool m_after_cr = false;   // the last chunk ended in '\r' (a "\r\n" may be split)
  int m_esc = 0;             // ANSI escape state, carried across segments of one line
  std::string m_unescaped;   // scratch: a segment with JSON/Python string escapes resolved
  std::string m_pending;     // an escape sequence cut by a segment boundary (at most 5 bytes)
  std::string m_clean;       // scratch: a segment without escape sequences
  std::string m_text;        // normalised text (no whitespace, no prefixes), a bounded window
  std::size_t m_search_from = 0;
  std::unique_ptr<oom_detail::ReportParser> m_parser;
  std::unique_ptr<oom_detail::ScanState> m_state;  // context read around reports, the last report
  oom_detail::JobFactsReader m_facts;              // the job the log describes (a report takes a copy)
  bool m_finished = false;
};

// Convenience for whole strings (tests, small inputs): feeds `text` in one piece.
[[nodiscard]] Result<OomReport> parse_oom(std::string_view text);

}  // namespace gpurent

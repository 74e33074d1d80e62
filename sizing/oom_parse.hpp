// SPDX-License-Identifier: MIT
#pragma once
// Finds the last CUDA out-of-memory report in a log of any size, fed chunk by chunk.
// Pure: no I/O. Memory stays bounded (about 256 KiB) whatever the input, including a
// multi-gigabyte single line. See docs/oom.md for the shapes recognised.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"

namespace gpurent {

enum class OomEngine { pytorch, vllm, llama_cpp };
// The message shape, named as in docs/oom.md ("pytorch>=2.2", "pytorch-2.0", ...).
enum class OomFormat { unknown, pytorch_2_2, pytorch_2_0, pytorch_1x, pytorch_legacy, vllm, llama_cpp };
enum class OomKind {
  allocator,           // PyTorch caching allocator: "CUDA out of memory. Tried to allocate ..."
  kv_cache_too_small,  // vLLM: max seq len larger than the KV cache
  no_kv_cache_memory,  // vLLM: "No available memory for the cache blocks"
  device_alloc,        // llama.cpp / Ollama: "cudaMalloc failed: out of memory"
};

struct OomOtherProcess {
  std::uint64_t pid = 0;
  Bytes used;
};

// Every field the message gives; absent fields stay empty (never zero by default).
struct OomReport {
  OomEngine engine = OomEngine::pytorch;
  OomFormat format = OomFormat::unknown;
  OomKind kind = OomKind::allocator;
  std::uint64_t line = 0;  // 1-based input line on which the report was recognised
  std::optional<std::uint32_t> device;
  std::optional<Bytes> requested;             // R
  std::optional<Bytes> total;                 // T
  std::optional<Bytes> free;                  // F
  std::optional<Bytes> process_in_use;        // P ("this process has P memory in use")
  std::optional<Bytes> allocated;             // A
  std::optional<Bytes> reserved_unallocated;  // U (1.x: RT - A; <= 1.0: C)
  std::optional<Bytes> reserved_total;        // RT (1.x only)
  std::optional<Bytes> allowed;               // "X allowed;" (set_per_process_memory_fraction)
  std::optional<Bytes> private_pools;         // "with X allocated in private pools"
  std::vector<OomOtherProcess> other_processes;  // "Process p has X memory in use" (first 256 kept)
  Bytes other_processes_sum;                     // sum over all of them, also those not kept
  std::size_t other_process_count = 0;
  std::optional<std::uint64_t> max_model_len;    // vLLM N
  std::optional<std::uint64_t> kv_cache_tokens;  // vLLM K (v1: the estimated maximum model length)
  std::optional<Bytes> kv_cache_needed;          // vLLM v1: "(X KV cache is needed"
  std::optional<Bytes> kv_cache_available;       // vLLM v1: "available KV cache memory (Y)"
  std::optional<std::uint64_t> gpu_blocks;       // vLLM: the last "# GPU blocks: n" before the report
};

[[nodiscard]] std::string_view to_string(OomEngine e) noexcept;
[[nodiscard]] std::string_view to_string(OomFormat f) noexcept;

namespace oom_detail {
class ReportParser;
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
  void scan(bool final);
  void close_capture();

  std::uint64_t m_bytes = 0;
  std::uint64_t m_lines = 0;
  std::string m_line;        // the unfinished input line (at most k_segment)
  bool m_line_start = true;  // m_line begins at the start of an input line
  bool m_after_cr = false;   // the last chunk ended in '\r' (a "\r\n" may be split)
  int m_esc = 0;             // ANSI escape state, carried across segments of one line
  std::string m_clean;       // scratch: a segment without escape sequences
  std::string m_text;        // normalised text (no whitespace, no prefixes), a bounded window
  std::size_t m_search_from = 0;
  std::unique_ptr<oom_detail::ReportParser> m_parser;
  std::optional<std::uint64_t> m_gpu_blocks;
  std::optional<OomReport> m_last;
  std::string m_last_error;  // non-empty when the last report had an invalid number
  bool m_finished = false;
};

// Convenience for whole strings (tests, small inputs): feeds `text` in one piece.
[[nodiscard]] Result<OomReport> parse_oom(std::string_view text);

}  // namespace gpurent

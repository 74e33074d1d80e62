// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: what it remembers besides the text (the last report, the context
// read around it, the hints of which program wrote the log) and the rules that use it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "oom/grammar.hpp"
#include "oom/parse.hpp"

namespace gpurent::oom_detail {

// What the scanner remembers besides the text: the last report, and context around it.
struct ScanState {
  std::optional<OomReport> last;
  std::string last_error;
  bool last_sized = false;
  std::array<std::uint64_t, k_hint_count> hint_line{};       // last line each hint was seen on (0: never)
  std::array<std::uint64_t, k_hint_count> hint_at_report{};  // the same, when the last report was read
  std::array<std::uint64_t, k_hint_count> hint_after{};      // first line after the last report
  std::optional<std::uint64_t> gpu_blocks;
  std::optional<Bytes> avail_before_weights;
  std::optional<Bytes> avail_after_weights;
  std::optional<Bytes> weights;
  std::optional<std::uint64_t> gpu_layers;
  std::optional<std::uint64_t> model_layers;
  std::optional<std::uint64_t> context_size;
  std::optional<double> gpu_memory_utilization;
  std::optional<double> mem_fraction_static;
  std::optional<std::uint64_t> prefill_tokens;
  std::uint64_t cublas_line = 0;  // "CUBLAS_STATUS_ALLOC_FAILED" seen on this line (0: never)

  void saw_hint(std::size_t h, std::uint64_t line)
  {
    hint_line[h] = line;
    if (last && hint_after[h] == 0 && line >= last->line) {
      hint_after[h] = line;
    }
  }
};

// The report gives numbers (an unsized one right after a sized one is its echo).
[[nodiscard]] bool sized(const OomReport& r);
[[nodiscard]] bool llama_family(const OomReport& r);
// Context read before the report, for the engines whose messages leave it out.
void attach_context(OomReport& r, const ScanState& s);
// A context line (`anchor`) read into the state.
void update_context(const OomReport& r, Anchor anchor, ScanState& s);
// Which program raised the report, from the hints around it.
void resolve_engine(OomReport& r, const ScanState& s);

}  // namespace gpurent::oom_detail

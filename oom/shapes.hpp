// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: the message shapes of every engine, as tables of steps, and the
// resumable parser that runs one of them from an anchor.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "oom/grammar.hpp"
#include "oom/parse.hpp"

namespace gpurent::oom_detail {

// What a finished capture is.
enum class Role : std::uint8_t {
  report,     // an out-of-memory report
  context,    // numbers for a later report (vLLM blocks, SGLang weights, llama.cpp layers, n_ctx)
  amend,      // more about the last report (llama.cpp stage, NCCL's allocation size)
  near_miss,  // not an out-of-memory report, but worth a hint when nothing else is found
};

// The parser's working state, written by the steps.
struct ParseState {
  OomReport report;
  Role role = Role::report;
  std::string error;
};

inline constexpr std::size_t k_max_alts = 10;
inline constexpr std::int8_t k_end = -1;

// One clause of a message: alternatives tried in order; `next[i]` is the step after alternative
// i (k_end: the message ends); `on_miss` is where to go when none matches (k_end: ends here).
struct Step {
  std::array<std::string_view, k_max_alts> alts{};
  void (*apply)(ParseState&, std::size_t which, const Match&) = nullptr;
  std::array<std::int8_t, k_max_alts> next{};
  std::int8_t on_miss = k_end;
};

using Alts = std::array<std::string_view, k_max_alts>;
using Next = std::array<std::int8_t, k_max_alts>;

constexpr Next all(std::int8_t n)
{
  Next out{};
  out.fill(n);
  return out;
}

// The step table of each anchor's shape, nullptr for anchors without one (or not of that file).
[[nodiscard]] const Step* pytorch_steps(Anchor a) noexcept;  // oom/shapes_pytorch.cpp
[[nodiscard]] const Step* serving_steps(Anchor a) noexcept;  // oom/shapes_serving.cpp
[[nodiscard]] const Step* other_steps(Anchor a) noexcept;    // oom/shapes_other.cpp
// "CUDA0", "ROCm1", "Vulkan0", "Metal", "CPU", "CUDA_Host": the device, and which memory.
void set_backend(OomReport& r, std::string_view backend);

// Resumable parser of one capture, started at an anchor.
class ReportParser {
public:
  // `text` is the scanner's text; the anchor is at `pos` (text before it may be read back).
  ReportParser(Anchor anchor, std::string_view text, std::size_t pos, std::size_t anchor_length, std::uint64_t line);
  // eof: needs more text; ok: finished (complete, or stopped where the text stopped matching).
  [[nodiscard]] Status advance(std::string_view text, bool final);
  [[nodiscard]] std::size_t pos() const noexcept { return m_pos; }
  [[nodiscard]] std::size_t start() const noexcept { return m_start; }
  void shift(std::size_t dropped) noexcept { m_pos -= dropped; m_start -= dropped; }
  // The text matched enough to be this kind of report (or context).
  [[nodiscard]] bool recognised() const noexcept;
  // A number error here makes a report of its own (the anchor alone says what the text is).
  [[nodiscard]] bool strong() const noexcept;
  [[nodiscard]] Anchor anchor() const noexcept { return m_anchor; }
  [[nodiscard]] Role role() const noexcept { return m_state.role; }
  [[nodiscard]] OomReport& report() noexcept { return m_state.report; }
  [[nodiscard]] const std::string& error() const noexcept { return m_state.error; }

private:
  Status step(std::string_view text, bool final);

  Anchor m_anchor;
  const Step* m_steps = nullptr;
  std::int8_t m_step = k_end;
  std::size_t m_start;
  std::size_t m_pos;
  unsigned m_progress = 0;  // clauses matched
  ParseState m_state;
};

}  // namespace gpurent::oom_detail

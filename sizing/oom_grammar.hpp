// SPDX-License-Identifier: MIT
#pragma once
// Internal to the OOM scanner: the message grammar, matched on normalised text (all whitespace,
// line breaks and log prefixes removed, so that any wrapping of the message matches the same).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sizing/oom_parse.hpp"

namespace gpurent::oom_detail {

enum class Status { ok, eof, mismatch };

enum class CaptureKind : std::uint8_t { cuda_oom, hip_oom, tried, vllm_len, vllm_blocks, vllm_no_kv, llama };

struct Anchor {
  std::string_view text;
  CaptureKind kind;
};

inline constexpr std::array<Anchor, 7> k_anchors{{
    {"CUDAoutofmemory", CaptureKind::cuda_oom},
    {"HIPoutofmemory", CaptureKind::hip_oom},
    {"Triedtoallocate", CaptureKind::tried},
    {"maxseqlen(", CaptureKind::vllm_len},
    {"GPUblocks:", CaptureKind::vllm_blocks},
    {"Noavailablememoryforthecacheblocks", CaptureKind::vllm_no_kv},
    {"cudaMallocfailed:outofmemory", CaptureKind::llama},
}};
inline constexpr std::size_t k_longest_anchor = 34;

// One matched placeholder: {s} a size, {i} a small integer (device, pid), {n} a count.
struct Field {
  Bytes bytes;
  std::uint64_t value = 0;
};

struct Match {
  Status status = Status::mismatch;
  std::size_t end = 0;
  std::array<Field, 4> fields{};
  std::size_t count = 0;
  std::string error;  // set (with status mismatch) when a number is invalid
};

// Matches `pattern` (literal text with {s}/{i}/{n} placeholders) at text[pos]. With `final`, the
// end of `text` is the end of the input, so a partial match is a mismatch rather than eof.
[[nodiscard]] Match match_pattern(std::string_view text, std::size_t pos, std::string_view pattern, bool final);

// Resumable parser of one report, started at an anchor.
class ReportParser {
public:
  ReportParser(CaptureKind kind, std::size_t pos, std::uint64_t line);
  // eof: needs more text; ok: finished (complete, or stopped where the text stopped matching).
  [[nodiscard]] Status advance(std::string_view text, bool final);
  [[nodiscard]] std::size_t pos() const noexcept { return m_pos; }
  [[nodiscard]] std::size_t start() const noexcept { return m_start; }
  void shift(std::size_t dropped) noexcept { m_pos -= dropped; m_start -= dropped; }
  [[nodiscard]] bool recognised() const noexcept;
  [[nodiscard]] CaptureKind kind() const noexcept { return m_kind; }
  [[nodiscard]] OomReport& report() noexcept { return m_report; }
  [[nodiscard]] const std::string& error() const noexcept { return m_error; }

private:
  enum class Step : std::uint8_t { start, opt_dot, tried, after_r, entries, a_tail, old_tail, v_start, v_est, blocks, done };
  Status step(std::string_view text, bool final);
  Status alts(std::string_view text, bool final, std::initializer_list<std::string_view> patterns, std::size_t& which, Match& m);

  CaptureKind m_kind;
  Step m_step = Step::start;
  std::size_t m_start;
  std::size_t m_pos;
  bool m_prefix = false;
  OomReport m_report;
  std::string m_error;
};

// llama.cpp: reads "allocating M MiB on device d:" ending right before the anchor at `anchor`.
void parse_llama_size(std::string_view text, std::size_t anchor, OomReport& report, std::string& error);

}  // namespace gpurent::oom_detail

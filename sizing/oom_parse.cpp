// SPDX-License-Identifier: MIT
#include "sizing/oom_parse.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sizing/oom_grammar.hpp"
#include "sizing/oom_lines.hpp"

namespace gpurent {

using oom_detail::CaptureKind;
using oom_detail::ReportParser;
using oom_detail::Status;

namespace {
// Normalised text kept before the search point when no report is being read: enough for an
// anchor split between two lines and for llama.cpp's "allocating M MiB on device d:".
constexpr std::size_t k_keep = 256;
}  // namespace

std::string_view to_string(OomEngine e) noexcept
{
  switch (e) {
  case OomEngine::pytorch: return "pytorch";
  case OomEngine::vllm: return "vllm";
  case OomEngine::llama_cpp: return "llama.cpp";
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
  case OomFormat::vllm: return "vllm";
  case OomFormat::llama_cpp: return "llama.cpp";
  }
  return "unknown";
}

OomScanner::OomScanner() = default;
OomScanner::~OomScanner() = default;
OomScanner::OomScanner(OomScanner&&) noexcept = default;
OomScanner& OomScanner::operator=(OomScanner&&) noexcept = default;

std::size_t OomScanner::retained_bytes() const noexcept
{
  return m_line.size() + m_clean.size() + m_text.size();
}

void OomScanner::feed(std::string_view chunk)
{
  if (m_finished) {
    return;
  }
  m_bytes += chunk.size();
  if (m_after_cr && !chunk.empty() && chunk.front() == '\n') {
    chunk.remove_prefix(1);  // the second half of a "\r\n" split between chunks
  }
  m_after_cr = false;
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find_first_of("\r\n");
    std::string_view piece = chunk.substr(0, nl);
    if (nl != std::string_view::npos && m_line.empty() && piece.size() < k_segment) {
      on_segment(piece, m_line_start);  // the common case: a whole line inside the chunk, no copy
      piece = {};
    }
    while (!piece.empty()) {
      const std::size_t take = std::min(k_segment - m_line.size(), piece.size());
      m_line.append(piece.substr(0, take));
      piece.remove_prefix(take);
      if (m_line.size() == k_segment) {
        on_segment(m_line, m_line_start);
        m_line_start = false;
        m_line.clear();
      }
    }
    if (nl == std::string_view::npos) {
      break;
    }
    if (!m_line.empty()) {
      on_segment(m_line, m_line_start);
      m_line.clear();
    }
    m_line_start = true;
    ++m_lines;
    std::size_t skip = nl + 1;
    if (chunk[nl] == '\r') {
      if (skip < chunk.size() && chunk[skip] == '\n') {
        ++skip;
      } else if (skip == chunk.size()) {
        m_after_cr = true;
      }
    }
    chunk.remove_prefix(skip);
  }
}

void OomScanner::on_segment(std::string_view seg, bool line_start)
{
  if (line_start) {
    m_esc = 0;
  }
  m_clean.clear();
  oom_detail::strip_ansi(seg, m_clean, m_esc);
  std::string_view text = m_clean;
  if (line_start) {
    text.remove_prefix(oom_detail::line_prefix_length(text));
  }
  const std::size_t old_size = m_text.size();
  m_text.resize(old_size + text.size());
  char* out = m_text.data() + old_size;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    *out = c;
    out += (u > 0x20 && u != 0x7f) ? 1 : 0;  // drop whitespace and control characters, branch-free
  }
  m_text.resize(static_cast<std::size_t>(out - m_text.data()));
  scan(false);
}

void OomScanner::scan(bool final)
{
  for (;;) {
    if (m_parser) {
      const Status s = m_parser->advance(m_text, final);
      if (s == Status::eof) {
        if (m_text.size() - m_parser->start() <= k_capture) {
          return;
        }
        (void)m_parser->advance(m_text, true);  // too long: take the report as it stands
      }
      close_capture();
      continue;
    }
    std::size_t best = std::string::npos;
    CaptureKind kind = CaptureKind::cuda_oom;
    for (const auto& anchor : oom_detail::k_anchors) {
      const std::size_t at = m_text.find(anchor.text, m_search_from);
      if (at < best) {
        best = at;
        kind = anchor.kind;
      }
    }
    if (best == std::string::npos) {
      const std::size_t tail = m_text.size() > oom_detail::k_longest_anchor ? m_text.size() - oom_detail::k_longest_anchor : 0;
      m_search_from = std::max(m_search_from, tail);
      if (m_text.size() > 2 * k_keep) {
        const std::size_t drop = std::min(m_text.size() - k_keep, m_search_from);
        m_text.erase(0, drop);
        m_search_from -= drop;
      }
      return;
    }
    m_parser = std::make_unique<ReportParser>(kind, best, m_lines + 1);
  }
}

void OomScanner::close_capture()
{
  ReportParser& p = *m_parser;
  OomReport report = std::move(p.report());
  std::string error = p.error();
  bool keep = p.recognised() || (!error.empty() && p.kind() != CaptureKind::vllm_blocks && p.kind() != CaptureKind::tried);
  switch (p.kind()) {
  case CaptureKind::vllm_blocks:
    if (report.gpu_blocks) {
      m_gpu_blocks = report.gpu_blocks;
    }
    keep = false;
    break;
  case CaptureKind::vllm_no_kv:
  case CaptureKind::vllm_len: report.gpu_blocks = m_gpu_blocks; break;
  case CaptureKind::llama:
    oom_detail::parse_llama_size(m_text, p.start(), report, error);
    // Ollama repeats the failure without the size ("llama runner process no longer running:
    // -1 cudaMalloc failed: out of memory"): the detailed line before it stays the report.
    if (!report.requested && error.empty() && m_last && m_last->engine == OomEngine::llama_cpp && m_last->requested) {
      keep = false;
    }
    break;
  default: break;
  }
  m_search_from = p.pos();
  m_parser.reset();
  if (keep) {
    m_last = std::move(report);
    m_last_error = std::move(error);
  }
}

Result<OomReport> OomScanner::finish()
{
  if (!m_finished) {
    if (!m_line.empty()) {
      on_segment(m_line, m_line_start);
      m_line.clear();
      ++m_lines;
    }
    scan(true);
    m_finished = true;
  }
  if (!m_last) {
    return fail(Errc::invalid_input,
                fmt::format("reading the out-of-memory report: no out-of-memory report found in the input ({} bytes, {} lines); "
                            "pass the log or the error text that holds PyTorch's 'CUDA out of memory', one of vLLM's KV-cache "
                            "errors or llama.cpp's 'cudaMalloc failed: out of memory'",
                            m_bytes, m_lines));
  }
  if (!m_last_error.empty()) {
    return fail(Errc::invalid_input,
                fmt::format("reading the out-of-memory report on line {}: {}; the message looks corrupted or edited, paste it as "
                            "the program printed it",
                            m_last->line, m_last_error));
  }
  return *m_last;
}

Result<OomReport> parse_oom(std::string_view text)
{
  OomScanner scanner;
  scanner.feed(text);
  return scanner.finish();
}

}  // namespace gpurent

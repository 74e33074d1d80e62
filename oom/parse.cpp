// SPDX-License-Identifier: MIT
#include "oom/parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "oom/context.hpp"
#include "oom/grammar.hpp"
#include "oom/lines.hpp"
#include "oom/shapes.hpp"

namespace gpurent {

using oom_detail::Anchor;
using oom_detail::ReportParser;
using oom_detail::ScanState;
using oom_detail::Role;
using oom_detail::Status;

namespace {
// Normalised text kept before the search point when no report is being read: enough for an
// anchor split between two lines and for the sizes printed before an anchor.
constexpr std::size_t k_keep = 256;
// A report without numbers right after a sized one is its echo (a chained exception, Ollama's
// "llama runner process no longer running: ... cudaMalloc failed"), not a new failure.
constexpr std::uint64_t k_echo_lines = 500;
// Lines after a report in which llama.cpp says what the buffer was for, or NCCL its size.
constexpr std::uint64_t k_amend_lines = 20;
constexpr std::size_t hint(Anchor a) { return oom_detail::hint_index(a); }

}  // namespace

OomScanner::OomScanner() : m_state(std::make_unique<ScanState>()) {}
OomScanner::~OomScanner() = default;
OomScanner::OomScanner(OomScanner&&) noexcept = default;
OomScanner& OomScanner::operator=(OomScanner&&) noexcept = default;

std::size_t OomScanner::retained_bytes() const noexcept
{
  return m_line.size() + m_unescaped.size() + m_pending.size() + m_clean.size() + m_text.size();
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
    m_pending.clear();  // an escape cut at the end of the previous line
  }
  if (m_pending.empty() && seg.find('\\') == std::string_view::npos) {
    on_text(seg, line_start);
    return;
  }
  // A JSON log line or a Python repr: "\n" inside the string starts a new (virtual) line.
  m_unescaped.clear();
  oom_detail::unescape(seg, m_unescaped, m_pending, false);
  std::string_view rest = m_unescaped;
  bool start = line_start;
  for (;;) {
    const std::size_t nl = rest.find('\n');
    on_text(rest.substr(0, nl), start);
    if (nl == std::string_view::npos) {
      break;
    }
    rest.remove_prefix(nl + 1);
    start = true;
  }
  m_unescaped.clear();
}

void OomScanner::on_text(std::string_view seg, bool line_start)
{
  if (line_start) {
    m_esc = 0;
  }
  m_clean.clear();
  oom_detail::strip_ansi(seg, m_clean, m_esc);
  std::string_view text = m_clean;
  if (line_start) {
    oom_detail::PrefixInfo info;
    const std::size_t prefix = oom_detail::line_prefix_length(text, &info);
    if (prefix > 0) {
      unsigned hints = oom_detail::prefix_hints(text.substr(0, prefix));
      hints |= info.vllm ? 1U << hint(Anchor::hint_vllm) : 0U;
      hints |= info.sglang ? 1U << hint(Anchor::hint_sglang) : 0U;
      for (std::size_t h = 0; h < oom_detail::k_hint_count; ++h) {
        if ((hints >> h & 1U) != 0) {
          m_state->saw_hint(h, m_lines + 1);
        }
      }
      text.remove_prefix(prefix);
    }
    m_facts.on_line(text);
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
  m_clean.clear();
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
    const oom_detail::AnchorHit hit = oom_detail::find_anchor(m_text, m_search_from);
    if (hit.pos == std::string_view::npos) {
      const std::size_t keep = oom_detail::longest_anchor();
      const std::size_t tail = m_text.size() > keep ? m_text.size() - keep : 0;
      m_search_from = std::max(m_search_from, tail);
      if (m_text.size() > 2 * k_keep) {
        const std::size_t drop = std::min(m_text.size() - k_keep, m_search_from);
        m_text.erase(0, drop);
        m_search_from -= drop;
      }
      return;
    }
    if (oom_detail::is_hint(hit.anchor)) {
      // Lines are joined without their spaces: llama.cpp's "flash_attn = auto" before a line that
      // starts "llama_context:" reads "autollama_context", which is not Ollama. A lower-case
      // "ollama" counts only where it does not continue a word.
      const bool in_word = hit.anchor == Anchor::hint_ollama && m_text.compare(hit.pos, 6, "ollama") == 0 && hit.pos > 0 &&
                           std::isalpha(static_cast<unsigned char>(m_text[hit.pos - 1])) != 0;
      if (!in_word) {
        m_state->saw_hint(hint(hit.anchor), m_lines + 1);
      }
      m_search_from = hit.pos + hit.length;
      continue;
    }
    m_parser = std::make_unique<ReportParser>(hit.anchor, m_text, hit.pos, hit.length, m_lines + 1);
  }
}

void OomScanner::close_capture()
{
  ReportParser& p = *m_parser;
  ScanState& st = *m_state;
  const Anchor anchor = p.anchor();
  const Role role = p.role();
  const bool recognised = p.recognised();
  const bool strong = p.strong();
  OomReport report = std::move(p.report());
  std::string error = p.error();
  m_search_from = p.pos();
  m_parser.reset();

  using oom_detail::llama_family;
  const bool amendable = st.last && report.line - st.last->line <= k_amend_lines && st.last_error.empty();
  switch (role) {
  case Role::context:
    if (recognised && error.empty()) {
      oom_detail::update_context(report, anchor, st);
    }
    return;
  case Role::near_miss: st.cublas_line = report.line; return;
  case Role::amend:
    if (!recognised || !error.empty()) {
      return;
    }
    if (amendable && report.kind == OomKind::nccl && st.last->kind == OomKind::nccl) {
      if (!st.last->requested) {
        st.last->requested = report.requested;
        st.last_sized = true;
      }
      return;
    }
    if (amendable && llama_family(report) && llama_family(*st.last)) {
      if (st.last->stage == OomStage::unknown) {
        st.last->stage = report.stage;
      }
      return;
    }
    break;  // nothing to amend: "failed to allocate buffer for kv cache" alone is a report of its own
  case Role::report: break;
  }
  if (!recognised && (error.empty() || !strong)) {
    return;
  }
  if (anchor == Anchor::llama_unable && error.empty() && amendable && llama_family(*st.last)) {
    // "llama_model_load: error loading model: unable to allocate CUDA0 buffer" after the size.
    if (st.last->stage == OomStage::unknown) {
      st.last->stage = OomStage::weights;
    }
    return;
  }
  if (anchor == Anchor::llama_failed && error.empty() && amendable && llama_family(*st.last) && st.last->requested &&
      report.requested && st.last->device == report.device) {
    // "allocating 8900.01 MiB on device 0: cudaMalloc failed" then "failed to allocate CUDA0 buffer
    // of size 9332334592": the same failure, the second line only names the backend.
    const std::uint64_t a = st.last->requested->n;
    const std::uint64_t b = report.requested->n;
    if ((a > b ? a - b : b - a) <= k_mib / 100) {
      if (st.last->backend.empty()) {
        st.last->backend = report.backend;
      }
      return;
    }
  }
  oom_detail::attach_context(report, st);
  const bool is_sized = oom_detail::sized(report);
  if (!is_sized && error.empty() && st.last && st.last_sized && st.last_error.empty() && report.line - st.last->line <= k_echo_lines) {
    // An echo of the sized report before it; vLLM's "warming up sampler with N dummy requests" adds N.
    if (report.max_num_seqs && !st.last->max_num_seqs) {
      st.last->max_num_seqs = report.max_num_seqs;
      st.last->context = report.context;
    }
    return;
  }
  report.job = m_facts.snapshot();
  st.last = std::move(report);
  st.last_error = std::move(error);
  st.last_sized = is_sized;
  st.hint_at_report = st.hint_line;
  st.hint_after.fill(0);
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
  ScanState& st = *m_state;
  if (!st.last) {
    const std::string hint =
        st.cublas_line == 0
            ? std::string{}
            : fmt::format("; line {} holds cuBLAS's CUBLAS_STATUS_ALLOC_FAILED, which gives no sizes: cuBLAS could not "
                          "allocate its workspace, usually because the GPU was already full (check `nvidia-smi`)",
                          st.cublas_line);
    // Not a malformed input: none in it (oom.md: exit 1, JSON code not_found).
    return fail(Errc::not_found,
                fmt::format("reading the out-of-memory report: no out-of-memory report found in the input ({} bytes, {} lines){}; "
                            "pass the log or the error text that holds the out-of-memory message (PyTorch, vLLM, SGLang, TGI, "
                            "llama.cpp, Ollama, JAX, TensorFlow or NCCL)",
                            m_bytes, m_lines, hint));
  }
  if (!st.last_error.empty()) {
    return fail(Errc::invalid_input,
                fmt::format("reading the out-of-memory report on line {}: {}; the message looks corrupted or edited, paste it as "
                            "the program printed it",
                            st.last->line, st.last_error));
  }
  OomReport out = *st.last;
  oom_detail::resolve_engine(out, st);
  return out;
}

Result<OomReport> parse_oom(std::string_view text)
{
  OomScanner scanner;
  scanner.feed(text);
  return scanner.finish();
}

}  // namespace gpurent

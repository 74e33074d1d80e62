// SPDX-License-Identifier: MIT
#include "sizing/oom_parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "sizing/oom_grammar.hpp"
#include "sizing/oom_lines.hpp"
#include "sizing/oom_shapes.hpp"

namespace gpurent {

using oom_detail::Anchor;
using oom_detail::ReportParser;
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
// How far a hint (a path, a prefix) may be from the report it attributes.
constexpr std::uint64_t k_hint_before = 5000;
constexpr std::uint64_t k_hint_after = 50;

constexpr std::size_t hint(Anchor a) { return oom_detail::hint_index(a); }

}  // namespace

namespace oom_detail {

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

}  // namespace oom_detail

namespace {

using oom_detail::ScanState;

bool sized(const OomReport& r)
{
  return r.requested || r.total || r.free || r.max_model_len || r.kv_cache_available || r.xla_total ||
         r.kind == OomKind::tgi_warmup || r.kind == OomKind::sglang_static || r.kind == OomKind::no_kv_cache_memory;
}

bool llama_family(const OomReport& r) { return r.kind == OomKind::device_alloc; }

// Context read before the report, for the engines whose messages leave it out.
void attach_context(OomReport& r, const ScanState& s)
{
  if (r.engine == OomEngine::vllm && (r.kind == OomKind::kv_cache_too_small || r.kind == OomKind::no_kv_cache_memory)) {
    r.gpu_blocks = s.gpu_blocks;
  }
  if (r.kind == OomKind::sglang_static) {
    r.avail_before_weights = s.avail_before_weights;
    r.avail_after_weights = s.avail_after_weights;
    if (!r.weights) {
      r.weights = s.weights;
    }
  }
  if (r.kind == OomKind::allocator || r.kind == OomKind::runtime || r.kind == OomKind::no_kv_cache_memory ||
      r.kind == OomKind::kv_cache_too_small || r.kind == OomKind::nccl) {
    // The engine's own settings, for fixes that change them (vLLM, SGLang, TGI).
    r.gpu_memory_utilization = r.gpu_memory_utilization ? r.gpu_memory_utilization : s.gpu_memory_utilization;
    r.mem_fraction_static = r.mem_fraction_static ? r.mem_fraction_static : s.mem_fraction_static;
    if (r.kind != OomKind::kv_cache_too_small && r.kind != OomKind::no_kv_cache_memory) {
      r.prefill_tokens = r.prefill_tokens ? r.prefill_tokens : s.prefill_tokens;
    }
  }
  if (llama_family(r) || r.kind == OomKind::runtime) {
    r.gpu_layers = s.gpu_layers;
    r.model_layers = s.model_layers;
    r.context_size = s.context_size;
  }
}

void update_context(const OomReport& r, Anchor anchor, ScanState& s)
{
  switch (anchor) {
  case Anchor::vllm_blocks: s.gpu_blocks = r.gpu_blocks; break;
  case Anchor::sglang_load_begin: s.avail_before_weights = r.avail_before_weights; break;
  case Anchor::sglang_load_end:
    s.avail_after_weights = r.avail_after_weights;
    s.weights = r.weights;
    break;
  case Anchor::llama_layers:
    s.gpu_layers = r.gpu_layers;
    s.model_layers = r.model_layers;
    break;
  case Anchor::llama_ctx:
  case Anchor::ollama_kvsize: s.context_size = r.context_size; break;
  case Anchor::vllm_util: s.gpu_memory_utilization = r.gpu_memory_utilization; break;
  case Anchor::sglang_fraction: s.mem_fraction_static = r.mem_fraction_static; break;
  case Anchor::tgi_prefill: s.prefill_tokens = r.prefill_tokens; break;
  default: break;
  }
}

// The hint nearest to the report among `candidates`: the last one seen before it (not too long
// before), else the first one seen shortly after.
std::optional<Anchor> nearest_hint(const ScanState& s, std::uint64_t line, std::initializer_list<Anchor> candidates)
{
  std::optional<Anchor> best;
  std::uint64_t best_line = 0;
  for (const Anchor a : candidates) {
    const std::uint64_t seen = s.hint_at_report[hint(a)];
    if (seen != 0 && seen <= line && line - seen <= k_hint_before && seen >= best_line) {
      best = a;
      best_line = seen;
    }
  }
  if (best) {
    return best;
  }
  std::uint64_t first = ~0ULL;
  for (const Anchor a : candidates) {
    const std::uint64_t seen = s.hint_after[hint(a)];
    if (seen != 0 && seen - line <= k_hint_after && seen < first) {
      best = a;
      first = seen;
    }
  }
  return best;
}

// Which program raised the report, from the hints around it.
void resolve_engine(OomReport& r, const ScanState& s)
{
  const auto seen_ollama = [&] {
    const std::uint64_t before = s.hint_at_report[hint(Anchor::hint_ollama)];
    const std::uint64_t after = s.hint_after[hint(Anchor::hint_ollama)];
    return (before != 0 && before <= r.line) || (after != 0 && after - r.line <= k_hint_after);
  };
  switch (r.kind) {
  case OomKind::allocator:
  case OomKind::runtime:
  case OomKind::mps_allocator: {
    if (r.context != OomContext::none) {
      return;  // the message itself named the engine
    }
    const auto h = nearest_hint(s, r.line,
                                {Anchor::hint_vllm, Anchor::hint_sglang, Anchor::hint_tgi, Anchor::hint_trainer, Anchor::hint_diffusion,
                                 Anchor::hint_llama, Anchor::hint_ollama});
    if (!h) {
      return;
    }
    if ((*h == Anchor::hint_llama || *h == Anchor::hint_ollama) && r.kind == OomKind::runtime) {
      // ggml's CUDA_CHECK: "CUDA error: out of memory\n current device: 0, in function ..."
      r.kind = OomKind::device_alloc;
      r.format = OomFormat::llama_cpp;
      r.engine = seen_ollama() ? OomEngine::ollama : OomEngine::llama_cpp;
      return;
    }
    r.context = *h == Anchor::hint_vllm     ? OomContext::vllm
                : *h == Anchor::hint_sglang ? OomContext::sglang
                : *h == Anchor::hint_tgi    ? OomContext::tgi
                : *h == Anchor::hint_trainer ? OomContext::trainer
                : *h == Anchor::hint_diffusion ? OomContext::diffusion
                                               : OomContext::none;
    return;
  }
  case OomKind::device_alloc:
    if (seen_ollama()) {
      r.engine = OomEngine::ollama;
    }
    return;
  case OomKind::xla_alloc: {
    const auto h = nearest_hint(s, r.line, {Anchor::hint_jax, Anchor::hint_tensorflow});
    if (h == Anchor::hint_tensorflow) {
      r.engine = OomEngine::tensorflow;
    }
    return;
  }
  default: return;
  }
}

}  // namespace

std::string_view to_string(OomEngine e) noexcept
{
  switch (e) {
  case OomEngine::pytorch: return "pytorch";
  case OomEngine::pytorch_rocm: return "pytorch-rocm";
  case OomEngine::pytorch_mps: return "pytorch-mps";
  case OomEngine::cuda_runtime: return "cuda-runtime";
  case OomEngine::hip_runtime: return "hip-runtime";
  case OomEngine::vllm: return "vllm";
  case OomEngine::sglang: return "sglang";
  case OomEngine::tgi: return "tgi";
  case OomEngine::llama_cpp: return "llama.cpp";
  case OomEngine::ollama: return "ollama";
  case OomEngine::jax: return "jax";
  case OomEngine::tensorflow: return "tensorflow";
  case OomEngine::nccl: return "nccl";
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
  case OomFormat::pytorch_async: return "pytorch-async";
  case OomFormat::pytorch_cpu: return "pytorch-cpu";
  case OomFormat::mps: return "pytorch-mps";
  case OomFormat::cuda_runtime: return "cuda-runtime";
  case OomFormat::hip_runtime: return "hip-runtime";
  case OomFormat::vllm: return "vllm";
  case OomFormat::sglang: return "sglang";
  case OomFormat::tgi: return "tgi";
  case OomFormat::llama_cpp: return "llama.cpp";
  case OomFormat::ollama: return "ollama";
  case OomFormat::xla: return "xla";
  case OomFormat::xla_compile: return "xla-compile";
  case OomFormat::tensorflow: return "tensorflow";
  case OomFormat::nccl: return "nccl";
  }
  return "unknown";
}

std::string_view to_string(OomMemory m) noexcept
{
  switch (m) {
  case OomMemory::device: return "gpu";
  case OomMemory::host: return "host";
  case OomMemory::unified: return "unified";
  }
  return "gpu";
}

std::string_view to_string(OomContext c) noexcept
{
  switch (c) {
  case OomContext::none: return "none";
  case OomContext::vllm: return "vllm";
  case OomContext::sglang: return "sglang";
  case OomContext::tgi: return "tgi";
  case OomContext::trainer: return "trainer";
  case OomContext::diffusion: return "diffusion";
  }
  return "none";
}

std::string_view to_string(OomStage s) noexcept
{
  switch (s) {
  case OomStage::unknown: return "unknown";
  case OomStage::weights: return "weights";
  case OomStage::kv_cache: return "kv_cache";
  case OomStage::compute: return "compute";
  }
  return "unknown";
}

bool oom_on_rocm(const OomReport& r) noexcept { return r.rocm; }

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
      m_state->saw_hint(hint(hit.anchor), m_lines + 1);
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

  const bool amendable = st.last && report.line - st.last->line <= k_amend_lines && st.last_error.empty();
  switch (role) {
  case Role::context:
    if (recognised && error.empty()) {
      update_context(report, anchor, st);
    }
    return;
  case Role::near_miss: st.cublas_line = report.line; return;
  case Role::amend:
    if (!recognised || !error.empty() || !amendable) {
      return;
    }
    if (report.kind == OomKind::nccl && st.last->kind == OomKind::nccl && !st.last->requested) {
      st.last->requested = report.requested;
      st.last_sized = true;
    } else if (llama_family(report) && llama_family(*st.last) && st.last->stage == OomStage::unknown) {
      st.last->stage = report.stage;
    }
    return;
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
  attach_context(report, st);
  const bool is_sized = sized(report);
  if (!is_sized && error.empty() && st.last && st.last_sized && st.last_error.empty() && report.line - st.last->line <= k_echo_lines) {
    // An echo of the sized report before it; vLLM's "warming up sampler with N dummy requests" adds N.
    if (report.max_num_seqs && !st.last->max_num_seqs) {
      st.last->max_num_seqs = report.max_num_seqs;
      st.last->context = report.context;
    }
    return;
  }
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
    return fail(Errc::invalid_input,
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
  resolve_engine(out, st);
  return out;
}

Result<OomReport> parse_oom(std::string_view text)
{
  OomScanner scanner;
  scanner.feed(text);
  return scanner.finish();
}

}  // namespace gpurent

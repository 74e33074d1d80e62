// SPDX-License-Identifier: MIT
// The resumable parser of one report: runs the step table of the anchor's shape
// (oom/shapes_*.cpp) and reads the sizes printed right before some anchors.
#include "oom/shapes.hpp"

namespace gpurent::oom_detail {
namespace {

// ---- Per anchor ----------------------------------------------------------------------------

void init(OomReport& r, OomEngine engine, OomFormat format, OomKind kind, OomMemory memory = OomMemory::device)
{
  r.engine = engine;
  r.format = format;
  r.kind = kind;
  r.memory = memory;
}

// The size printed right before the anchor, e.g. "allocating 1024.00 MiB on device 0:" before
// "cudaMalloc failed", or "(24.00 GiB" before "KV cache is needed".
void look_back(Anchor anchor, std::string_view text, std::size_t at, ParseState& s)
{
  OomReport& r = s.report;
  switch (anchor) {
  case Anchor::llama_malloc: {
    const Match m = match_ending_at(text, at, "allocating", "allocating{s}ondevice{i}:", 160);
    if (m.status == Status::ok) {
      r.requested = m.fields[0].bytes;
      r.device = static_cast<std::uint32_t>(m.fields[1].value);
    } else if (!m.error.empty()) {
      s.error = m.error;
    }
    return;
  }
  case Anchor::vllm_kv_needed: {
    const Match needed = match_ending_at(text, at, "(", "({s}", 40);
    if (needed.status == Status::ok) {
      r.kv_cache_needed = needed.fields[0].bytes;
    }
    const std::size_t floor = at > 300 ? at - 300 : 0;
    const std::size_t len = text.substr(0, at).rfind("maxseqlen(");
    if (len != std::string_view::npos && len >= floor) {
      const Match m = match_pattern(text, len, "maxseqlen({n})", true);
      if (m.status == Status::ok) {
        r.max_model_len = m.fields[0].value;
      }
    }
    return;
  }
  case Anchor::cuda_driver: {
    // TensorFlow/XLA's stream executor: "failed to alloc 34359738368 bytes on host: CUDA_ERROR_OUT_OF_MEMORY"
    const Match m = match_ending_at(text, at, "failedtoalloc", "failedtoalloc{b}byteson{w}:", 80);
    if (m.status == Status::ok) {
      r.requested = m.fields[0].bytes;
      if (m.fields[1].word == "host") {
        r.memory = OomMemory::host;
      }
    }
    return;
  }
  case Anchor::llama_layers: {
    const Match m = match_ending_at(text, at, "offloaded", "offloaded{n}/{n}", 40);
    if (m.status == Status::ok) {
      r.gpu_layers = m.fields[0].value;
      r.model_layers = m.fields[1].value;
    }
    return;
  }
  case Anchor::nccl_cuda:
  case Anchor::nccl_hip:
  case Anchor::nccl_size:
    // "host:pid:tid [3] include/alloc.h:178 NCCL WARN" (a line break may have taken the level word)
    if (text.substr(at > 12 ? at - 12 : 0, at > 12 ? 12 : at).find("NCCL") != std::string_view::npos) {
      const std::size_t open = text.substr(0, at).rfind('[');
      if (open != std::string_view::npos && at - open < 160) {
        const Match d = match_pattern(text, open, "[{i}]", true);
        if (d.status == Status::ok) {
          r.device = static_cast<std::uint32_t>(d.fields[0].value);
        }
      }
    }
    return;
  case Anchor::llama_failed:
    if (text.substr(at > 100 ? at - 100 : 0, at > 100 ? 100 : at).find("_cpu_") != std::string_view::npos) {
      set_backend(r, "CPU");
    }
    return;
  default: return;
  }
}

}  // namespace

ReportParser::ReportParser(Anchor anchor, std::string_view text, std::size_t pos, std::size_t anchor_length, std::uint64_t line)
    : m_anchor(anchor), m_start(pos), m_pos(pos)
{
  OomReport& r = m_state.report;
  r.line = line;
  m_steps = pytorch_steps(anchor);
  m_steps = m_steps != nullptr ? m_steps : serving_steps(anchor);
  m_steps = m_steps != nullptr ? m_steps : other_steps(anchor);
  m_step = m_steps != nullptr ? 0 : k_end;
  // The shapes whose first step repeats the anchor start at it; the others after it.
  const bool at_anchor = anchor == Anchor::cuda_oom || anchor == Anchor::hip_oom || anchor == Anchor::tried ||
                         anchor == Anchor::cuda_async || anchor == Anchor::mps || anchor == Anchor::vllm_len ||
                         anchor == Anchor::vllm_kv_needed;
  if (!at_anchor) {
    m_pos = pos + anchor_length;
  }
  switch (anchor) {
  case Anchor::cuda_oom:
  case Anchor::cuda_async: break;
  case Anchor::hip_oom:
    r.engine = OomEngine::pytorch_rocm;
    r.rocm = true;
    break;
  case Anchor::tried: m_step = 2; break;  // past "CUDA out of memory."
  case Anchor::cpu_allocator: init(r, OomEngine::pytorch, OomFormat::pytorch_cpu, OomKind::host_memory, OomMemory::host); break;
  case Anchor::mps: init(r, OomEngine::pytorch_mps, OomFormat::mps, OomKind::mps_allocator, OomMemory::unified); break;
  case Anchor::cuda_runtime:
  case Anchor::cuda_driver: init(r, OomEngine::cuda_runtime, OomFormat::cuda_runtime, OomKind::runtime); break;
  case Anchor::hip_runtime:
    init(r, OomEngine::hip_runtime, OomFormat::hip_runtime, OomKind::runtime);
    r.rocm = true;
    break;
  case Anchor::vllm_len:
  case Anchor::vllm_kv_needed: init(r, OomEngine::vllm, OomFormat::vllm, OomKind::kv_cache_too_small); break;
  case Anchor::vllm_no_kv: init(r, OomEngine::vllm, OomFormat::vllm, OomKind::no_kv_cache_memory); break;
  case Anchor::vllm_free: init(r, OomEngine::vllm, OomFormat::vllm, OomKind::vllm_startup_memory); break;
  case Anchor::sglang_increase:
  case Anchor::sglang_weights: init(r, OomEngine::sglang, OomFormat::sglang, OomKind::sglang_static); break;
  case Anchor::tgi: init(r, OomEngine::tgi, OomFormat::tgi, OomKind::tgi_warmup); break;
  case Anchor::llama_malloc:
  case Anchor::llama_failed:
  case Anchor::llama_unable:
  case Anchor::llama_vulkan: init(r, OomEngine::llama_cpp, OomFormat::llama_cpp, OomKind::device_alloc); break;
  case Anchor::ollama_requires:
  case Anchor::ollama_too_large: init(r, OomEngine::ollama, OomFormat::ollama, OomKind::host_memory, OomMemory::host); break;
  case Anchor::unsloth_host:
    init(r, OomEngine::unsloth, OomFormat::unsloth_studio, OomKind::host_memory, OomMemory::host);
    break;
  case Anchor::trtllm_executor: init(r, OomEngine::tensorrt_llm, OomFormat::trtllm_executor, OomKind::trtllm_component); break;
  case Anchor::trtllm_no_blocks: init(r, OomEngine::tensorrt_llm, OomFormat::trtllm_kv_blocks, OomKind::trtllm_kv_blocks); break;
  case Anchor::xla_oom:
  case Anchor::xla_request: init(r, OomEngine::jax, OomFormat::xla, OomKind::xla_alloc); break;
  case Anchor::xla_tpu: init(r, OomEngine::jax, OomFormat::xla_compile, OomKind::xla_compile); break;
  case Anchor::tf_oom: init(r, OomEngine::tensorflow, OomFormat::tensorflow, OomKind::tf_tensor); break;
  case Anchor::nccl_cuda:
  case Anchor::nccl_hip:
  case Anchor::nccl_size:
    init(r, OomEngine::nccl, OomFormat::nccl, OomKind::nccl);
    r.rocm = anchor == Anchor::nccl_hip;
    break;
  case Anchor::cublas_alloc: m_state.role = Role::near_miss; break;
  default: m_state.role = Role::context; break;
  }
  look_back(anchor, text, pos, m_state);
}

bool ReportParser::recognised() const noexcept
{
  const OomReport& r = m_state.report;
  switch (m_anchor) {
  case Anchor::cuda_oom:
  case Anchor::hip_oom: return true;
  case Anchor::tried: return r.total.has_value();
  case Anchor::vllm_len: return r.max_model_len.has_value();
  case Anchor::vllm_kv_needed: return r.kv_cache_available.has_value();
  case Anchor::cuda_runtime:
  case Anchor::cuda_driver:
  case Anchor::hip_runtime:
  case Anchor::vllm_no_kv:
  case Anchor::sglang_increase:
  case Anchor::sglang_weights:
  case Anchor::trtllm_executor:
  case Anchor::trtllm_no_blocks:
  case Anchor::llama_malloc:
  case Anchor::cublas_alloc: return true;
  case Anchor::llama_layers: return r.gpu_layers.has_value();
  default: return m_progress > 0;
  }
}

bool ReportParser::strong() const noexcept
{
  switch (m_anchor) {
  case Anchor::tried:
  case Anchor::llama_failed:
  case Anchor::llama_unable:
  case Anchor::nccl_size: return false;
  default: return m_state.role == Role::report;
  }
}

Status ReportParser::advance(std::string_view text, bool final)
{
  while (m_step != k_end) {
    const Status s = step(text, final);
    if (s == Status::eof) {
      return Status::eof;
    }
  }
  if (m_pos == m_start) {
    m_pos = m_start + 1;  // never restart the search on the same anchor
  }
  return Status::ok;
}

Status ReportParser::step(std::string_view text, bool final)
{
  const Step& st = m_steps[static_cast<std::size_t>(m_step)];
  std::size_t which = 0;
  for (const auto pattern : st.alts) {
    if (pattern.empty()) {
      break;
    }
    Match m = match_pattern(text, m_pos, pattern, final);
    if (m.status == Status::eof) {
      return Status::eof;
    }
    if (m.status == Status::ok) {
      m_pos = m.end;
      ++m_progress;
      if (st.apply != nullptr) {
        st.apply(m_state, which, m);
      }
      m_step = m_state.error.empty() ? st.next[which] : k_end;
      return Status::ok;
    }
    if (!m.error.empty()) {
      m_state.error = std::move(m.error);
      m_step = k_end;
      return Status::mismatch;
    }
    ++which;
  }
  m_step = st.on_miss;
  return Status::mismatch;
}

}  // namespace gpurent::oom_detail

// SPDX-License-Identifier: MIT
#include "oom/context.hpp"

#include <initializer_list>

namespace gpurent::oom_detail {

bool sized(const OomReport& r)
{
  return r.requested || r.total || r.free || r.max_model_len || r.kv_cache_available || r.xla_total ||
         r.kind == OomKind::tgi_warmup || r.kind == OomKind::sglang_static || r.kind == OomKind::no_kv_cache_memory ||
         r.kind == OomKind::trtllm_component || r.kind == OomKind::trtllm_kv_blocks;
}

bool llama_family(const OomReport& r) { return r.kind == OomKind::device_alloc; }

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

namespace {

// How far a hint (a path, a prefix) may be from the report it attributes.
constexpr std::uint64_t k_hint_before = 5000;
constexpr std::uint64_t k_hint_after = 50;

constexpr std::size_t hint(Anchor a) { return hint_index(a); }

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

}  // namespace

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
                                 Anchor::hint_llama, Anchor::hint_ollama, Anchor::hint_unsloth, Anchor::hint_trtllm});
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
    // Unsloth's frames sit among transformers' and TRL's: a trainer's log with Unsloth in it is Unsloth's.
    if (*h == Anchor::hint_trainer && nearest_hint(s, r.line, {Anchor::hint_unsloth})) {
      r.context = OomContext::unsloth;
      return;
    }
    r.context = *h == Anchor::hint_vllm     ? OomContext::vllm
                : *h == Anchor::hint_sglang ? OomContext::sglang
                : *h == Anchor::hint_tgi    ? OomContext::tgi
                : *h == Anchor::hint_trainer ? OomContext::trainer
                : *h == Anchor::hint_diffusion ? OomContext::diffusion
                : *h == Anchor::hint_unsloth   ? OomContext::unsloth
                : *h == Anchor::hint_trtllm    ? OomContext::tensorrt_llm
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

}  // namespace gpurent::oom_detail

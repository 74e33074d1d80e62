// SPDX-License-Identifier: MIT
// KV cache per GPU (docs/sizing.md §2): GQA heads, MLA latent, sliding windows, KV dtypes.
#include <algorithm>

#include "sizing/estimate_detail.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

using detail::U;

// Bytes one layer stores per token on one GPU.
U layer_bytes_per_token(const JobSpec& job, const detail::Ctx& c) noexcept
{
  const ModelArch& m = job.model;
  const U b32 = kv_bytes_per_32(resolve_kv_dtype(job));
  if (m.attention() == AttentionKind::mla) {
    // One latent (kv_lora_rank) plus the shared RoPE key per token, no K/V pair, no heads,
    // replicated on every TP rank.
    U bytes = detail::ceil_div((U{m.kv_lora_rank} + m.qk_rope_head_dim) * b32, 32);
    if (job.engine == Engine::vllm) {
      bytes = detail::ceil_div(bytes, 256) * 256;  // vLLM CacheEngine aligns MLA entries to 256 B
    }
    return bytes;
  }
  const U kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
  const U head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
  // TP splits KV heads; with fewer heads than ranks each rank keeps one (replicated).
  const U heads_per_gpu = std::max<U>(1, detail::ceil_div(kv_heads, c.tp));
  return detail::ceil_div(2 * heads_per_gpu * head_dim * b32, 32);
}

// Layers held on one GPU (inference engines that split layers across GPUs).
U layers_per_gpu(U layers, const detail::Ctx& c) noexcept { return detail::ceil_div(layers, c.layer_split); }

}  // namespace

Bytes kv_bytes_per_token(const JobSpec& job) noexcept
{
  const detail::Ctx c = detail::make_ctx(job);
  const U kv_layers = job.model.layers > job.model.kv_free_layers ? job.model.layers - job.model.kv_free_layers : 0;
  return Bytes{detail::sat_mul(layer_bytes_per_token(job, c), layers_per_gpu(kv_layers, c))};
}

Bytes kv_cache_bytes(const JobSpec& job, std::uint64_t tokens, std::uint64_t seqs) noexcept
{
  const detail::Ctx c = detail::make_ctx(job);
  const ModelArch& m = job.model;
  const U per_layer = layer_bytes_per_token(job, c);
  // Layers without a KV cache (linear attention, state-space layers) hold none.
  const U kv_layers = m.layers > m.kv_free_layers ? U{m.layers} - m.kv_free_layers : 0;
  U global = kv_layers;
  U sliding = 0;
  if (m.attention() == AttentionKind::sliding_hybrid) {
    global = std::min<U>(m.global_layers, kv_layers);
    sliding = kv_layers - global;
  }
  const U window_tokens = std::min<U>(tokens, m.sliding_window);
  const U per_seq = detail::sat_add(detail::sat_mul(detail::sat_mul(global, per_layer), tokens),
                                    detail::sat_mul(detail::sat_mul(sliding, per_layer), window_tokens));
  const U all = detail::sat_mul(per_seq, seqs);
  return Bytes{detail::ceil_div(all, c.layer_split)};
}

}  // namespace gpurent

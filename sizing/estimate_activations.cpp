// SPDX-License-Identifier: MIT
// Activations (docs/sizing.md §3): training per layer after Korthikanti et al. 2022 adapted to
// SwiGLU/GQA/MoE with flash attention, logits; inference peaks of vLLM, llama.cpp, transformers.
#include <algorithm>

#include "sizing/engine_release.hpp"
#include "sizing/estimate_detail.hpp"

namespace gpurent::detail {
namespace {

struct Widths {
  U h = 0;         // hidden
  U q = 0;         // query (and attention output) width per token
  U kv = 0;        // one of K or V per token (decompressed under MLA)
  U o = 0;         // attention output width (heads x v_head_dim)
  U dense_i = 0;   // dense MLP width
  U moe_i = 0;     // summed width of the experts a token visits (active + shared)
  U topk = 0;      // experts per token
  U experts = 0;
  U dense_layers = 0, moe_layers = 0;
};

Widths widths(const Ctx& c) noexcept
{
  const ModelArch& m = c.job.model;
  Widths w;
  w.h = m.hidden;
  const U head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
  if (m.attention() == AttentionKind::mla) {
    const U qk = U{m.qk_nope_head_dim} + m.qk_rope_head_dim;
    w.q = U{m.heads} * qk / c.tp;
    w.kv = U{m.heads} * qk / c.tp;
    w.o = U{m.heads} * m.v_head_dim / c.tp;
  } else {
    w.q = U{m.heads} * head_dim / c.tp;
    w.kv = std::max<U>(1, ceil_div(m.kv_heads > 0 ? m.kv_heads : m.heads, c.tp)) * head_dim;
    w.o = w.q;
  }
  w.dense_i = U{m.intermediate} / c.tp;
  if (m.is_moe()) {
    w.dense_layers = std::min<U>(m.dense_layers, m.layers);
    w.moe_layers = U{m.layers} - w.dense_layers;
    const U width = m.moe_intermediate > 0 ? m.moe_intermediate : m.intermediate;
    w.topk = std::min<U>(m.experts_active, m.experts);
    w.experts = m.experts;
    w.moe_i = (w.topk + m.shared_experts) * width / c.tp;
  } else {
    w.dense_layers = m.layers;
  }
  return w;
}

// Elements saved for backward per token by one layer (flash attention: no s^2 scores).
// Attention: norm input h, q/k/v input h, q, k, v, attention output; MLP: norm input h, MLP input
// h, gate, up, act(gate), down input (4 x width); MoE adds router logits and the routed copies.
U dense_layer_elems(const Widths& w) noexcept { return 4 * w.h + w.q + 2 * w.kv + w.o + 4 * w.dense_i; }
U moe_layer_elems(const Widths& w) noexcept
{
  return 4 * w.h + w.q + 2 * w.kv + w.o + 4 * w.moe_i + w.topk * w.h + 2 * w.experts;
}

// TRL's get_act_offloading_ctx_manager(max_fwd_stash_size=5): the offloaded activations forward
// keeps alive on the GPU while their copies to CPU RAM run.
constexpr U k_offload_stash = 5;

// Unsloth with use_gradient_checkpointing="unsloth": the GPU holds one layer's recomputation and the
// backward's hidden-width buffers around it (the residual stream's gradient in and out, the layer
// input brought back from CPU RAM, the fused kernels' outputs); k_unsloth_backward_hidden of them,
// fitted on Unsloth's own context-length tables (docs/sizing.md "Unsloth").
constexpr U k_unsloth_backward_hidden = 6;

}  // namespace

U training_activations(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  const Widths w = widths(c);
  const U tokens = sat_mul(j.batch, j.context);
  const U e = c.act_bytes;
  const U dense = dense_layer_elems(w);
  const U moe = moe_layer_elems(w);
  U per_token = 0;
  const U widest = w.moe_layers > 0 ? std::max(dense, moe) : dense;
  if (j.engine == Engine::unsloth && j.grad_checkpointing) {
    // Unsloth's gradient checkpointing sends every layer's checkpointed input to CPU RAM as forward
    // runs (unsloth_zoo Unsloth_Offloaded_Gradient_Checkpointer) and its fused cross-entropy (Apple's
    // Cut Cross Entropy) never holds the sequence's logits: the GPU keeps one layer's work.
    per_token = sat_add(widest, sat_mul(k_unsloth_backward_hidden, w.h));
    return sat_mul(sat_mul(tokens, per_token), e);
  }
  if (j.activation_offload) {
    // Activation offloading (TRL's OffloadActivations, from torchtune): every saved tensor goes to
    // CPU RAM as forward produces it; at most max_fwd_stash_size = 5 of them stay alive on the GPU,
    // and backward brings back one layer's while it computes the next. With checkpointing the
    // saved tensors are the layer inputs: the GPU holds the stash and one layer's recomputation;
    // without, one layer's saved tensors and the one being brought back.
    const U kept = std::min<U>(k_offload_stash, j.model.layers);
    per_token = j.grad_checkpointing ? sat_add(sat_mul(kept, w.h), widest) : sat_mul(2, widest);
  } else if (j.grad_checkpointing) {
    // Each layer keeps only its input; backward recomputes one layer at a time.
    per_token = sat_add(sat_mul(U{j.model.layers}, w.h), widest);
  } else {
    per_token = sat_add(sat_mul(w.dense_layers, dense), sat_mul(w.moe_layers, moe));
  }
  U bytes = sat_mul(sat_mul(tokens, per_token), e);
  // Logits: transformers materialises fp32 logits and their softmax (b*s*V*4, x2 in training);
  // torchtune's chunked cross-entropy keeps bf16 logits plus one fp32 chunk of eight.
  const U vocab = j.model.vocab / c.tp;
  const U logits_per_token = j.engine == Engine::torchtune ? vocab * 2 + vocab * 8 / 8 : vocab * 8;
  bytes = sat_add(bytes, sat_mul(tokens, logits_per_token));
  return bytes;
}

U inference_activations(const Ctx& c) noexcept
{
  const JobSpec& j = c.job;
  const ModelArch& m = j.model;
  const Widths w = widths(c);
  const U e = 2;
  switch (j.engine) {
  case Engine::vllm: {
    // The profiling pass (docs/sizing.md §3): a forward over the profiling tokens (residual +
    // hidden, fused qkv, the MLP's gate_up (2i) and act (i) outputs alive together; MoE: fused_moe
    // caches (3 x topk x N plus topk x h)), then a sampler run over the profiling sequences' fp32
    // logits. The two peaks do not overlap: the pass peaks at the larger. V1's sampler holds
    // logits, probabilities and its random draws (12 B per logit); V0's also the logprobs and the
    // top-p/top-k sort with its int64 indices (36 B, fitted on the V0 logs' activation peaks).
    const U tokens = vllm_profile_tokens(j);
    const U dense = w.dense_layers > 0 ? 2 * w.h + w.q + 2 * w.kv + 3 * w.dense_i : 0;
    const U moe = w.moe_layers > 0 ? 2 * w.h + w.q + 2 * w.kv + 3 * w.moe_i + w.topk * w.h : 0;
    const U forward = sat_mul(sat_mul(tokens, std::max(dense, moe)), e);
    const U per_logit = vllm_v0(j) ? k_vllm_v0_sampler_bytes : k_vllm_v1_sampler_bytes;
    const U sampler = sat_mul(sat_mul(vllm_profile_seqs(j), m.vocab), per_logit);
    return std::max(forward, sampler);
  }
  case Engine::tensorrt_llm: {
    // The profiling run (_util.py, tests/data/trtllm/memory.md): dummy prompts of --max_num_tokens
    // tokens in all, each generating one token; its torch peak above the weights is one forward
    // over those tokens, the tensors counted as for vLLM's pass. gpt-oss-120b at 8192 tokens:
    // 0.85 GiB logged ("Memory dynamically allocated during inference"), 0.87 GiB by this count.
    // The last tokens' logits (one row per dummy prompt) are a few MiB and left out.
    const U tokens = trtllm_max_num_tokens(j);
    const U dense = w.dense_layers > 0 ? 2 * w.h + w.q + 2 * w.kv + 3 * w.dense_i : 0;
    const U moe = w.moe_layers > 0 ? 2 * w.h + w.q + 2 * w.kv + 3 * w.moe_i + w.topk * w.h : 0;
    return sat_mul(sat_mul(tokens, std::max(dense, moe)), e);
  }
  case Engine::llama_cpp:
  case Engine::ollama: {
    // ggml compute buffer, reserved for the worst-case ubatch over the whole KV (n_ctx = context
    // x parallel slots), at the larger of two points of the graph. In attention: the fp32 KQ matrix
    // (n_head x n_ctx x n_ubatch, without flash attention), four fp32 hidden-size tensors of the
    // ubatch, and one f16 K/V view over n_ctx. At the output: the fp32 logits of every ubatch
    // token (the reserve assumes all of them are outputs) and the final norm's hidden states.
    const U n_ctx = sat_mul(j.context, j.batch);
    const U ub = std::min<U>(k_llama_cpp_ubatch, std::max<U>(n_ctx, 1));
    const U head_dim = m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
    const U kv_dim = U{m.kv_heads > 0 ? m.kv_heads : m.heads} * head_dim;
    U attention = sat_add(sat_mul(sat_mul(4 * ub, m.hidden), 4), sat_mul(n_ctx, kv_dim * 2));
    if (!j.flash_attention) {
      attention = sat_add(attention, sat_mul(sat_mul(sat_mul(ub, m.heads), n_ctx), 4));
    }
    const U output = sat_mul(sat_mul(ub, sat_add(m.vocab, m.hidden)), 4);
    return std::max(attention, output);
  }
  default: {
    // transformers generate(): prefill of the whole prompt (SDPA/flash, one layer alive at a
    // time) and fp32 logits + probabilities of the last position of every sequence.
    const U tokens = sat_mul(j.batch, j.context);
    const U dense = 2 * w.h + w.q + 2 * w.kv + 3 * w.dense_i;
    const U moe = w.moe_layers > 0 ? 2 * w.h + w.q + 2 * w.kv + 3 * w.moe_i + w.topk * w.h : 0;
    const U forward = sat_mul(sat_mul(tokens, std::max(dense, moe)), e);
    return sat_add(forward, sat_mul(sat_mul(j.batch, m.vocab), 8));
  }
  }
}

}  // namespace gpurent::detail

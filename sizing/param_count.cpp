// SPDX-License-Identifier: MIT
#include "sizing/param_count.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace gpurent {
namespace {

using U = std::uint64_t;

class Counter {
public:
  explicit Counter(ParamBreakdown& b) : m_b(b) {}
  // Adds a linear layer kind; returns its weights (biases are added by the caller).
  U linear(std::string name, U in, U out, U count, bool expert = false)
  {
    if (in == 0 || out == 0 || count == 0) {
      return 0;
    }
    m_b.linears.push_back(LinearModule{std::move(name), in, out, count, expert});
    m_b.linear_weights += in * out * count;
    return in * out * count;
  }

private:
  ParamBreakdown& m_b;
};

// Attention of one layer: projections, biases, q/k norms, sinks. Also registers linears.
U attention_params(const ModelArch& a, Counter& c, U layers)
{
  const U h = a.hidden;
  const U heads = a.heads;
  U total = 0;
  if (a.kv_lora_rank > 0) {
    // Multi-head latent attention (DeepSeek V2/V3).
    const U qk_head = U{a.qk_nope_head_dim} + a.qk_rope_head_dim;
    if (a.q_lora_rank > 0) {
      total += c.linear("q_a_proj", h, a.q_lora_rank, layers) + U{a.q_lora_rank} * layers;  // + q_a_layernorm
      total += c.linear("q_b_proj", a.q_lora_rank, heads * qk_head, layers);
    } else {
      total += c.linear("q_proj", h, heads * qk_head, layers);
    }
    total += c.linear("kv_a_proj_with_mqa", h, U{a.kv_lora_rank} + a.qk_rope_head_dim, layers);
    total += U{a.kv_lora_rank} * layers;  // kv_a_layernorm
    total += c.linear("kv_b_proj", a.kv_lora_rank, heads * (U{a.qk_nope_head_dim} + a.v_head_dim), layers);
    total += c.linear("o_proj", heads * a.v_head_dim, h, layers);
    return total;
  }
  const U hd = a.head_dim;
  const U q_out = heads * hd;
  const U kv_out = U{a.kv_heads} * hd;
  total += c.linear("q_proj", h, q_out, layers);
  total += c.linear("k_proj", h, kv_out, layers);
  total += c.linear("v_proj", h, kv_out, layers);
  total += c.linear("o_proj", q_out, h, layers);
  if (a.qkv_bias) {
    total += (q_out + 2 * kv_out) * layers;
  }
  if (a.o_bias) {
    total += h * layers;
  }
  if (a.qk_norm) {
    total += 2 * hd * layers;
  }
  if (a.attention_sinks) {
    total += heads * layers;
  }
  return total;
}

// A dense MLP of width `inter` repeated `count` times (gated: gate/up/down; else fc1/fc2).
U mlp_params(const ModelArch& a, Counter& c, const std::string& prefix, U inter, U count, bool expert)
{
  const U h = a.hidden;
  U total = 0;
  if (a.gated_mlp) {
    total += c.linear(prefix + "gate_proj", h, inter, count, expert);
    total += c.linear(prefix + "up_proj", h, inter, count, expert);
    total += c.linear(prefix + "down_proj", inter, h, count, expert);
    if (a.mlp_bias) {
      total += (2 * inter + h) * count;
    }
  } else {
    total += c.linear(prefix + "fc1", h, inter, count, expert);
    total += c.linear(prefix + "fc2", inter, h, count, expert);
    if (a.mlp_bias) {
      total += (inter + h) * count;
    }
  }
  return total;
}

}  // namespace

ParamBreakdown count_params(const ModelArch& a)
{
  ParamBreakdown b;
  Counter c{b};
  const U h = a.hidden;
  const U layers = a.layers;
  b.embedding = U{a.vocab} * h;
  b.lm_head = a.tied_embeddings ? 0 : U{a.vocab} * h;
  b.attention = attention_params(a, c, layers);

  const U norm_width = a.norm_bias ? 2 * h : h;
  b.norms = (U{a.norms_per_layer} * layers + 1) * norm_width;

  U moe_layers = 0;
  U dense_layers = layers;
  if (a.is_moe()) {
    dense_layers = a.dense_layers < a.layers ? a.dense_layers : layers;
    moe_layers = layers - dense_layers;
  }
  b.mlp_dense = mlp_params(a, c, "", a.intermediate, dense_layers, false);
  U active_experts = 0;
  if (moe_layers > 0) {
    const U width = a.moe_intermediate > 0 ? a.moe_intermediate : a.intermediate;
    const U experts = a.experts;
    b.experts = mlp_params(a, c, "experts.", width, experts * moe_layers, true);
    if (a.shared_experts > 0) {
      b.shared_experts = mlp_params(a, c, "shared_experts.", width * a.shared_experts, moe_layers, false);
    }
    b.router = experts * h * moe_layers;
    if (a.router_bias) {
      b.router += experts * moe_layers;
    }
    active_experts = experts > 0 ? b.experts / experts * (a.experts_active < a.experts ? a.experts_active : experts) : 0;
  }
  b.other = a.extra_params;
  b.total = b.embedding + b.lm_head + b.attention + b.mlp_dense + b.shared_experts + b.experts + b.router +
            b.norms + b.other;
  b.active = b.total - b.experts + active_experts;
  b.per_layer_linear = layers > 0 ? b.linear_weights / layers : 0;
  return b;
}

}  // namespace gpurent

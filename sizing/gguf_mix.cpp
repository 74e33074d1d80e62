// SPDX-License-Identifier: MIT
// llama.cpp's per-tensor type choice (src/llama-quant.cpp llama_tensor_get_type,
// tensor_type_fallback, llama_ftype_get_default_type), restated from its rules for the tensors
// gpurent's architectures have. Type ids and block sizes are ggml's (sizing/gguf_header.hpp).
#include "sizing/gguf_mix.hpp"

#include <string>
#include <vector>

#include "sizing/gguf_header.hpp"
#include "sizing/param_count.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;

// ggml type ids (ggml.h).
enum T : std::uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q2_K = 10, Q3_K = 11, Q4_K = 12,
  Q5_K = 13, Q6_K = 14, IQ2_XXS = 16, IQ3_XXS = 18, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
};

enum class Cat { token_embd, output, attn_q, attn_k, attn_v_like, attn_output, attn_qkv, ffn_up, ffn_gate, ffn_down, other };

struct Tensor {
  Cat cat = Cat::other;
  U ne0 = 0;        // row length (input features)
  U elements = 0;
  U layer = 0;
  int part = 0;     // 0 embedding, 1 linear, 2 experts
};

U block_of(std::uint32_t t) { return ggml_type(t)->block; }

U bytes_of(std::uint32_t t, U elements)
{
  const auto g = ggml_type(t);
  return elements / g->block * g->bytes;
}

bool more_bits(U i, U n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

struct Rules {
  WeightFormat f;
  std::uint32_t base = Q4_K;
  U n_expert = 0;
  U gqa = 1;
  U layers = 0;
  bool is_70b = false;
  bool imatrix = false;
  bool tied = false;
  U i_wv = 0;       // attn_v-like tensors seen
  U i_down = 0;     // ffn_down tensors seen

  bool is(WeightFormat g) const { return f == g; }
  bool iq2() const { return is(WeightFormat::gguf_iq2_xxs); }

  std::uint32_t choose(const Tensor& t)
  {
    std::uint32_t type = base;
    const bool output_like = t.cat == Cat::output || (tied && t.cat == Cat::token_embd);
    if (output_like) {
      if (t.ne0 % block_of(base) != 0) {
        type = Q8_0;
      } else if (iq2() || is(WeightFormat::gguf_iq3_xxs)) {
        type = Q5_K;
      } else if (base != Q8_0) {
        type = Q6_K;
      }
    } else if (t.cat == Cat::token_embd) {
      if (iq2()) {
        type = Q2_K;
      } else if (is(WeightFormat::gguf_iq3_xxs)) {
        type = IQ3_S;
      }
    } else if (iq2()) {
      if (t.cat == Cat::attn_v_like || t.cat == Cat::attn_qkv) {
        type = gqa >= 4 || n_expert >= 4 ? Q4_K : Q2_K;
        ++i_wv;
      } else if (n_expert == 8 && t.cat == Cat::attn_k) {
        type = Q4_K;
      } else if (t.cat == Cat::ffn_down) {
        if (i_down < layers / 8) {
          type = Q2_K;
        }
        ++i_down;
      } else if (t.cat == Cat::attn_output && n_expert == 8) {
        type = Q5_K;
      }
    } else if (t.cat == Cat::attn_v_like || t.cat == Cat::attn_qkv) {
      // attn_v, attn_qkv and attn_kv_b: llama.cpp's category_is_attn_v, so its later attn_qkv
      // branch is never reached.
      {
        if (is(WeightFormat::gguf_q2_k)) {
          type = gqa >= 4 ? Q4_K : Q3_K;
        } else if (is(WeightFormat::gguf_iq3_xxs)) {
          type = gqa >= 4 ? Q4_K : (imatrix ? IQ3_XXS : IQ3_S);
        } else if (is(WeightFormat::gguf_q3_k_m)) {
          type = i_wv < 2 ? Q5_K : Q4_K;
        } else if (is(WeightFormat::gguf_q3_k_l)) {
          type = Q5_K;
        } else if ((is(WeightFormat::gguf_iq4_nl) || is(WeightFormat::gguf_iq4_xs)) && gqa >= 4) {
          type = Q5_K;
        } else if ((is(WeightFormat::gguf_q4_k_m) || is(WeightFormat::gguf_q5_k_m)) && more_bits(i_wv, layers)) {
          type = Q6_K;
        } else if (is(WeightFormat::gguf_q4_k_s) && i_wv < 4) {
          type = Q5_K;
        }
        if (is_70b && (type == Q3_K || type == Q4_K)) {
          type = Q5_K;
        }
        if (n_expert == 8) {
          type = Q8_0;
        }
      }
      ++i_wv;
    } else if (t.cat == Cat::attn_k) {
      if (n_expert == 8) {
        type = Q8_0;
      } else if (is(WeightFormat::gguf_iq3_xxs)) {
        type = IQ2_S;
      }
    } else if (t.cat == Cat::attn_q) {
      if (is(WeightFormat::gguf_iq3_xxs)) {
        type = IQ2_S;
      }
    } else if (t.cat == Cat::ffn_down) {
      // MoE models: the layer from the tensor's name; dense ones: the ffn_down count so far (the
      // same thing, one ffn_down per layer).
      const U i = n_expert > 1 ? t.layer : i_down;
      const U n = layers;
      if (is(WeightFormat::gguf_q2_k)) {
        type = Q3_K;
      } else if (is(WeightFormat::gguf_q3_k_m)) {
        type = i < n / 16 ? Q5_K : Q4_K;
      } else if (is(WeightFormat::gguf_q3_k_l)) {
        type = Q5_K;
      } else if (is(WeightFormat::gguf_q4_k_m)) {
        type = more_bits(i, n) ? Q6_K : type;
      } else if (i < n / 8 && (is(WeightFormat::gguf_iq4_nl) || is(WeightFormat::gguf_iq4_xs)) && !imatrix) {
        type = Q5_K;
      } else if (is(WeightFormat::gguf_q5_k_m) && more_bits(i, n)) {
        type = Q6_K;
      } else if (is(WeightFormat::gguf_q4_k_s) && i < n / 8) {
        type = Q5_K;
      }
      ++i_down;
    } else if (t.cat == Cat::attn_output) {
      if (n_expert == 8) {
        if (is(WeightFormat::gguf_q2_k) || is(WeightFormat::gguf_iq3_xxs) || is(WeightFormat::gguf_q3_k_s) ||
            is(WeightFormat::gguf_q3_k_m) || is(WeightFormat::gguf_iq4_nl) || is(WeightFormat::gguf_q4_k_s) ||
            is(WeightFormat::gguf_q4_k_m) || is(WeightFormat::gguf_iq4_xs)) {
          type = Q5_K;
        }
      } else if (is(WeightFormat::gguf_q2_k)) {
        type = Q3_K;
      } else if (is(WeightFormat::gguf_iq3_xxs)) {
        type = IQ3_S;
      } else if (is(WeightFormat::gguf_q3_k_m)) {
        type = Q4_K;
      } else if (is(WeightFormat::gguf_q3_k_l)) {
        type = Q5_K;
      }
    }
    return type;
  }
};

// tensor_type_fallback: a row length the type's block does not divide takes the fallback type,
// and F16 when even that does not divide it.
std::uint32_t fallback(std::uint32_t type, U ne0, U& count)
{
  if (type == F32 || type == F16 || ne0 % block_of(type) == 0) {
    return type;
  }
  ++count;
  std::uint32_t to = F16;
  switch (type) {
  case IQ2_XXS: case IQ2_S: case IQ3_XXS: case IQ3_S: case IQ4_XS: to = IQ4_NL; break;
  case Q2_K: case Q3_K: to = Q4_0; break;
  case Q4_K: to = Q5_0; break;
  case Q5_K: to = Q5_1; break;
  case Q6_K: to = Q8_0; break;
  default: break;
  }
  return ne0 % block_of(to) == 0 ? to : F16;
}

std::optional<std::uint32_t> base_type(WeightFormat f)
{
  switch (f) {
  case WeightFormat::gguf_f16: return F16;
  case WeightFormat::gguf_q8_0: return Q8_0;
  case WeightFormat::gguf_q6_k: return Q6_K;
  case WeightFormat::gguf_q5_k_m:
  case WeightFormat::gguf_q5_k_s: return Q5_K;
  case WeightFormat::gguf_q5_0: return Q5_0;
  case WeightFormat::gguf_q5_1: return Q5_1;
  case WeightFormat::gguf_q4_k_m:
  case WeightFormat::gguf_q4_k_s: return Q4_K;
  case WeightFormat::gguf_q4_0: return Q4_0;
  case WeightFormat::gguf_q4_1: return Q4_1;
  case WeightFormat::gguf_q3_k_l:
  case WeightFormat::gguf_q3_k_m:
  case WeightFormat::gguf_q3_k_s: return Q3_K;
  case WeightFormat::gguf_q2_k: return Q2_K;
  case WeightFormat::gguf_iq4_xs: return IQ4_XS;
  case WeightFormat::gguf_iq4_nl: return IQ4_NL;
  case WeightFormat::gguf_iq3_xxs: return IQ3_XXS;
  case WeightFormat::gguf_iq2_xxs: return IQ2_XXS;
  default: return std::nullopt;
  }
}

// The quantizable tensors of one layer, in the order llama.cpp's names sort within a block
// (attn_* before ffn_*; the counters only need each layer's tensors together).
void layer_tensors(const ModelArch& m, U i, std::vector<Tensor>& out)
{
  const U h = m.hidden;
  const U heads = m.heads;
  const auto add = [&](Cat c, U ne0, U rows, int part) { out.push_back({c, ne0, ne0 * rows, i, part}); };
  if (m.kv_lora_rank > 0) {
    const U qk = U{m.qk_nope_head_dim} + m.qk_rope_head_dim;
    if (m.q_lora_rank > 0) {
      add(Cat::other, h, m.q_lora_rank, 1);                // attn_q_a
      add(Cat::other, m.q_lora_rank, heads * qk, 1);       // attn_q_b
    } else {
      add(Cat::attn_q, h, heads * qk, 1);
    }
    add(Cat::other, h, U{m.kv_lora_rank} + m.qk_rope_head_dim, 1);                  // attn_kv_a_mqa
    add(Cat::attn_v_like, m.kv_lora_rank, heads * (U{m.qk_nope_head_dim} + m.v_head_dim), 1);  // attn_kv_b
    add(Cat::attn_output, heads * m.v_head_dim, h, 1);
  } else {
    const U q = heads * m.head_dim;
    const U kv = U{m.kv_heads} * m.head_dim;
    if (m.family == "phi3" || m.family == "phi") {
      add(Cat::attn_qkv, h, q + 2 * kv, 1);
    } else {
      add(Cat::attn_k, h, kv, 1);
      add(Cat::attn_q, h, q, 1);
      add(Cat::attn_v_like, h, kv, 1);
    }
    add(Cat::attn_output, q, h, 1);
  }
  const bool moe_layer = m.is_moe() && i >= (m.dense_layers < m.layers ? m.dense_layers : 0);
  const auto mlp = [&](U width, U copies, int part) {
    if (width == 0) {
      return;
    }
    if (!m.gated_mlp) {
      add(Cat::ffn_down, width, h * copies, part);
      add(Cat::ffn_up, h, width * copies, part);
    } else if (m.family == "phi3") {
      add(Cat::ffn_down, width, h * copies, part);
      add(Cat::ffn_up, h, 2 * width * copies, part);  // gate and up fused
    } else {
      add(Cat::ffn_down, width, h * copies, part);
      add(Cat::ffn_gate, h, width * copies, part);
      add(Cat::ffn_up, h, width * copies, part);
    }
  };
  if (moe_layer) {
    const U width = m.moe_intermediate > 0 ? m.moe_intermediate : m.intermediate;
    mlp(width, m.experts, 2);                      // ffn_*_exps: one 3-D tensor each
    mlp(width * m.shared_experts, 1, 1);           // ffn_*_shexp
  } else {
    mlp(m.intermediate, 1, 1);
  }
}

}  // namespace

std::optional<GgufMix> gguf_mix(const ModelArch& m, WeightFormat f)
{
  const auto base = base_type(f);
  if (!base || m.layers == 0 || m.hidden == 0) {
    return std::nullopt;
  }
  Rules r{f};
  r.base = *base;
  r.n_expert = m.is_moe() ? m.experts : 0;
  r.gqa = m.kv_heads > 0 && m.kv_lora_rank == 0 ? m.heads / m.kv_heads : 1;
  r.layers = m.layers;
  // llama.cpp's LLM_TYPE_70B: 80-layer llama and qwen2 models (Llama-2/3 70B, Qwen2.5-72B).
  r.is_70b = m.layers == 80 && (m.family == "llama" || m.family == "qwen2");
  r.imatrix = f == WeightFormat::gguf_iq2_xxs || f == WeightFormat::gguf_iq3_xxs;  // they require one
  r.tied = m.tied_embeddings;

  std::vector<Tensor> tensors;
  tensors.push_back({Cat::token_embd, m.hidden, U{m.vocab} * m.hidden, 0, 0});
  if (!m.tied_embeddings) {
    tensors.push_back({Cat::output, m.hidden, U{m.vocab} * m.hidden, 0, 0});
  }
  for (U i = 0; i < m.layers; ++i) {
    layer_tensors(m, i, tensors);
  }
  GgufMix mix;
  U linear_weights = 0;
  for (const Tensor& t : tensors) {
    std::uint32_t type = r.base;
    if (r.base != F16) {  // ggml_is_quantized(default_type): F16 files keep every tensor F16
      type = fallback(r.choose(t), t.ne0, mix.fallbacks);
    }
    const U bytes = bytes_of(type, t.elements);
    if (bytes_of(type, t.elements) > bytes_of(r.base, t.elements) && t.ne0 % block_of(r.base) == 0) {
      ++mix.raised;
    }
    (t.part == 0 ? mix.embedding : t.part == 1 ? mix.linear : mix.experts) += bytes;
    if (t.cat == Cat::token_embd) {
      mix.token_embd = bytes;
    }
    if (t.part != 0) {
      linear_weights += t.elements;
    }
  }
  // Everything else of the text model (norms, biases, routers, sinks) stays F32; weights outside
  // it (a vision tower, in its own mmproj file) are counted at F16.
  const ParamBreakdown pb = count_params(m);
  const U embed = pb.embedding + pb.lm_head;
  const U text = pb.total > pb.other ? pb.total - pb.other : pb.total;
  const U rest = text > embed + linear_weights ? text - embed - linear_weights : 0;
  mix.other = rest * 4 + pb.other * 2;
  return mix;
}

}  // namespace gpurent

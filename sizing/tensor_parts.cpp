// SPDX-License-Identifier: MIT
// Tensor names -> parts of the model (docs/models.md, "Weights from the files").
#include "sizing/tensor_parts.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "common/text.hpp"

namespace gpurent::tensor_parts {

std::vector<std::string_view> segments_of(std::string_view name) { return split(name, '.'); }

bool has_segment(const std::vector<std::string_view>& seg, std::initializer_list<std::string_view> names)
{
  return std::any_of(seg.begin(), seg.end(), [&](std::string_view s) {
    return std::find(names.begin(), names.end(), s) != names.end();
  });
}

bool outside_text(const std::vector<std::string_view>& seg)
{
  if (has_segment(seg, {"vision_tower", "vision_model", "visual", "vision_encoder", "multi_modal_projector",
                        "mm_projector", "audio_tower", "audio_model", "audio_encoder", "image_newline", "embed_vision",
                        "embed_audio", "vision_embed_tokens", "vpm", "resampler", "mm_input_projection"})) {
    return true;
  }
  // Projectors named by position: InternVL's top-level mlp1, Idefics3's model.connector.
  const std::size_t head = std::min<std::size_t>(seg.size(), 2);
  return std::any_of(seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(head),
                     [](std::string_view s) { return s == "mlp1" || s == "connector"; });
}

bool is_aux(const std::vector<std::string_view>& seg, const std::unordered_map<std::string_view, std::size_t>& names,
            std::string_view name)
{
  if (seg.empty()) {
    return false;
  }
  const std::string_view last = seg.back();
  static constexpr std::array<std::string_view, 24> k_aux{
      "qzeros",       "scales",           "g_idx",          "weight_scale",       "weight_scale_inv",
      "input_scale",  "weight_zero_point", "weight_g_idx",  "weight_shape",       "absmax",
      "quant_map",    "nested_absmax",    "nested_quant_map", "SCB",              "weight_format",
      "k_scale",      "v_scale",          "q_scale",        "prob_scale",         "output_scale",
      "weight_scale_2", "weight_global_scale", "input_global_scale", "input_zero_point",
  };
  if (std::find(k_aux.begin(), k_aux.end(), last) != k_aux.end()) {
    return true;
  }
  if (has_segment(seg, {"quant_state"})) {
    return true;  // bitsandbytes: <weight>.quant_state.bitsandbytes__nf4
  }
  // MXFP4: <name>_scales beside <name>_blocks.
  if (last.ends_with("_scales")) {
    const std::string blocks = std::string(name.substr(0, name.size() - 7)) + "_blocks";
    return names.contains(blocks);
  }
  return false;
}

Part part_of(const std::vector<std::string_view>& seg, std::size_t rank, bool aux)
{
  const bool matrix = aux || rank >= 2;
  if (std::any_of(seg.begin(), seg.end(), [](std::string_view s) { return s == "experts" || s.ends_with("_exps"); })) {
    return Part::experts;
  }
  if (has_segment(seg, {"router", "ffn_gate_inp", "shared_expert_gate", "gate_inp", "e_score_correction_bias"})) {
    return Part::other;  // MoE routers stay in 16 bits
  }
  if (seg.size() >= 2 && seg[seg.size() - 2] == "gate" && (seg.back() == "weight" || seg.back() == "bias")) {
    return Part::other;  // mlp.gate / block_sparse_moe.gate: the router of Qwen/DeepSeek/Mixtral MoE
  }
  if (matrix && (has_segment(seg, {"embed_tokens", "wte", "wpe", "word_embeddings", "tok_embeddings", "lm_head",
                                   "embed_out", "position_embeddings", "token_embd", "per_layer_token_embd",
                                   "embed_tokens_per_layer"}) ||
                 (seg.size() == 2 && seg[0] == "output" && seg[1] == "weight"))) {
    return Part::embedding;
  }
  return matrix ? Part::linear : Part::other;
}

U elements(const std::vector<U>& shape)
{
  U n = 1;
  for (const U d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return UINT64_MAX;
    }
  }
  return n;
}

U sat_add(U a, U b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
U sat_mul(U a, U b)
{
  U r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

WeightGroup& group(CheckpointWeights& w, Part p)
{
  switch (p) {
  case Part::embedding: return w.embedding;
  case Part::linear: return w.linear;
  case Part::experts: return w.experts;
  default: return w.other;
  }
}

}  // namespace gpurent::tensor_parts

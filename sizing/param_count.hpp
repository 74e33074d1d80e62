// SPDX-License-Identifier: MIT
#pragma once
// The parameter count of a decoder-only transformer, derived from its architecture alone,
// broken down by the parts that the memory estimate treats differently (embeddings and lm_head
// often stay in 16-bit under quantization, experts may be MXFP4 or offloaded, LoRA attaches to
// linear modules).
#include <cstdint>
#include <string>
#include <vector>

#include "sizing/model.hpp"

namespace gpurent {

// One kind of linear layer in the decoder, with its shape and how many instances the model has.
// Names follow the Hugging Face / PEFT module names ("q_proj", "gate_proj", "kv_b_proj", …).
struct LinearModule {
  std::string name;
  std::uint64_t in_features = 0;
  std::uint64_t out_features = 0;
  std::uint64_t count = 0;   // instances in the whole model (layers, times experts for experts)
  bool expert = false;       // a routed-expert weight (MoE)
  [[nodiscard]] std::uint64_t weights() const noexcept { return in_features * out_features * count; }
};

struct ParamBreakdown {
  std::uint64_t embedding = 0;       // token embedding (vocab x hidden)
  std::uint64_t lm_head = 0;         // output projection; 0 when tied to the embedding
  std::uint64_t attention = 0;       // all layers: projections, their biases, q/k norms, sinks
  std::uint64_t mlp_dense = 0;       // dense MLPs (every layer of a dense model, DeepSeek's first layers)
  std::uint64_t shared_experts = 0;  // always-active shared experts of MoE layers
  std::uint64_t experts = 0;         // routed experts, all of them, with their biases
  std::uint64_t router = 0;          // MoE gates (and their biases)
  std::uint64_t norms = 0;           // every RMSNorm/LayerNorm weight (and bias), final norm included
  std::uint64_t other = 0;           // ModelArch::extra_params (vision tower, projector)
  std::uint64_t total = 0;           // sum of all of the above
  std::uint64_t active = 0;          // parameters used per token (MoE: experts_active of experts)
  // Sum of the weights of all decoder linear layers (what weight-only quantization converts;
  // excludes embedding, lm_head, norms, biases and router).
  std::uint64_t linear_weights = 0;
  std::uint64_t per_layer_linear = 0;  // linear_weights / layers (average decoder layer)
  std::vector<LinearModule> linears;   // every kind of decoder linear layer with its shape
};

// Total for any ModelArch; never fails (a zero-sized arch gives zeros).
[[nodiscard]] ParamBreakdown count_params(const ModelArch& arch);

}  // namespace gpurent

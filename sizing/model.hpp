// SPDX-License-Identifier: MIT
#pragma once
// The architecture of one model, exactly as its published config.json gives it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sizing/checkpoint.hpp"

namespace gpurent {

enum class AttentionKind {
  full,            // every layer attends over the whole context (MHA/GQA/MQA)
  sliding_hybrid,  // some layers use a sliding window (Gemma 2/3, gpt-oss, Mistral v0.1)
  mla,             // multi-head latent attention (DeepSeek V2/V3): caches a latent per token
};

struct ModelArch {
  std::string name;                  // short name, e.g. "llama-3.1-8b"
  std::vector<std::string> hf_ids;   // e.g. {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct"}
  std::string family;                // config.json model_type, e.g. "llama", "qwen2", "mixtral"
  std::uint64_t params = 0;          // exact parameter count (all experts included)
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t intermediate = 0;    // dense MLP width
  std::uint32_t vocab = 0;
  bool tied_embeddings = false;
  std::uint32_t max_context = 0;
  // Mixture of experts (0 when dense).
  std::uint32_t experts = 0;
  std::uint32_t experts_active = 0;
  std::uint32_t moe_intermediate = 0;  // per-expert MLP width
  std::uint32_t shared_experts = 0;
  // Layers with a dense MLP among MoE ones: DeepSeek's leading first_k_dense_replace, Llama 4's
  // interleaved ones (interleave_moe_layer_step); the count is what sizing reads.
  std::uint32_t dense_layers = 0;
  // Sliding-window attention: window size and how many layers attend globally.
  std::uint32_t sliding_window = 0;
  std::uint32_t global_layers = 0;     // layers with full attention (== layers when no SWA)
  // Multi-head latent attention (DeepSeek V2/V3).
  std::uint32_t kv_lora_rank = 0;
  std::uint32_t q_lora_rank = 0;
  std::uint32_t qk_rope_head_dim = 0;
  std::uint32_t qk_nope_head_dim = 0;
  std::uint32_t v_head_dim = 0;
  // Details that only change the parameter count (biases, norms) or the weight format.
  bool qkv_bias = false;               // q/k/v projections carry biases (Qwen2, Phi-2, gpt-oss)
  bool o_bias = false;                 // output projection bias (gpt-oss, Phi-2)
  bool mlp_bias = false;               // MLP / expert biases (gpt-oss, Phi-2)
  bool gated_mlp = true;               // gate+up+down (SwiGLU/GeGLU); false: fc1+fc2 (Phi-2)
  bool qk_norm = false;                // per-head RMSNorm on q and k (Qwen3, Gemma 3)
  bool norm_bias = false;              // LayerNorm with a bias (Phi-2)
  bool attention_sinks = false;        // one learned sink logit per head and layer (gpt-oss)
  bool router_bias = false;            // MoE gate bias (gpt-oss; DeepSeek-V3 e_score_correction_bias)
  std::uint32_t norms_per_layer = 2;   // Gemma 2/3 have 4 (pre/post attention and MLP)
  bool mxfp4_experts = false;          // expert weights published in MXFP4 (gpt-oss)
  std::string dtype;                   // torch_dtype of the published weights, e.g. "bfloat16"
  // The checkpoint's own storage format: config.json quantization_config.quant_method ("fp8",
  // "mxfp4", "gptq", "awq", "compressed-tensors", "bitsandbytes"; "" = 16-bit weights) and its
  // bits per weight where the method has several (gptq/awq/bitsandbytes/compressed-tensors: 4
  // or 8; 0 = the method's usual width). sizing/checkpoint.hpp maps it to a WeightFormat.
  std::string quant_method;
  std::uint32_t quant_bits = 0;
  bool quant_float = false;            // compressed-tensors: float weights (FP8/FP4), else int
  // Block-quantized FP8 (quantization_config.weight_block_size [n, k]; compressed-tensors
  // weights strategy "block", block_structure [n, k]): each weight scale covers an n x k tile
  // (output rows x input columns), 0 when the scales are not per block. vLLM refuses a tensor
  // parallel degree whose per-rank slices are not whole blocks (sizing/layout.hpp).
  std::uint32_t quant_block_n = 0;
  std::uint32_t quant_block_k = 0;
  // Modules the quantized checkpoint keeps in 16 bits (quantization_config modules_to_not_convert,
  // ignore or ignored_layers, as written), and the decoder linear weights they hold in parameters
  // (sizing/quant_skip.hpp): sized at 16 bits when the job loads the checkpoint as published.
  std::vector<std::string> quant_skip;
  std::uint64_t quant_skip_linear = 0;
  std::uint64_t quant_skip_experts = 0;
  // Official checkpoints of the same architecture published in another format (e.g.
  // "Qwen/Qwen2.5-72B-Instruct-AWQ"): naming one of these ids sizes that format.
  struct QuantizedCheckpoint {
    std::string hf_id;
    std::string quant_method;
    std::uint32_t quant_bits = 0;
    std::uint32_t intermediate = 0;  // MLP width when the checkpoint pads it for tensor parallelism (0: same)
    std::uint32_t block = 0;         // FP8 weight_block_size [block, block] (0: not block-quantized)
    std::vector<std::string> skip;   // modules it keeps in 16 bits (as quant_skip above)
    std::uint64_t skip_linear = 0;   // their decoder linear weights (as quant_skip_linear)
    std::uint64_t skip_experts = 0;
  };
  std::vector<QuantizedCheckpoint> quantized;
  // Where the GGUF engines get the model: the ollama library tag ("llama3.1:8b", its default
  // quantization `ollama_quant`) and the torchtune config family ("llama3_1/8B"), when known.
  std::string ollama_tag;
  std::string ollama_quant = "Q4_K_M";
  std::string torchtune;
  std::string torchtune_kinds;         // its config suffixes ("lora_single_device qlora_single_device …")
  // Parameters outside the text decoder that the checkpoint still loads (a vision tower and
  // projector); included in `params`, counted by count_params() as `other`.
  std::uint64_t extra_params = 0;
  // Where the numbers come from (URL of the config.json read, or the local path).
  std::string source;
  // Other short names the catalogue also accepts (e.g. "mistral-7b-v0.3").
  std::vector<std::string> aliases;
  // Layers that keep no KV cache (linear attention, state-space layers of hybrid models).
  std::uint32_t kv_free_layers = 0;
  // Read from the checkpoint's own files (safetensors or GGUF headers); absent for catalogue
  // models and configs read alone. The estimate's weights come from it when present.
  std::optional<CheckpointWeights> checkpoint;
  // A LoRA adapter the model is used with (a local adapter directory): served with the model,
  // or trained further at its own rank.
  std::optional<AdapterWeights> adapter;
  // Parts of the estimate that rest on assumptions for this model, and why (an architecture
  // read from generic config keys, a guessed attention layout): shown with the plan.
  struct Approximation {
    std::string part;  // "kv_cache", "activations", "weights", "params"
    std::string why;
  };
  std::vector<Approximation> approximate;

  [[nodiscard]] AttentionKind attention() const noexcept
  {
    if (kv_lora_rank > 0) {
      return AttentionKind::mla;
    }
    if (sliding_window > 0 && global_layers < layers) {
      return AttentionKind::sliding_hybrid;
    }
    return AttentionKind::full;
  }
  [[nodiscard]] bool is_moe() const noexcept { return experts > 1; }
};

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// Catalogue entries: gpt-oss (OpenAI) and DeepSeek V2-Lite / V3 / R1.
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

void add_moe_models(std::vector<ModelArch>& out)
{
  // layer_types alternate sliding_attention (window 128) / full_attention; experts in MXFP4; params = 20,914,757,184 as published (bf16-equivalent count).
  {
    ModelArch m;
    m.name = "gpt-oss-20b";
    m.hf_ids = {"openai/gpt-oss-20b"};
    m.family = "gpt_oss";
    m.params = 20'914'757'184;
    m.layers = 24;
    m.hidden = 2880;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 64;
    m.intermediate = 2880;
    m.vocab = 201088;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.experts = 32;
    m.experts_active = 4;
    m.moe_intermediate = 2880;
    m.sliding_window = 128;
    m.global_layers = 12;
    m.qkv_bias = true;
    m.o_bias = true;
    m.mlp_bias = true;
    m.attention_sinks = true;
    m.router_bias = true;
    m.mxfp4_experts = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // layer_types alternate sliding_attention (window 128) / full_attention; experts in MXFP4; params = 116,829,156,672 as published.
  {
    ModelArch m;
    m.name = "gpt-oss-120b";
    m.hf_ids = {"openai/gpt-oss-120b"};
    m.family = "gpt_oss";
    m.params = 116'829'156'672;
    m.layers = 36;
    m.hidden = 2880;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 64;
    m.intermediate = 2880;
    m.vocab = 201088;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.experts = 128;
    m.experts_active = 4;
    m.moe_intermediate = 2880;
    m.sliding_window = 128;
    m.global_layers = 18;
    m.qkv_bias = true;
    m.o_bias = true;
    m.mlp_bias = true;
    m.attention_sinks = true;
    m.router_bias = true;
    m.mxfp4_experts = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "deepseek-v2-lite";
    m.hf_ids = {"deepseek-ai/DeepSeek-V2-Lite", "deepseek-ai/DeepSeek-V2-Lite-Chat"};
    m.family = "deepseek_v2";
    m.params = 15'706'484'224;
    m.layers = 27;
    m.hidden = 2048;
    m.heads = 16;
    m.kv_heads = 16;
    m.head_dim = 0;
    m.intermediate = 10944;
    m.vocab = 102400;
    m.tied_embeddings = false;
    m.max_context = 163840;
    m.experts = 64;
    m.experts_active = 6;
    m.moe_intermediate = 1408;
    m.shared_experts = 2;
    m.dense_layers = 1;
    m.global_layers = 27;
    m.kv_lora_rank = 512;
    m.qk_rope_head_dim = 64;
    m.qk_nope_head_dim = 128;
    m.v_head_dim = 128;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // 671B main model; the checkpoint also holds the 14B multi-token-prediction layer (num_nextn_predict_layers 1), not loaded for inference and not counted. Weights are published in FP8 (e4m3, 128x128 block scales).
  {
    ModelArch m;
    m.name = "deepseek-v3";
    m.hf_ids = {"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-Base", "deepseek-ai/DeepSeek-V3-0324"};
    m.family = "deepseek_v3";
    m.params = 671'026'419'200;
    m.layers = 61;
    m.hidden = 7168;
    m.heads = 128;
    m.kv_heads = 128;
    m.head_dim = 0;
    m.intermediate = 18432;
    m.vocab = 129280;
    m.tied_embeddings = false;
    m.max_context = 163840;
    m.experts = 256;
    m.experts_active = 8;
    m.moe_intermediate = 2048;
    m.shared_experts = 1;
    m.dense_layers = 3;
    m.global_layers = 61;
    m.kv_lora_rank = 512;
    m.q_lora_rank = 1536;
    m.qk_rope_head_dim = 64;
    m.qk_nope_head_dim = 128;
    m.v_head_dim = 128;
    m.router_bias = true;
    m.dtype = "float8_e4m3fn";
    m.source = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // same architecture as DeepSeek-V3 (671B main model, MTP layer not counted, FP8 weights).
  {
    ModelArch m;
    m.name = "deepseek-r1";
    m.hf_ids = {"deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528"};
    m.family = "deepseek_v3";
    m.params = 671'026'419'200;
    m.layers = 61;
    m.hidden = 7168;
    m.heads = 128;
    m.kv_heads = 128;
    m.head_dim = 0;
    m.intermediate = 18432;
    m.vocab = 129280;
    m.tied_embeddings = false;
    m.max_context = 163840;
    m.experts = 256;
    m.experts_active = 8;
    m.moe_intermediate = 2048;
    m.shared_experts = 1;
    m.dense_layers = 3;
    m.global_layers = 61;
    m.kv_lora_rank = 512;
    m.q_lora_rank = 1536;
    m.qk_rope_head_dim = 64;
    m.qk_nope_head_dim = 128;
    m.v_head_dim = 128;
    m.router_bias = true;
    m.dtype = "float8_e4m3fn";
    m.source = "https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

// SPDX-License-Identifier: MIT
// Catalogue entries: Qwen2.5 and Qwen3, dense and MoE (Alibaba Qwen).
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

void add_qwen_models(std::vector<ModelArch>& out)
{
  {
    ModelArch m;
    m.name = "qwen2.5-0.5b";
    m.hf_ids = {"Qwen/Qwen2.5-0.5B", "Qwen/Qwen2.5-0.5B-Instruct"};
    m.family = "qwen2";
    m.params = 494'032'768;
    m.layers = 24;
    m.hidden = 896;
    m.heads = 14;
    m.kv_heads = 2;
    m.head_dim = 64;
    m.intermediate = 4864;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 32768;
    m.global_layers = 24;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // base config: max_position_embeddings 131072 (the -Instruct config says 32768).
  {
    ModelArch m;
    m.name = "qwen2.5-1.5b";
    m.hf_ids = {"Qwen/Qwen2.5-1.5B", "Qwen/Qwen2.5-1.5B-Instruct"};
    m.family = "qwen2";
    m.params = 1'543'714'304;
    m.layers = 28;
    m.hidden = 1536;
    m.heads = 12;
    m.kv_heads = 2;
    m.head_dim = 128;
    m.intermediate = 8960;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.global_layers = 28;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen2.5-3b";
    m.hf_ids = {"Qwen/Qwen2.5-3B", "Qwen/Qwen2.5-3B-Instruct"};
    m.family = "qwen2";
    m.params = 3'085'938'688;
    m.layers = 36;
    m.hidden = 2048;
    m.heads = 16;
    m.kv_heads = 2;
    m.head_dim = 128;
    m.intermediate = 11008;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 32768;
    m.global_layers = 36;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // base config: max_position_embeddings 131072 (the -Instruct config says 32768).
  {
    ModelArch m;
    m.name = "qwen2.5-7b";
    m.hf_ids = {"Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct"};
    m.family = "qwen2";
    m.params = 7'615'616'512;
    m.layers = 28;
    m.hidden = 3584;
    m.heads = 28;
    m.kv_heads = 4;
    m.head_dim = 128;
    m.intermediate = 18944;
    m.vocab = 152064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 28;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // base config: max_position_embeddings 131072 (the -Instruct config says 32768).
  {
    ModelArch m;
    m.name = "qwen2.5-14b";
    m.hf_ids = {"Qwen/Qwen2.5-14B", "Qwen/Qwen2.5-14B-Instruct"};
    m.family = "qwen2";
    m.params = 14'770'033'664;
    m.layers = 48;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 13824;
    m.vocab = 152064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 48;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // base config: max_position_embeddings 131072 (the -Instruct config says 32768).
  {
    ModelArch m;
    m.name = "qwen2.5-32b";
    m.hf_ids = {"Qwen/Qwen2.5-32B", "Qwen/Qwen2.5-32B-Instruct"};
    m.family = "qwen2";
    m.params = 32'763'876'352;
    m.layers = 64;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 27648;
    m.vocab = 152064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 64;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // base config: max_position_embeddings 131072 (the -Instruct config says 32768).
  {
    ModelArch m;
    m.name = "qwen2.5-72b";
    m.hf_ids = {"Qwen/Qwen2.5-72B", "Qwen/Qwen2.5-72B-Instruct"};
    m.family = "qwen2";
    m.params = 72'706'203'648;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 29568;
    m.vocab = 152064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 80;
    m.qkv_bias = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-0.6b";
    m.hf_ids = {"Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B-Base"};
    m.family = "qwen3";
    m.params = 596'049'920;
    m.layers = 28;
    m.hidden = 1024;
    m.heads = 16;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 3072;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 40960;
    m.global_layers = 28;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // config ties the embeddings; the safetensors also store a copy of lm_head (2,031,739,904 elements), which loads tied, so params counts it once.
  {
    ModelArch m;
    m.name = "qwen3-1.7b";
    m.hf_ids = {"Qwen/Qwen3-1.7B", "Qwen/Qwen3-1.7B-Base"};
    m.family = "qwen3";
    m.params = 1'720'574'976;
    m.layers = 28;
    m.hidden = 2048;
    m.heads = 16;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 6144;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 40960;
    m.global_layers = 28;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-1.7B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-4b";
    m.hf_ids = {"Qwen/Qwen3-4B", "Qwen/Qwen3-4B-Base"};
    m.family = "qwen3";
    m.params = 4'022'468'096;
    m.layers = 36;
    m.hidden = 2560;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 9728;
    m.vocab = 151936;
    m.tied_embeddings = true;
    m.max_context = 40960;
    m.global_layers = 36;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-4B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-8b";
    m.hf_ids = {"Qwen/Qwen3-8B", "Qwen/Qwen3-8B-Base"};
    m.family = "qwen3";
    m.params = 8'190'735'360;
    m.layers = 36;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 12288;
    m.vocab = 151936;
    m.tied_embeddings = false;
    m.max_context = 40960;
    m.global_layers = 36;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-14b";
    m.hf_ids = {"Qwen/Qwen3-14B", "Qwen/Qwen3-14B-Base"};
    m.family = "qwen3";
    m.params = 14'768'307'200;
    m.layers = 40;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 17408;
    m.vocab = 151936;
    m.tied_embeddings = false;
    m.max_context = 40960;
    m.global_layers = 40;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-32b";
    m.hf_ids = {"Qwen/Qwen3-32B"};
    m.family = "qwen3";
    m.params = 32'762'123'264;
    m.layers = 64;
    m.hidden = 5120;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 25600;
    m.vocab = 151936;
    m.tied_embeddings = false;
    m.max_context = 40960;
    m.global_layers = 64;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-30b-a3b";
    m.hf_ids = {"Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B-Base"};
    m.family = "qwen3_moe";
    m.params = 30'532'122'624;
    m.layers = 48;
    m.hidden = 2048;
    m.heads = 32;
    m.kv_heads = 4;
    m.head_dim = 128;
    m.intermediate = 6144;
    m.vocab = 151936;
    m.tied_embeddings = false;
    m.max_context = 40960;
    m.experts = 128;
    m.experts_active = 8;
    m.moe_intermediate = 768;
    m.global_layers = 48;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "qwen3-235b-a22b";
    m.hf_ids = {"Qwen/Qwen3-235B-A22B"};
    m.family = "qwen3_moe";
    m.params = 235'093'634'560;
    m.layers = 94;
    m.hidden = 4096;
    m.heads = 64;
    m.kv_heads = 4;
    m.head_dim = 128;
    m.intermediate = 12288;
    m.vocab = 151936;
    m.tied_embeddings = false;
    m.max_context = 40960;
    m.experts = 128;
    m.experts_active = 8;
    m.moe_intermediate = 1536;
    m.global_layers = 94;
    m.qk_norm = true;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

// SPDX-License-Identifier: MIT
// Catalogue entries: Mistral 7B, Mistral Small and Mixtral (Mistral AI).
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

void add_mistral_models(std::vector<ModelArch>& out)
{
  // sliding_window 4096 on every layer (global_layers 0).
  {
    ModelArch m;
    m.name = "mistral-7b-v0.1";
    m.hf_ids = {"mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-Instruct-v0.1"};
    m.family = "mistral";
    m.params = 7'241'732'096;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 14336;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 32768;
    m.sliding_window = 4096;
    m.global_layers = 0;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "mistral-7b";
    m.hf_ids = {"mistralai/Mistral-7B-v0.3", "mistralai/Mistral-7B-Instruct-v0.3"};
    m.family = "mistral";
    m.params = 7'248'023'552;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 14336;
    m.vocab = 32768;
    m.tied_embeddings = false;
    m.max_context = 32768;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json";
    m.aliases = {"mistral-7b-v0.3"};
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "mistral-small-24b";
    m.hf_ids = {"mistralai/Mistral-Small-24B-Base-2501", "mistralai/Mistral-Small-24B-Instruct-2501"};
    m.family = "mistral";
    m.params = 23'572'403'200;
    m.layers = 40;
    m.hidden = 5120;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 32768;
    m.vocab = 131072;
    m.tied_embeddings = false;
    m.max_context = 32768;
    m.global_layers = 40;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/mistralai/Mistral-Small-24B-Base-2501/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "mixtral-8x7b";
    m.hf_ids = {"mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-Instruct-v0.1"};
    m.family = "mixtral";
    m.params = 46'702'792'704;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 14336;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 32768;
    m.experts = 8;
    m.experts_active = 2;
    m.moe_intermediate = 14336;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // params derived from this config by count_params (140,620,634,112): the published size is "141B"; no exact per-tensor total was verified.
  {
    ModelArch m;
    m.name = "mixtral-8x22b";
    m.hf_ids = {"mistralai/Mixtral-8x22B-v0.1"};
    m.family = "mixtral";
    m.params = 140'620'634'112;
    m.layers = 56;
    m.hidden = 6144;
    m.heads = 48;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 16384;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 65536;
    m.experts = 8;
    m.experts_active = 2;
    m.moe_intermediate = 16384;
    m.global_layers = 56;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

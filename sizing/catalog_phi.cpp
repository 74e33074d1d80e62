// SPDX-License-Identifier: MIT
// Catalogue entries: Phi-3, Phi-3.5 and Phi-4 (Microsoft).
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

void add_phi_models(std::vector<ModelArch>& out)
{
  {
    ModelArch m;
    m.name = "phi-3-mini";
    m.hf_ids = {"microsoft/Phi-3-mini-4k-instruct"};
    m.family = "phi3";
    m.params = 3'821'079'552;
    m.layers = 32;
    m.hidden = 3072;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 96;
    m.intermediate = 8192;
    m.vocab = 32064;
    m.tied_embeddings = false;
    m.max_context = 4096;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "phi-3-mini-128k";
    m.hf_ids = {"microsoft/Phi-3-mini-128k-instruct"};
    m.family = "phi3";
    m.params = 3'821'079'552;
    m.layers = 32;
    m.hidden = 3072;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 96;
    m.intermediate = 8192;
    m.vocab = 32064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/microsoft/Phi-3-mini-128k-instruct/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "phi-3-medium";
    m.hf_ids = {"microsoft/Phi-3-medium-4k-instruct"};
    m.family = "phi3";
    m.params = 13'960'238'080;
    m.layers = 40;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 10;
    m.head_dim = 128;
    m.intermediate = 17920;
    m.vocab = 32064;
    m.tied_embeddings = false;
    m.max_context = 4096;
    m.global_layers = 40;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/microsoft/Phi-3-medium-4k-instruct/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "phi-3.5-mini";
    m.hf_ids = {"microsoft/Phi-3.5-mini-instruct"};
    m.family = "phi3";
    m.params = 3'821'079'552;
    m.layers = 32;
    m.hidden = 3072;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 96;
    m.intermediate = 8192;
    m.vocab = 32064;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/microsoft/Phi-3.5-mini-instruct/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "phi-4";
    m.hf_ids = {"microsoft/phi-4"};
    m.family = "phi3";
    m.params = 14'659'507'200;
    m.layers = 40;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 10;
    m.head_dim = 128;
    m.intermediate = 17920;
    m.vocab = 100352;
    m.tied_embeddings = false;
    m.max_context = 16384;
    m.global_layers = 40;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/microsoft/phi-4/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

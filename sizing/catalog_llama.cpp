// SPDX-License-Identifier: MIT
// Catalogue entries: Llama 2, Llama 3, 3.1, 3.2 and 3.3 (Meta).
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

void add_llama_models(std::vector<ModelArch>& out)
{
  {
    ModelArch m;
    m.name = "llama-2-7b";
    m.hf_ids = {"meta-llama/Llama-2-7b-hf", "meta-llama/Llama-2-7b-chat-hf"};
    m.family = "llama";
    m.params = 6'738'415'616;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 32;
    m.head_dim = 128;
    m.intermediate = 11008;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 4096;
    m.global_layers = 32;
    m.dtype = "float16";
    m.source = "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-2-13b";
    m.hf_ids = {"meta-llama/Llama-2-13b-hf", "meta-llama/Llama-2-13b-chat-hf"};
    m.family = "llama";
    m.params = 13'015'864'320;
    m.layers = 40;
    m.hidden = 5120;
    m.heads = 40;
    m.kv_heads = 40;
    m.head_dim = 128;
    m.intermediate = 13824;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 4096;
    m.global_layers = 40;
    m.dtype = "float16";
    m.source = "https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-2-70b";
    m.hf_ids = {"meta-llama/Llama-2-70b-hf", "meta-llama/Llama-2-70b-chat-hf"};
    m.family = "llama";
    m.params = 68'976'648'192;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 28672;
    m.vocab = 32000;
    m.tied_embeddings = false;
    m.max_context = 4096;
    m.global_layers = 80;
    m.dtype = "float16";
    m.source = "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3-8b";
    m.hf_ids = {"meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"};
    m.family = "llama";
    m.params = 8'030'261'248;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 14336;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 8192;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3-70b";
    m.hf_ids = {"meta-llama/Meta-Llama-3-70B", "meta-llama/Meta-Llama-3-70B-Instruct"};
    m.family = "llama";
    m.params = 70'553'706'496;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 28672;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 8192;
    m.global_layers = 80;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.1-8b";
    m.hf_ids = {"meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B-Instruct"};
    m.family = "llama";
    m.params = 8'030'261'248;
    m.layers = 32;
    m.hidden = 4096;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 14336;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 32;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.1-70b";
    m.hf_ids = {"meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Meta-Llama-3.1-70B", "meta-llama/Meta-Llama-3.1-70B-Instruct"};
    m.family = "llama";
    m.params = 70'553'706'496;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 28672;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 80;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.1-405b";
    m.hf_ids = {"meta-llama/Llama-3.1-405B", "meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B-Instruct"};
    m.family = "llama";
    m.params = 405'853'388'800;
    m.layers = 126;
    m.hidden = 16384;
    m.heads = 128;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 53248;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 126;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.2-1b";
    m.hf_ids = {"meta-llama/Llama-3.2-1B", "meta-llama/Llama-3.2-1B-Instruct"};
    m.family = "llama";
    m.params = 1'235'814'400;
    m.layers = 16;
    m.hidden = 2048;
    m.heads = 32;
    m.kv_heads = 8;
    m.head_dim = 64;
    m.intermediate = 8192;
    m.vocab = 128256;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.global_layers = 16;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.2-3b";
    m.hf_ids = {"meta-llama/Llama-3.2-3B", "meta-llama/Llama-3.2-3B-Instruct"};
    m.family = "llama";
    m.params = 3'212'749'824;
    m.layers = 28;
    m.hidden = 3072;
    m.heads = 24;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 8192;
    m.vocab = 128256;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.global_layers = 28;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json";
    out.push_back(std::move(m));
  }
  {
    ModelArch m;
    m.name = "llama-3.3-70b";
    m.hf_ids = {"meta-llama/Llama-3.3-70B-Instruct"};
    m.family = "llama";
    m.params = 70'553'706'496;
    m.layers = 80;
    m.hidden = 8192;
    m.heads = 64;
    m.kv_heads = 8;
    m.head_dim = 128;
    m.intermediate = 28672;
    m.vocab = 128256;
    m.tied_embeddings = false;
    m.max_context = 131072;
    m.global_layers = 80;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

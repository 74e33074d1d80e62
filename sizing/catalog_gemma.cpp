// SPDX-License-Identifier: MIT
// Catalogue entries: Gemma 2 and Gemma 3 (Google).
// Every number is the value of the config.json at `source` (text_config for multimodal
// checkpoints); `params` is the published parameter count (safetensors total), which
// tests/sizing/test_model_catalog.cpp checks against count_params() of the architecture.
#include "sizing/model_catalog_parts.hpp"

#include <utility>

namespace gpurent::catalog {

namespace {

// The SigLIP-So400m/14 vision tower of Gemma 3 at 896x896 (vision_config: 27 layers, hidden
// 1152, MLP 4304, 4096 patch positions, biases and LayerNorms everywhere) plus the projector
// (mm_input_projection 1152 x text hidden, mm_soft_emb_norm 1152).
std::uint64_t gemma3_vision_params(std::uint64_t text_hidden)
{
  constexpr std::uint64_t h = 1152;
  constexpr std::uint64_t mlp = 4304;
  constexpr std::uint64_t layers = 27;
  constexpr std::uint64_t per_layer = 4 * (h * h + h) + (h * mlp + mlp) + (mlp * h + h) + 4 * h;
  constexpr std::uint64_t patch_embedding = 3 * 14 * 14 * h + h;
  constexpr std::uint64_t positions = 4096 * h;
  constexpr std::uint64_t post_norm = 2 * h;
  return layers * per_layer + patch_embedding + positions + post_norm + h * text_hidden + h;
}

}  // namespace

void add_gemma_models(std::vector<ModelArch>& out)
{
  // every other layer uses a 4096-token sliding window.
  {
    ModelArch m;
    m.name = "gemma-2-2b";
    m.hf_ids = {"google/gemma-2-2b", "google/gemma-2-2b-it"};
    m.family = "gemma2";
    m.params = 2'614'341'888;
    m.layers = 26;
    m.hidden = 2304;
    m.heads = 8;
    m.kv_heads = 4;
    m.head_dim = 256;
    m.intermediate = 9216;
    m.vocab = 256000;
    m.tied_embeddings = true;
    m.max_context = 8192;
    m.sliding_window = 4096;
    m.global_layers = 13;
    m.norms_per_layer = 4;
    m.dtype = "float32";
    m.source = "https://huggingface.co/google/gemma-2-2b/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // every other layer uses a 4096-token sliding window.
  {
    ModelArch m;
    m.name = "gemma-2-9b";
    m.hf_ids = {"google/gemma-2-9b", "google/gemma-2-9b-it"};
    m.family = "gemma2";
    m.params = 9'241'705'984;
    m.layers = 42;
    m.hidden = 3584;
    m.heads = 16;
    m.kv_heads = 8;
    m.head_dim = 256;
    m.intermediate = 14336;
    m.vocab = 256000;
    m.tied_embeddings = true;
    m.max_context = 8192;
    m.sliding_window = 4096;
    m.global_layers = 21;
    m.norms_per_layer = 4;
    m.dtype = "float32";
    m.source = "https://huggingface.co/google/gemma-2-9b/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // every other layer uses a 4096-token sliding window.
  {
    ModelArch m;
    m.name = "gemma-2-27b";
    m.hf_ids = {"google/gemma-2-27b", "google/gemma-2-27b-it"};
    m.family = "gemma2";
    m.params = 27'227'128'320;
    m.layers = 46;
    m.hidden = 4608;
    m.heads = 32;
    m.kv_heads = 16;
    m.head_dim = 128;
    m.intermediate = 36864;
    m.vocab = 256000;
    m.tied_embeddings = true;
    m.max_context = 8192;
    m.sliding_window = 4096;
    m.global_layers = 23;
    m.norms_per_layer = 4;
    m.dtype = "float32";
    m.source = "https://huggingface.co/google/gemma-2-27b/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // text-only model; sliding_window_pattern 6 (5 local layers, then 1 global).
  {
    ModelArch m;
    m.name = "gemma-3-1b";
    m.hf_ids = {"google/gemma-3-1b-pt", "google/gemma-3-1b-it"};
    m.family = "gemma3_text";
    m.params = 999'885'952;
    m.layers = 26;
    m.hidden = 1152;
    m.heads = 4;
    m.kv_heads = 1;
    m.head_dim = 256;
    m.intermediate = 6912;
    m.vocab = 262144;
    m.tied_embeddings = true;
    m.max_context = 32768;
    m.sliding_window = 512;
    m.global_layers = 4;
    m.qk_norm = true;
    m.norms_per_layer = 4;
    m.dtype = "bfloat16";
    m.source = "https://huggingface.co/google/gemma-3-1b-pt/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // text_config of the multimodal config; params include the SigLIP vision tower and projector (extra_params).
  {
    ModelArch m;
    m.name = "gemma-3-4b";
    m.hf_ids = {"google/gemma-3-4b-pt", "google/gemma-3-4b-it"};
    m.family = "gemma3";
    m.params = 4'300'079'472;
    m.layers = 34;
    m.hidden = 2560;
    m.heads = 8;
    m.kv_heads = 4;
    m.head_dim = 256;
    m.intermediate = 10240;
    m.vocab = 262208;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.sliding_window = 1024;
    m.global_layers = 5;
    m.qk_norm = true;
    m.norms_per_layer = 4;
    m.dtype = "bfloat16";
    m.extra_params = gemma3_vision_params(2560);
    m.source = "https://huggingface.co/google/gemma-3-4b-pt/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // text_config of the multimodal config; params include the SigLIP vision tower and projector (extra_params).
  {
    ModelArch m;
    m.name = "gemma-3-12b";
    m.hf_ids = {"google/gemma-3-12b-pt", "google/gemma-3-12b-it"};
    m.family = "gemma3";
    m.params = 12'187'325'040;
    m.layers = 48;
    m.hidden = 3840;
    m.heads = 16;
    m.kv_heads = 8;
    m.head_dim = 256;
    m.intermediate = 15360;
    m.vocab = 262208;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.sliding_window = 1024;
    m.global_layers = 8;
    m.qk_norm = true;
    m.norms_per_layer = 4;
    m.dtype = "bfloat16";
    m.extra_params = gemma3_vision_params(3840);
    m.source = "https://huggingface.co/google/gemma-3-12b-pt/blob/main/config.json";
    out.push_back(std::move(m));
  }
  // text_config of the multimodal config; params include the SigLIP vision tower and projector (extra_params).
  {
    ModelArch m;
    m.name = "gemma-3-27b";
    m.hf_ids = {"google/gemma-3-27b-pt", "google/gemma-3-27b-it"};
    m.family = "gemma3";
    m.params = 27'432'406'640;
    m.layers = 62;
    m.hidden = 5376;
    m.heads = 32;
    m.kv_heads = 16;
    m.head_dim = 128;
    m.intermediate = 21504;
    m.vocab = 262208;
    m.tied_embeddings = true;
    m.max_context = 131072;
    m.sliding_window = 1024;
    m.global_layers = 10;
    m.qk_norm = true;
    m.norms_per_layer = 4;
    m.dtype = "bfloat16";
    m.extra_params = gemma3_vision_params(5376);
    m.source = "https://huggingface.co/google/gemma-3-27b-pt/blob/main/config.json";
    out.push_back(std::move(m));
  }
}

}  // namespace gpurent::catalog

// SPDX-License-Identifier: MIT
#include "sizing/gguf_model.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace gpurent {
namespace {

using U = std::uint64_t;

constexpr U k_max_dim = 10'000'000;  // the bounds of config.json's reader (model_config.cpp)
constexpr U k_max_layers = 1000;

// GGUF architecture names (llama.cpp LLM_ARCH_NAMES) of the families gpurent models -> model_type.
constexpr std::array<std::pair<std::string_view, std::string_view>, 13> k_families{{
    {"llama", "llama"},     {"qwen2", "qwen2"},     {"qwen2moe", "qwen2_moe"}, {"qwen3", "qwen3"},
    {"qwen3moe", "qwen3_moe"}, {"gemma", "gemma"}, {"gemma2", "gemma2"},     {"gemma3", "gemma3"},
    {"phi3", "phi3"},       {"phi2", "phi"},        {"deepseek2", "deepseek_v3"}, {"gpt-oss", "gpt_oss"},
    {"mistral3", "mistral"},
}};

// A scalar, or the largest element of a per-layer array; nullopt when absent or not a number.
std::optional<U> number(const GgufHeader& h, const std::string& key)
{
  const GgufValue* v = h.find(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  std::optional<U> best;
  for (std::size_t i = 0; i < (v->is_array ? v->count : 1); ++i) {
    if (const auto x = v->as_u64(i); x && (!best || *x > *best)) {
      best = x;
    }
  }
  return best;
}

// Per-layer zeros of a head_count_kv array: layers without attention (Mamba, recurrent).
U zero_entries(const GgufHeader& h, const std::string& key)
{
  const GgufValue* v = h.find(key);
  U zeros = 0;
  if (v != nullptr && v->is_array) {
    for (std::size_t i = 0; i < v->count; ++i) {
      zeros += v->as_u64(i).value_or(1) == 0 ? 1U : 0U;
    }
  }
  return zeros;
}

std::uint32_t clamp32(U v, U hi) { return static_cast<std::uint32_t>(std::min(v, hi)); }

const TensorEntry* tensor(std::span<const TensorEntry> tensors, std::string_view name)
{
  const auto it = std::find_if(tensors.begin(), tensors.end(), [&](const TensorEntry& t) { return t.name == name; });
  return it == tensors.end() ? nullptr : &*it;
}

}  // namespace

Result<ModelArch> arch_from_gguf(const GgufHeader& h, std::span<const TensorEntry> tensors, std::string_view source)
{
  ModelArch m;
  m.source = std::string(source);
  std::string arch = "llama";
  if (const GgufValue* a = h.find("general.architecture"); a != nullptr && a->as_string()) {
    arch = std::string(*a->as_string());
  }
  const std::string p = arch + ".";
  std::vector<std::string> assumed;
  m.family = arch;
  bool known = false;
  for (const auto& [gguf, type] : k_families) {
    if (gguf == arch) {
      m.family = std::string(type);
      known = true;
    }
  }
  const TensorEntry* embd = tensor(tensors, "token_embd.weight");
  U blocks = 0;
  for (const auto& t : tensors) {
    if (t.name.starts_with("blk.")) {
      const auto dot = t.name.find('.', 4);
      U n = 0;
      for (std::size_t i = 4; i < dot && i < t.name.size() && n < k_max_layers; ++i) {
        if (t.name[i] < '0' || t.name[i] > '9') {
          break;
        }
        n = n * 10 + static_cast<U>(t.name[i] - '0');
      }
      blocks = std::max(blocks, n + 1);
    }
  }
  const auto layers = number(h, p + "block_count");
  const auto hidden = number(h, p + "embedding_length");
  if ((!layers && blocks == 0) || (!hidden && (embd == nullptr || embd->shape.empty()))) {
    return fail(Errc::invalid_input, "GGUF " + std::string(source) + ": no \"" + p + "block_count\" or \"" + p +
                                         "embedding_length\" and no tensors to infer them from; not a language model");
  }
  m.layers = clamp32(layers.value_or(blocks), k_max_layers);
  m.hidden = clamp32(hidden.value_or(embd != nullptr && !embd->shape.empty() ? embd->shape[0] : 0), k_max_dim);
  if (m.layers == 0 || m.hidden == 0) {
    return fail(Errc::invalid_input, "GGUF " + std::string(source) + ": zero layers or width");
  }
  m.heads = clamp32(number(h, p + "attention.head_count").value_or(0), 100'000);
  if (m.heads == 0) {
    m.heads = std::max<std::uint32_t>(1, m.hidden / 128);
    assumed.push_back("no head count: " + std::to_string(m.heads) + " assumed");
  }
  m.kv_heads = clamp32(number(h, p + "attention.head_count_kv").value_or(m.heads), m.heads);
  m.kv_heads = std::max<std::uint32_t>(1, m.kv_heads);
  m.kv_free_layers = clamp32(zero_entries(h, p + "attention.head_count_kv"), m.layers);
  m.head_dim = clamp32(number(h, p + "attention.key_length").value_or(m.hidden / m.heads), k_max_dim);
  m.intermediate = clamp32(number(h, p + "feed_forward_length").value_or(4ULL * m.hidden), k_max_dim);
  U vocab = number(h, p + "vocab_size").value_or(0);
  if (vocab == 0) {
    if (const GgufValue* tokens = h.find("tokenizer.ggml.tokens"); tokens != nullptr && tokens->is_array) {
      vocab = tokens->count;
    } else if (embd != nullptr && embd->shape.size() >= 2) {
      vocab = embd->shape[1];
    }
  }
  m.vocab = clamp32(vocab, k_max_dim);
  m.max_context = clamp32(number(h, p + "context_length").value_or(0), 1'000'000'000);
  m.tied_embeddings = tensor(tensors, "output.weight") == nullptr;
  // Mixture of experts.
  const U experts = number(h, p + "expert_count").value_or(0);
  if (experts > 1) {
    m.experts = clamp32(experts, 100'000);
    m.experts_active = clamp32(number(h, p + "expert_used_count").value_or(2), m.experts);
    m.moe_intermediate = clamp32(number(h, p + "expert_feed_forward_length").value_or(m.intermediate), k_max_dim);
    m.shared_experts = clamp32(number(h, p + "expert_shared_count").value_or(0), 100'000);
    m.dense_layers = clamp32(number(h, p + "leading_dense_block_count").value_or(0), m.layers);
    if (arch == "llama") {
      m.family = "mixtral";
    }
  }
  // Multi-head latent attention (deepseek2): the latent and the RoPE key are what llama.cpp caches.
  if (const auto rank = number(h, p + "attention.kv_lora_rank"); rank && *rank > 0) {
    m.kv_lora_rank = clamp32(*rank, k_max_dim);
    m.q_lora_rank = clamp32(number(h, p + "attention.q_lora_rank").value_or(0), k_max_dim);
    m.qk_rope_head_dim = clamp32(number(h, p + "rope.dimension_count").value_or(64), k_max_dim);
    const U key = number(h, p + "attention.key_length_mla").value_or(number(h, p + "attention.key_length").value_or(192));
    m.qk_nope_head_dim = key > m.qk_rope_head_dim ? clamp32(key - m.qk_rope_head_dim, k_max_dim) : 0;
    m.v_head_dim = clamp32(number(h, p + "attention.value_length_mla").value_or(number(h, p + "attention.value_length").value_or(128)), k_max_dim);
    m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    m.kv_heads = m.heads;
  }
  // Sliding windows: llama.cpp's per-architecture patterns (one full layer in n).
  m.global_layers = m.layers - m.kv_free_layers;
  if (const auto window = number(h, p + "attention.sliding_window"); window && *window > 0) {
    U period = number(h, p + "attention.sliding_window_pattern").value_or(0);
    const GgufValue* pattern = h.find(p + "attention.sliding_window_pattern");
    if (pattern != nullptr && pattern->is_array && pattern->type == GgufType::boolean) {
      U full = 0;
      for (std::size_t i = 0; i < pattern->count; ++i) {
        full += pattern->as_u64(i).value_or(0) == 0 ? 1U : 0U;  // true = sliding
      }
      m.sliding_window = clamp32(*window, 1'000'000'000);
      m.global_layers = clamp32(full, m.layers);
    } else {
      if (period == 0 || (pattern != nullptr && pattern->is_array)) {
        period = arch == "gemma2" || arch == "gpt-oss" ? 2 : arch == "gemma3" ? 6 : arch == "cohere2" ? 4 : 0;
      }
      if (period > 0) {
        m.sliding_window = clamp32(*window, 1'000'000'000);
        m.global_layers = clamp32(m.layers / period, m.layers);
      } else {
        assumed.push_back("a sliding window of " + std::to_string(*window) +
                          " tokens without a known layer pattern: every layer counted as full attention");
      }
    }
  }
  if (m.max_context > 0 && m.sliding_window >= m.max_context) {
    m.sliding_window = 0;
    m.global_layers = m.layers - m.kv_free_layers;
  }
  std::optional<std::uint32_t> file_type;
  if (const auto ft = number(h, "general.file_type")) {
    file_type = clamp32(*ft, 100'000);
  }
  m.checkpoint = weights_from_gguf(tensors, file_type);
  m.params = m.checkpoint->total_params();
  m.dtype = "float16";
  if (const GgufValue* name = h.find("general.name"); name != nullptr && name->as_string()) {
    m.name = std::string(name->as_string()->substr(0, 200));
  }
  if (!known) {
    std::string why = "GGUF architecture \"" + arch + "\" is not modelled: read from llama.cpp's generic keys";
    for (const auto& a : assumed) {
      why += "; " + a;
    }
    m.approximate.push_back({"kv_cache", why});
    m.approximate.push_back({"activations", "GGUF architecture \"" + arch +
                                                "\" is not modelled: a standard decoder block is assumed"});
  } else if (!assumed.empty()) {
    m.approximate.push_back({"kv_cache", assumed.front()});
  }
  return m;
}

}  // namespace gpurent

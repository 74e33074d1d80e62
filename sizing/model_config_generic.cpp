// SPDX-License-Identifier: MIT
// config.json of an architecture gpurent does not model (a model_type outside the list of
// model_config.hpp): sized from the keys most decoder-only configs share, under their common
// names, never refused; what rests on an assumption is labelled (ModelArch::approximate).
#include <initializer_list>
#include <utility>

#include "sizing/config_reader.hpp"

namespace gpurent::config_detail {
namespace {

struct Found {
  std::string key;
  std::uint32_t value = 0;
};

// The first of `keys` present (each checked against [lo, hi]).
Result<std::optional<Found>> first_of(const Reader& r, std::initializer_list<const char*> keys, std::uint64_t lo,
                                      std::uint64_t hi)
{
  for (const char* k : keys) {
    TRY_ASSIGN(const auto v, r.opt_u32(k, lo, hi));
    if (v) {
      return std::optional<Found>(Found{k, *v});
    }
  }
  return std::optional<Found>{};
}

std::string names(std::initializer_list<const char*> keys)
{
  std::string s;
  for (const char* k : keys) {
    s += (s.empty() ? "" : ", ") + std::string(k);
  }
  return s;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Which layers keep a KV cache and over how many tokens: layer_types when given (full, sliding,
// and layers without attention: linear attention, Mamba, convolutions), else the periodic keys of
// hybrid models, else every layer attends over the whole context.
Result<void> read_layout(const Reader& r, ModelArch& m, std::vector<std::string>& assumed)
{
  m.global_layers = m.layers;
  TRY_ASSIGN(const auto window, first_of(r, {"sliding_window", "attention_window_size", "attention_chunk_size"}, 0,
                                         k_max_context));
  const std::uint32_t w = window ? window->value : 0;
  const auto types = r.raw().find("layer_types");
  const auto blocks = r.raw().find("layers_block_type");
  const auto list = types != r.raw().end() && types->is_array() ? types
                    : blocks != r.raw().end() && blocks->is_array() ? blocks
                                                                     : r.raw().end();
  if (list != r.raw().end()) {
    if (list->size() != m.layers) {
      return r.error(list == types ? "layer_types" : "layers_block_type",
                     "must be a list with one entry per layer (num_hidden_layers)");
    }
    std::uint32_t full = 0, sliding = 0, none = 0;
    for (const auto& t : *list) {
      if (!t.is_string()) {
        return r.error("layer_types", "must be a list of strings");
      }
      const std::string s = t.get<std::string>();
      if (contains(s, "sliding") || contains(s, "chunk") || contains(s, "local")) {
        ++sliding;
      } else if (contains(s, "full") || contains(s, "global") || s == "attention" || s == "hybrid" || s == "attn") {
        ++full;
      } else {
        ++none;  // linear_attention, mamba, conv, recurrent, …: a fixed-size state, no KV cache
      }
    }
    m.kv_free_layers = none;
    m.global_layers = full;
    if (sliding > 0 && w > 0) {
      m.sliding_window = w;
    } else if (sliding > 0) {
      m.global_layers = full + sliding;
      assumed.push_back(std::to_string(sliding) + " layers are marked sliding but no window size is given: counted "
                        "as full attention (an upper bound)");
    }
    if (none > 0) {
      assumed.push_back(std::to_string(none) + " of " + std::to_string(m.layers) +
                        " layers keep no KV cache (layer_types); their recurrent state is not counted");
    }
    return {};
  }
  TRY_ASSIGN(const auto interval, r.opt_u32("full_attention_interval", 1, k_max_layers));
  TRY_ASSIGN(const auto period, r.opt_u32("attn_layer_period", 1, k_max_layers));
  if (interval || period) {
    TRY_ASSIGN(const auto offset, r.u32_or("attn_layer_offset", 0, k_max_layers, 0));
    const std::uint32_t p = interval ? *interval : *period;
    const std::uint32_t at = interval ? p - 1 : offset % p;
    std::uint32_t attention = 0;
    for (std::uint32_t i = 0; i < m.layers; ++i) {
      attention += i % p == at ? 1U : 0U;
    }
    m.global_layers = attention;
    m.kv_free_layers = m.layers - attention;
    assumed.push_back("one layer in " + std::to_string(p) + " attends (" + std::string(interval ? "full_attention_interval" : "attn_layer_period") +
                      "); the other " + std::to_string(m.kv_free_layers) + " keep a recurrent state, not counted");
    return {};
  }
  if (w > 0) {
    TRY_ASSIGN(const auto pattern, r.opt_u32("sliding_window_pattern", 1, k_max_layers));
    if (pattern) {
      m.sliding_window = w;
      m.global_layers = m.layers / *pattern;
    } else {
      assumed.push_back("\"" + window->key + "\" is " + std::to_string(w) +
                        " but which layers use it is not said: every layer counted as full attention (an upper bound)");
    }
  }
  return {};
}

// Llama 4 (transformers Llama4TextConfig): MoE layers alternate with dense ones. `moe_layers`
// lists them; without it every interleave_moe_layer_step-th layer is one (range(step - 1, L,
// step): 24 of Maverick's 48 layers, all 48 of Scout's at step 1). The dense layers' MLP is
// intermediate_size_mlp wide, the experts' intermediate_size; each MoE layer adds one shared
// expert of the experts' width (Llama4TextMoe.shared_expert).
Result<void> read_interleaved_moe(const Reader& r, const std::string& type, ModelArch& m, std::vector<std::string>& assumed)
{
  const auto listed = r.raw().find("moe_layers");
  TRY_ASSIGN(const auto step, r.opt_u32("interleave_moe_layer_step", 1, k_max_layers));
  std::uint32_t moe = m.layers;
  if (listed != r.raw().end() && listed->is_array()) {
    moe = static_cast<std::uint32_t>(std::min<std::size_t>(listed->size(), m.layers));
  } else if (step) {
    moe = m.layers / *step;  // the size of range(step - 1, layers, step)
  } else {
    return {};
  }
  m.dense_layers = m.layers - moe;
  TRY_ASSIGN(const auto dense_width, r.opt_u32("intermediate_size_mlp", 1, k_max_width));
  if (dense_width) {
    m.intermediate = *dense_width;
  }
  if (type.starts_with("llama4") && m.shared_experts == 0) {
    m.shared_experts = 1;
  }
  assumed.push_back(std::to_string(moe) + " of " + std::to_string(m.layers) + " layers are MoE (" +
                    (step ? "interleave_moe_layer_step " + std::to_string(*step) : std::string("moe_layers")) + ")");
  return {};
}

}  // namespace

Result<ModelArch> read_generic_config(const json& root, const json& text, const std::string& type, std::string_view source)
{
  const Reader top{root, source};
  const Reader r{text, source};
  ModelArch m;
  m.family = type;
  m.source = std::string(source);
  std::vector<std::string> assumed;
  const auto required = [&](std::initializer_list<const char*> keys, std::uint64_t lo, std::uint64_t hi)
      -> Result<std::uint32_t> {
    TRY_ASSIGN(const auto f, first_of(r, keys, lo, hi));
    if (!f) {
      return r.error(*keys.begin(), "is missing (also looked for " + names(keys) + ")");
    }
    return f->value;
  };
  TRY_ASSIGN(m.layers, required({"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, 1, k_max_layers));
  TRY_ASSIGN(m.hidden, required({"hidden_size", "n_embd", "d_model", "dim", "model_dim"}, 1, k_max_hidden));
  TRY_ASSIGN(const auto heads, first_of(r, {"num_attention_heads", "n_head", "num_heads", "n_heads"}, 1, k_max_heads));
  TRY_ASSIGN(const auto head_dim, first_of(r, {"head_dim", "kv_channels", "attention_head_dim"}, 1, k_max_width));
  const bool attention_free = !heads;
  if (heads) {
    m.heads = heads->value;
  } else {
    // No attention heads at all (Mamba, RWKV): no KV cache, a recurrent state instead.
    m.heads = 1;
    assumed.push_back("no attention heads in the config: sized as attention-free (state-space or recurrent "
                      "layers); their fixed-size state is not counted");
  }
  TRY_ASSIGN(const auto kv, first_of(r, {"num_key_value_heads", "num_kv_heads", "n_kv_heads", "multi_query_group_num",
                                         "num_query_groups", "n_head_kv"}, 1, k_max_heads));
  TRY_ASSIGN(const bool mqa, r.boolean_or("multi_query", false));
  m.kv_heads = kv ? kv->value : mqa ? 1 : m.heads;
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    return r.error(kv ? kv->key : "num_key_value_heads", "must divide the number of heads (" + std::to_string(m.heads) + ")");
  }
  m.head_dim = head_dim ? head_dim->value : m.hidden / m.heads;
  if (m.head_dim == 0) {
    return r.error("num_attention_heads", "is larger than hidden_size and no head_dim is given");
  }
  TRY_ASSIGN(const auto inter, first_of(r, {"intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "d_ff",
                                            "inner_hidden_size"}, 1, k_max_width));
  m.intermediate = inter ? inter->value : 4 * m.hidden;
  if (!inter) {
    assumed.push_back("no MLP width: 4 x hidden assumed");
  }
  TRY_ASSIGN(const auto vocab, first_of(r, {"vocab_size", "padded_vocab_size", "n_vocab"}, 1, k_max_vocab));
  if (!vocab) {
    TRY_ASSIGN(m.vocab, top.u32("vocab_size", 1, k_max_vocab));
  } else {
    m.vocab = vocab->value;
  }
  TRY_ASSIGN(const auto ctx, first_of(r, {"max_position_embeddings", "n_positions", "max_sequence_length", "seq_length",
                                          "max_seq_len", "n_ctx", "model_max_length"}, 1, k_max_context));
  m.max_context = ctx ? ctx->value : 0;
  if (!ctx) {
    assumed.push_back("no maximum context in the config: --context is not capped");
  }
  TRY(read_tying_and_dtype(top, r, false, m));
  TRY_ASSIGN(const bool attention_bias, r.boolean_or("attention_bias", false));
  TRY_ASSIGN(m.mlp_bias, r.boolean_or("mlp_bias", false));
  m.qkv_bias = m.o_bias = attention_bias;

  // Mixture of experts under its common names.
  TRY_ASSIGN(const auto experts, first_of(r, {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts",
                                              "num_experts_total"}, 1, k_max_experts));
  if (experts && experts->value > 1) {
    m.experts = experts->value;
    TRY_ASSIGN(const auto active, first_of(r, {"num_experts_per_tok", "experts_per_token", "moe_top_k",
                                               "num_experts_per_token", "top_k"}, 1, k_max_experts));
    m.experts_active = active ? std::min(active->value, m.experts) : std::min<std::uint32_t>(2, m.experts);
    if (!active) {
      assumed.push_back("no experts-per-token key: 2 active experts assumed");
    }
    TRY_ASSIGN(const auto width, first_of(r, {"moe_intermediate_size", "expert_intermediate_size", "moe_ffn_hidden_size"},
                                          1, k_max_width));
    m.moe_intermediate = width ? width->value : m.intermediate;
    TRY_ASSIGN(const auto shared, first_of(r, {"n_shared_experts", "num_shared_experts"}, 0, k_max_experts));
    TRY_ASSIGN(const auto shared_width, r.u32_or("shared_expert_intermediate_size", 0, k_max_width, 0));
    m.shared_experts = shared ? shared->value : (shared_width + m.moe_intermediate - 1) / m.moe_intermediate;
    TRY_ASSIGN(const auto dense, first_of(r, {"first_k_dense_replace", "first_k_dense", "n_dense_layers"}, 0, m.layers));
    m.dense_layers = dense ? dense->value : 0;
    TRY(read_interleaved_moe(r, type, m, assumed));
  }
  read_quantization(root, m);
  TRY(read_mla(r, m));
  TRY(read_layout(r, m, assumed));
  if (attention_free) {
    m.kv_free_layers = m.layers;
    m.global_layers = 0;
    m.sliding_window = 0;
  }

  std::string why = "model_type \"" + type + "\" is not modelled: read from generic keys (" +
                    std::to_string(m.layers) + " layers, " + std::to_string(m.kv_heads) + " KV heads x " +
                    std::to_string(m.head_dim) + " dims";
  for (const auto& a : assumed) {
    why += "; " + a;
  }
  why += ")";
  m.approximate.push_back({"kv_cache", why});
  m.approximate.push_back({"activations", "model_type \"" + type +
                                              "\" is not modelled: a standard decoder block is assumed (attention + "
                                              "gated MLP of width " + std::to_string(m.experts > 0 ? m.moe_intermediate : m.intermediate) + ")"});
  m.approximate.push_back({"params", "model_type \"" + type +
                                         "\" is not modelled: the count is derived from generic keys unless the "
                                         "weights' headers are read"});
  return finish_arch(top, r, std::move(m));
}

}  // namespace gpurent::config_detail

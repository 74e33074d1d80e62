// SPDX-License-Identifier: MIT
#include "sizing/model_config.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "common/text.hpp"
#include "sizing/config_reader.hpp"
#include "sizing/param_count.hpp"
#include "sizing/quant_skip.hpp"

namespace gpurent {
namespace config_detail {

Result<void> read_mla(const Reader& r, ModelArch& m)
{
  TRY_ASSIGN(const auto kv_rank, r.opt_u32("kv_lora_rank", 1, k_max_width));
  if (!kv_rank) {
    return {};
  }
  m.kv_lora_rank = *kv_rank;
  TRY_ASSIGN(m.q_lora_rank, r.u32_or("q_lora_rank", 0, k_max_width, 0));
  TRY_ASSIGN(m.qk_rope_head_dim, r.u32("qk_rope_head_dim", 1, k_max_width));
  TRY_ASSIGN(m.qk_nope_head_dim, r.u32("qk_nope_head_dim", 0, k_max_width));
  TRY_ASSIGN(m.v_head_dim, r.u32("v_head_dim", 1, k_max_width));
  m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.kv_heads = m.heads;
  return {};
}

namespace {

// A block shape [n, k] of two whole numbers in 1..k_max_width (weight_block_size, compressed-tensors
// block_structure); nullopt for anything else.
std::optional<std::pair<std::uint32_t, std::uint32_t>> block_shape(const json& v)
{
  const auto dim = [](const json& x) {
    return x.is_number_unsigned() && x.get<std::uint64_t>() >= 1 && x.get<std::uint64_t>() <= k_max_width;
  };
  if (!v.is_array() || v.size() != 2 || !dim(v[0]) || !dim(v[1])) {
    return std::nullopt;
  }
  return std::pair{v[0].get<std::uint32_t>(), v[1].get<std::uint32_t>()};
}

void set_block(const json& holder, const char* key, ModelArch& m)
{
  const auto it = holder.find(key);
  if (it == holder.end()) {
    return;
  }
  if (const auto b = block_shape(*it)) {
    m.quant_block_n = b->first;
    m.quant_block_k = b->second;
  }
}

constexpr std::size_t k_max_skip_entries = 4096;  // entries of a module list kept (real lists: a few hundred)

}  // namespace

// quantization_config (lenient: what is not understood leaves the checkpoint 16-bit). The bits
// come from `bits` (gptq, awq), `load_in_4bit`/`load_in_8bit` (bitsandbytes) or the first
// config group's `weights` {num_bits, type} (compressed-tensors). Block-quantized FP8 gives its
// block: `weight_block_size` [n, k] (fp8), or the weights' `block_structure` [n, k] where their
// `strategy` is "block" (compressed-tensors).
void read_quantization(const json& root, ModelArch& m)
{
  const auto quant = root.find("quantization_config");
  if (quant == root.end() || !quant->is_object()) {
    return;
  }
  const auto method = quant->find("quant_method");
  if (method == quant->end() || !method->is_string()) {
    return;
  }
  m.quant_method = method->get<std::string>().substr(0, 64);
  // NVIDIA ModelOpt checkpoints name the scheme in quant_algo ("NVFP4", "FP8").
  if (m.quant_method == "modelopt") {
    const auto algo = quant->find("quant_algo");
    const std::string a = algo != quant->end() && algo->is_string() ? to_lower(algo->get<std::string>()) : std::string();
    m.quant_method = a.find("fp4") != std::string::npos ? "modelopt_fp4" : (a.find("fp8") != std::string::npos ? "fp8" : a.substr(0, 64));
  }
  m.mxfp4_experts = m.quant_method == "mxfp4";
  m.quant_float = m.quant_method == "fp8" || m.quant_method == "fbgemm_fp8" || m.quant_method == "mxfp4" ||
                 m.quant_method == "modelopt_fp4";
  const auto number = [](const json& o, const char* key) -> std::uint32_t {
    const auto it = o.find(key);
    return it != o.end() && it->is_number_unsigned() && it->get<std::uint64_t>() <= 64 ? it->get<std::uint32_t>() : 0;
  };
  const auto flag = [](const json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_boolean() && it->get<bool>();
  };
  m.quant_bits = number(*quant, "bits");
  // The modules kept in 16 bits: fbgemm_fp8 / fp8 / AWQ / GPTQ / bitsandbytes name them in
  // modules_to_not_convert, compressed-tensors in ignore, vLLM-style configs in ignored_layers.
  for (const char* key : {"modules_to_not_convert", "ignore", "ignored_layers"}) {
    const auto list = quant->find(key);
    if (list == quant->end() || !list->is_array()) {
      continue;
    }
    for (const json& entry : *list) {
      if (entry.is_string() && m.quant_skip.size() < k_max_skip_entries && entry.get_ref<const std::string&>().size() <= 256) {
        m.quant_skip.push_back(entry.get<std::string>());
      }
    }
  }
  if (m.quant_method == "fp8") {
    set_block(*quant, "weight_block_size", m);
  }
  if (m.quant_method == "bitsandbytes") {
    m.quant_bits = flag(*quant, "load_in_8bit") || flag(*quant, "_load_in_8bit") ? 8 : 4;
  }
  const auto groups = quant->find("config_groups");
  if (m.quant_method == "compressed-tensors" && groups != quant->end() && groups->is_object() && !groups->empty()) {
    const json& group = groups->begin().value();
    const auto weights = group.is_object() ? group.find("weights") : group.end();
    if (group.is_object() && weights != group.end() && weights->is_object()) {
      m.quant_bits = number(*weights, "num_bits");
      const auto type = weights->find("type");
      m.quant_float = type != weights->end() && type->is_string() && type->get<std::string>() == "float";
      const auto strategy = weights->find("strategy");
      if (m.quant_float && m.quant_bits == 8 && strategy != weights->end() && strategy->is_string() &&
          strategy->get_ref<const std::string&>() == "block") {
        set_block(*weights, "block_structure", m);
      }
    }
  }
}

Result<void> read_tying_and_dtype(const Reader& top, const Reader& r, bool tied_default, ModelArch& m)
{
  // tie_word_embeddings sits at the top level of multimodal configs.
  TRY_ASSIGN(const bool top_tied, top.boolean_or("tie_word_embeddings", tied_default));
  TRY_ASSIGN(m.tied_embeddings, r.boolean_or("tie_word_embeddings", top_tied));
  TRY_ASSIGN(std::string dtype, r.string_or("torch_dtype", ""));
  if (dtype.empty()) {
    TRY_ASSIGN(dtype, top.string_or("torch_dtype", ""));
  }
  if (dtype.empty()) {
    TRY_ASSIGN(dtype, r.string_or("dtype", "bfloat16"));
  }
  m.dtype = dtype;
  return {};
}

Result<ModelArch> finish_arch(const Reader& top, const Reader& r, ModelArch m)
{
  if (m.max_context > 0 && m.sliding_window > m.max_context) {
    m.sliding_window = 0;  // a window as long as the context is full attention
    m.global_layers = m.layers - m.kv_free_layers;
  }
  // Each size is bounded on its own; together they must still describe a buildable model
  // (and keep count_params far from 64-bit overflow).
  const double h = m.hidden;
  const double widths = 4.0 * h + 3.0 * (static_cast<double>(m.intermediate) +
                                         static_cast<double>(m.experts) * static_cast<double>(m.moe_intermediate));
  const double estimate = static_cast<double>(m.layers) * h * widths + 2.0 * static_cast<double>(m.vocab) * h;
  if (estimate > k_max_total_params) {
    return r.error("hidden_size", "with these layer, expert and MLP sizes describes over 100 trillion parameters");
  }
  TRY_ASSIGN(const std::string id, top.string_or("_name_or_path", ""));
  if (id.find('/') != std::string::npos && id.front() != '/' && id.front() != '.') {
    m.hf_ids.push_back(id);
  }
  m.params = count_params(m).total;
  if (!m.quant_skip.empty()) {
    const UnquantizedLinears kept = unquantized_linears(m, m.quant_skip);
    m.quant_skip_linear = kept.linear;
    m.quant_skip_experts = kept.experts;
    if (kept.unsupported > 0) {
      m.approximate.push_back({"weights", fmt::format("{} quantization_config ignore pattern(s) use regex syntax gpurent "
                                                      "does not read; the modules they name are sized as quantized",
                                                      kept.unsupported)});
    }
  }
  return m;
}

}  // namespace config_detail

namespace {

using config_detail::json;
using config_detail::Reader;
using namespace config_detail;  // the k_max_* bounds

constexpr std::array<std::string_view, 16> k_supported = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
    "gemma2", "gemma3", "gemma3_text", "phi3", "phi", "deepseek_v2", "deepseek_v3", "gpt_oss",
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Which layers attend over the whole context, given the sliding-window keys.
Result<void> read_sliding_window(const Reader& r, const std::string& type, ModelArch& m)
{
  m.global_layers = m.layers;
  TRY_ASSIGN(const auto window, r.opt_u32("sliding_window", 0, k_max_context));
  const auto layer_types = r.raw().find("layer_types");
  if (layer_types != r.raw().end() && !layer_types->is_null()) {
    if (!layer_types->is_array() || layer_types->size() != m.layers) {
      return r.error("layer_types", "must be a list with one entry per layer (num_hidden_layers)");
    }
    std::uint32_t global = 0;
    for (const auto& t : *layer_types) {
      if (!t.is_string()) {
        return r.error("layer_types", "must be a list of strings");
      }
      if (t.get<std::string>() != "sliding_attention") {
        ++global;
      }
    }
    if (global < m.layers) {
      if (!window || *window == 0) {
        return r.error("sliding_window", "is missing although layer_types has sliding_attention layers");
      }
      m.sliding_window = *window;
      m.global_layers = global;
    }
    return {};
  }
  if (!window || *window == 0) {
    return {};
  }
  if (type == "gemma2") {
    m.sliding_window = *window;
    m.global_layers = m.layers / 2;  // odd layers are global
  } else if (starts_with(type, "gemma3")) {
    TRY_ASSIGN(const auto pattern, r.u32_or("sliding_window_pattern", 1, k_max_layers, 6));
    m.sliding_window = *window;
    m.global_layers = m.layers / pattern;  // every pattern-th layer is global
  } else if (type == "mistral" || type == "mixtral") {
    m.sliding_window = *window;
    m.global_layers = 0;  // every layer slides
  } else if (starts_with(type, "qwen")) {
    TRY_ASSIGN(const bool use, r.boolean_or("use_sliding_window", false));
    if (use) {
      TRY_ASSIGN(const auto full, r.u32_or("max_window_layers", 0, k_max_layers, m.layers));
      m.sliding_window = *window;
      m.global_layers = full < m.layers ? full : m.layers;  // layers from max_window_layers on slide
    }
  }
  // phi3's sliding_window (2047 on the 4k models) is ignored, as vLLM and llama.cpp do.
  return {};
}

Result<void> read_moe(const Reader& r, const std::string& type, ModelArch& m)
{
  if (type == "mixtral" || type == "gpt_oss") {
    TRY_ASSIGN(m.experts, r.u32("num_local_experts", 1, k_max_experts));
    if (type == "gpt_oss" && !r.has("num_experts_per_tok")) {
      TRY_ASSIGN(m.experts_active, r.u32("experts_per_token", 1, k_max_experts));
    } else {
      TRY_ASSIGN(m.experts_active, r.u32("num_experts_per_tok", 1, k_max_experts));
    }
    m.moe_intermediate = m.intermediate;
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    TRY_ASSIGN(m.experts, r.u32("num_experts", 1, k_max_experts));
    TRY_ASSIGN(m.experts_active, r.u32("num_experts_per_tok", 1, k_max_experts));
    TRY_ASSIGN(m.moe_intermediate, r.u32("moe_intermediate_size", 1, k_max_width));
    TRY_ASSIGN(const auto shared, r.u32_or("shared_expert_intermediate_size", 0, k_max_width, 0));
    m.shared_experts = (shared + m.moe_intermediate - 1) / m.moe_intermediate;
    const auto mlp_only = r.raw().find("mlp_only_layers");
    if (mlp_only != r.raw().end() && mlp_only->is_array()) {
      m.dense_layers = static_cast<std::uint32_t>(mlp_only->size() < m.layers ? mlp_only->size() : m.layers);
    }
  } else if (starts_with(type, "deepseek")) {
    TRY_ASSIGN(const auto routed, r.opt_u32("n_routed_experts", 1, k_max_experts));
    if (!routed) {
      return {};  // a dense DeepSeek
    }
    m.experts = *routed;
    TRY_ASSIGN(m.experts_active, r.u32("num_experts_per_tok", 1, k_max_experts));
    TRY_ASSIGN(m.moe_intermediate, r.u32("moe_intermediate_size", 1, k_max_width));
    TRY_ASSIGN(m.shared_experts, r.u32_or("n_shared_experts", 0, k_max_experts, 0));
    TRY_ASSIGN(m.dense_layers, r.u32_or("first_k_dense_replace", 0, m.layers, 0));
    m.router_bias = type == "deepseek_v3";  // e_score_correction_bias
  }
  if (m.experts > 0 && m.experts_active > m.experts) {
    return r.error("num_experts_per_tok", "is larger than the number of experts");
  }
  return {};
}

Result<ModelArch> read_text_config(const json& root, const json& text, std::string_view source)
{
  const Reader top{root, source};
  const Reader r{text, source};
  TRY_ASSIGN(std::string type, r.string_or("model_type", ""));
  if (type.empty()) {
    TRY_ASSIGN(type, top.string_or("model_type", ""));
  }
  if (type.empty()) {
    return r.error("model_type", "is missing");
  }
  bool known = false;
  for (const auto s : k_supported) {
    known = known || s == type;
  }
  if (!known) {
    return read_generic_config(root, text, type, source);
  }
  ModelArch m;
  m.family = type;
  m.source = std::string(source);
  // Gemma 3's multimodal configs leave most text keys at Gemma3TextConfig's defaults.
  const bool gemma3 = starts_with(type, "gemma3");
  TRY_ASSIGN(m.layers, r.u32("num_hidden_layers", 1, k_max_layers));
  TRY_ASSIGN(m.hidden, r.u32("hidden_size", 1, k_max_hidden));
  if (gemma3) {
    TRY_ASSIGN(m.heads, r.u32_or("num_attention_heads", 1, k_max_heads, 8));
    TRY_ASSIGN(m.kv_heads, r.u32_or("num_key_value_heads", 1, k_max_heads, 4));
  } else {
    TRY_ASSIGN(m.heads, r.u32("num_attention_heads", 1, k_max_heads));
    TRY_ASSIGN(m.kv_heads, r.u32_or("num_key_value_heads", 1, k_max_heads, m.heads));
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    return r.error("num_key_value_heads", "must divide num_attention_heads (" + std::to_string(m.heads) + ")");
  }
  TRY_ASSIGN(m.head_dim, r.u32_or("head_dim", 1, k_max_width, gemma3 ? 256 : m.hidden / m.heads));
  if (m.head_dim == 0) {
    return r.error("num_attention_heads", "is larger than hidden_size and no head_dim is given");
  }
  TRY_ASSIGN(m.intermediate, r.u32("intermediate_size", 1, k_max_width));
  if (gemma3) {
    TRY_ASSIGN(m.vocab, r.u32_or("vocab_size", 1, k_max_vocab, 262'208));
    TRY_ASSIGN(m.max_context, r.u32_or("max_position_embeddings", 1, k_max_context, 131'072));
  } else {
    TRY_ASSIGN(m.vocab, r.u32("vocab_size", 1, k_max_vocab));
    TRY_ASSIGN(m.max_context, r.u32("max_position_embeddings", 1, k_max_context));
  }
  const bool gemma = starts_with(type, "gemma");
  TRY(read_tying_and_dtype(top, r, gemma, m));

  TRY_ASSIGN(const bool attention_bias, r.boolean_or("attention_bias", type == "gpt_oss"));
  TRY_ASSIGN(const bool mlp_bias, r.boolean_or("mlp_bias", false));
  m.qkv_bias = attention_bias || starts_with(type, "qwen2") || type == "phi";
  m.o_bias = attention_bias || type == "phi";
  m.mlp_bias = mlp_bias || type == "gpt_oss" || type == "phi";
  m.router_bias = type == "gpt_oss";
  m.attention_sinks = type == "gpt_oss";
  m.qk_norm = starts_with(type, "qwen3") || starts_with(type, "gemma3");
  m.norms_per_layer = (type == "gemma2" || starts_with(type, "gemma3")) ? 4 : 2;
  if (type == "phi") {
    m.gated_mlp = false;
    m.norm_bias = true;
    m.norms_per_layer = 1;  // one LayerNorm feeds attention and MLP in parallel
  }
  read_quantization(root, m);
  TRY(read_mla(r, m));
  TRY(read_moe(r, type, m));
  TRY(read_sliding_window(r, type, m));
  return finish_arch(top, r, std::move(m));
}

}  // namespace

std::uint32_t dtype_bytes(std::string_view t) noexcept
{
  if (t == "float32" || t == "fp32") {
    return 4;
  }
  if (t == "bfloat16" || t == "float16" || t == "bf16" || t == "fp16" || t == "half") {
    return 2;
  }
  if (t == "float8_e4m3fn" || t == "float8_e5m2" || t == "int8" || t == "uint8") {
    return 1;
  }
  return 0;
}

Result<ModelArch> parse_model_config(std::string_view json_text, std::string_view source)
{
  if (json_text.size() > k_max_model_config_bytes) {
    return fail(Errc::invalid_input, "model config " + std::string(source) + ": the file is " +
                                         std::to_string(json_text.size() / (1024 * 1024)) +
                                         " MiB, far larger than any config.json (limit 16 MiB); pass the model's "
                                         "config.json, not its weights");
  }
  try {
    const json root = json::parse(json_text.begin(), json_text.end(), nullptr, false);
    if (root.is_discarded()) {
      return fail(Errc::invalid_input, "model config " + std::string(source) +
                                           ": not valid JSON; pass a Hugging Face config.json");
    }
    if (!root.is_object()) {
      return fail(Errc::invalid_input, "model config " + std::string(source) +
                                           ": not a JSON object; pass a Hugging Face config.json");
    }
    const auto text = root.find("text_config");
    if (text != root.end() && !text->is_null()) {
      if (!text->is_object()) {
        return Reader{root, source}.error("text_config", "must be an object");
      }
      return read_text_config(root, *text, source);
    }
    return read_text_config(root, root, source);
  } catch (const std::exception& e) {
    return fail(Errc::invalid_input, "model config " + std::string(source) + ": " + e.what() +
                                         "; pass a Hugging Face config.json");
  }
}

}  // namespace gpurent

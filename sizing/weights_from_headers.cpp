// SPDX-License-Identifier: MIT
// Tensors -> parts of the model, logical parameters and stored bytes (docs/models.md, "Weights
// from the files").
#include "sizing/weights_from_headers.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "common/text.hpp"
#include "sizing/job.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;

enum class Part { embedding, linear, experts, other };

std::vector<std::string_view> segments_of(std::string_view name) { return split(name, '.'); }

bool has_segment(const std::vector<std::string_view>& seg, std::initializer_list<std::string_view> names)
{
  return std::any_of(seg.begin(), seg.end(), [&](std::string_view s) {
    return std::find(names.begin(), names.end(), s) != names.end();
  });
}

// Vision/audio towers and projectors of multimodal checkpoints (any naming seen on the Hub).
bool outside_text(const std::vector<std::string_view>& seg)
{
  if (has_segment(seg, {"vision_tower", "vision_model", "visual", "vision_encoder", "multi_modal_projector",
                        "mm_projector", "audio_tower", "audio_model", "audio_encoder", "image_newline", "embed_vision",
                        "embed_audio", "vision_embed_tokens", "vpm", "resampler", "mm_input_projection"})) {
    return true;
  }
  // Projectors named by position: InternVL's top-level mlp1, Idefics3's model.connector.
  const std::size_t head = std::min<std::size_t>(seg.size(), 2);
  return std::any_of(seg.begin(), seg.begin() + static_cast<std::ptrdiff_t>(head),
                     [](std::string_view s) { return s == "mlp1" || s == "connector"; });
}

// Quantization metadata stored beside a weight: no parameters of its own.
bool is_aux(const std::vector<std::string_view>& seg, const std::unordered_map<std::string_view, std::size_t>& names,
            std::string_view name)
{
  if (seg.empty()) {
    return false;
  }
  const std::string_view last = seg.back();
  static constexpr std::array<std::string_view, 24> k_aux{
      "qzeros",       "scales",           "g_idx",          "weight_scale",       "weight_scale_inv",
      "input_scale",  "weight_zero_point", "weight_g_idx",  "weight_shape",       "absmax",
      "quant_map",    "nested_absmax",    "nested_quant_map", "SCB",              "weight_format",
      "k_scale",      "v_scale",          "q_scale",        "prob_scale",         "output_scale",
      "weight_scale_2", "weight_global_scale", "input_global_scale", "input_zero_point",
  };
  if (std::find(k_aux.begin(), k_aux.end(), last) != k_aux.end()) {
    return true;
  }
  if (has_segment(seg, {"quant_state"})) {
    return true;  // bitsandbytes: <weight>.quant_state.bitsandbytes__nf4
  }
  // MXFP4: <name>_scales beside <name>_blocks.
  if (last.ends_with("_scales")) {
    const std::string blocks = std::string(name.substr(0, name.size() - 7)) + "_blocks";
    return names.contains(blocks);
  }
  return false;
}

Part part_of(const std::vector<std::string_view>& seg, std::size_t rank, bool aux)
{
  const bool matrix = aux || rank >= 2;
  if (std::any_of(seg.begin(), seg.end(), [](std::string_view s) { return s == "experts" || s.ends_with("_exps"); })) {
    return Part::experts;
  }
  if (has_segment(seg, {"router", "ffn_gate_inp", "shared_expert_gate", "gate_inp", "e_score_correction_bias"})) {
    return Part::other;  // MoE routers stay in 16 bits
  }
  if (seg.size() >= 2 && seg[seg.size() - 2] == "gate" && (seg.back() == "weight" || seg.back() == "bias")) {
    return Part::other;  // mlp.gate / block_sparse_moe.gate: the router of Qwen/DeepSeek/Mixtral MoE
  }
  if (matrix && (has_segment(seg, {"embed_tokens", "wte", "wpe", "word_embeddings", "tok_embeddings", "lm_head",
                                   "embed_out", "position_embeddings", "token_embd", "per_layer_token_embd",
                                   "embed_tokens_per_layer"}) ||
                 (seg.size() == 2 && seg[0] == "output" && seg[1] == "weight"))) {
    return Part::embedding;
  }
  return matrix ? Part::linear : Part::other;
}

U elements(const std::vector<U>& shape)
{
  U n = 1;
  for (const U d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      return UINT64_MAX;
    }
  }
  return n;
}

U sat_add(U a, U b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
U sat_mul(U a, U b)
{
  U r = 0;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

WeightGroup& group(CheckpointWeights& w, Part p)
{
  switch (p) {
  case Part::embedding: return w.embedding;
  case Part::linear: return w.linear;
  case Part::experts: return w.experts;
  default: return w.other;
  }
}

std::string module_of(std::string_view name)
{
  const auto dot = name.rfind('.');
  return std::string(dot == std::string_view::npos ? std::string_view{} : name.substr(0, dot));
}

struct Findings {
  bool gptq = false, awq = false, packed = false, mxfp4 = false, bnb4 = false, bnb8 = false, nvfp4 = false;
  bool block_scales = false, double_quant = false;
  std::uint32_t bits = 0, group = 0;
  bool guessed_bits = false;
  std::map<std::string, U> quant_bytes_by_dtype;  // linear + experts, by stored dtype
};

class SafetensorsCounter {
public:
  SafetensorsCounter(std::span<const TensorEntry> t, const QuantHints& h) : m_t(t), m_h(h)
  {
    for (std::size_t i = 0; i < t.size(); ++i) {
      m_index.emplace(t[i].name, i);
    }
  }

  CheckpointWeights run()
  {
    CheckpointWeights w;
    std::map<std::string, U> by_dtype;
    for (const auto& t : m_t) {
      const auto seg = segments_of(t.name);
      const bool aux = is_aux(seg, m_index, t.name);
      const bool outside = outside_text(seg);
      const Part p = outside ? Part::other : part_of(seg, t.shape.size(), aux);
      const U params = aux ? 0 : params_of(t, seg);
      WeightGroup& g = group(w, p);
      g.params = sat_add(g.params, params);
      g.bytes = sat_add(g.bytes, t.bytes);
      if (outside) {
        w.outside_text_bytes = sat_add(w.outside_text_bytes, t.bytes);
        w.outside_text_params = sat_add(w.outside_text_params, params);
      }
      by_dtype[t.dtype] = sat_add(by_dtype[t.dtype], t.bytes);
      if ((p == Part::linear || p == Part::experts) && !aux) {
        m_f.quant_bytes_by_dtype[t.dtype] = sat_add(m_f.quant_bytes_by_dtype[t.dtype], t.bytes);
      }
      if (seg.back() == "weight_scale_inv" && t.shape.size() == 2) {
        m_f.block_scales = true;
      }
      if (seg.back() == "nested_absmax") {
        m_f.double_quant = true;
      }
      if (seg.back() == "SCB") {
        m_f.bnb8 = true;
      }
    }
    w.bytes_by_dtype.assign(by_dtype.begin(), by_dtype.end());
    name_format(w);
    if (m_f.guessed_bits) {
      w.notes.push_back("the bit width of the packed weights is not in the headers or quantization_config; " +
                        std::to_string(m_f.bits) + " bits assumed for the parameter count (the bytes are exact)");
    }
    return w;
  }

private:
  const TensorEntry* sibling(std::string_view name) const
  {
    const auto it = m_index.find(name);
    return it == m_index.end() ? nullptr : &m_t[it->second];
  }

  // Bits per packed weight of a GPTQ/AWQ/compressed-tensors module, from the shapes when they
  // tell, else quantization_config, else 4.
  std::uint32_t packed_bits(const TensorEntry& q, const std::string& module, bool compressed)
  {
    std::uint32_t bits = 0;
    const TensorEntry* scales = sibling(module + (compressed ? ".weight_scale" : ".scales"));
    const bool two_d = q.shape.size() == 2;
    if (!compressed && two_d && scales != nullptr && scales->shape.size() == 2 && scales->shape[1] != q.shape[1] &&
        q.shape[1] > 0 && scales->shape[1] % q.shape[1] == 0) {
      m_f.awq = true;  // AWQ packs along the output: qweight [in, out*bits/32], scales [groups, out]
      bits = static_cast<std::uint32_t>(32 * q.shape[1] / scales->shape[1]);
    } else if (!compressed) {
      m_f.gptq = m_f.gptq || m_h.method != "awq";
      m_f.awq = m_f.awq || m_h.method == "awq";
      const TensorEntry* g_idx = sibling(module + ".g_idx");
      if (two_d && g_idx != nullptr && g_idx->shape.size() == 1 && g_idx->shape[0] > 0 &&
          (32 * q.shape[0]) % g_idx->shape[0] == 0) {
        bits = static_cast<std::uint32_t>(32 * q.shape[0] / g_idx->shape[0]);  // qweight [in*bits/32, out]
      }
    } else {
      m_f.packed = true;  // compressed-tensors: weight_packed [out, in*bits/32], weight_scale [out, in/group]
      if (two_d && scales != nullptr && scales->shape.size() == 2 && m_h.group_size > 0 && scales->shape[1] > 0) {
        const U in = scales->shape[1] * m_h.group_size;
        if ((32 * q.shape[1]) % in == 0) {
          bits = static_cast<std::uint32_t>(32 * q.shape[1] / in);
        }
      }
    }
    if (bits == 0 || bits > 16) {
      bits = m_h.bits > 0 && m_h.bits <= 16 ? m_h.bits : 4;
      m_f.guessed_bits = m_f.guessed_bits || m_h.bits == 0;
    }
    m_f.bits = bits;
    return bits;
  }

  U params_of(const TensorEntry& t, const std::vector<std::string_view>& seg)
  {
    const std::string_view last = seg.back();
    const U n = elements(t.shape);
    const auto st = parse_st_dtype(t.dtype);
    const U elem_bits = st ? st_dtype_bits(*st) : 8;
    if (last == "qweight" || last == "weight_packed") {
      const std::uint32_t bits = packed_bits(t, module_of(t.name), last == "weight_packed");
      return sat_mul(n, elem_bits) / bits;
    }
    if (last.ends_with("_blocks") && t.dtype == "U8") {
      m_f.mxfp4 = true;
      return sat_mul(t.bytes, 2);  // two 4-bit values per byte, 32 per block
    }
    if (last == "weight" && t.dtype == "U8") {
      const std::string base(t.name);
      if (sibling(base + ".absmax") != nullptr || sibling(base + ".quant_state.bitsandbytes__nf4") != nullptr ||
          sibling(base + ".quant_state.bitsandbytes__fp4") != nullptr) {
        m_f.bnb4 = true;
        return sat_mul(t.bytes, 2);
      }
      const TensorEntry* scale = sibling(module_of(t.name) + ".weight_scale");
      if (scale != nullptr && scale->dtype.starts_with("F8_")) {
        m_f.nvfp4 = true;  // NVFP4 (modelopt): packed FP4 pairs with FP8 block scales
        return sat_mul(t.bytes, 2);
      }
    }
    return n;
  }

  void name_format(CheckpointWeights& w) const
  {
    const std::string bits = std::to_string(m_f.bits);
    const std::string group = m_h.group_size > 0 ? " (group " + std::to_string(m_h.group_size) + ")" : "";
    if (m_f.mxfp4) {
      w.format = WeightFormat::mxfp4;
      w.format_label = "MXFP4 experts, the rest " + dominant(w.bytes_by_dtype);
    } else if (m_f.awq) {
      w.format = WeightFormat::awq;
      w.format_label = "AWQ int" + bits + group;
    } else if (m_f.gptq) {
      w.format = WeightFormat::gptq;
      w.format_label = "GPTQ int" + bits + group;
    } else if (m_f.packed) {
      if (m_f.bits == 4) {
        w.format = WeightFormat::int4;
      }
      w.format_label = "compressed-tensors int" + bits + " (pack-quantized)" + group;
    } else if (m_f.bnb4) {
      w.format = WeightFormat::nf4;
      w.format_label = std::string("bitsandbytes 4-bit") + (m_f.double_quant ? " (double quantization)" : "");
    } else if (m_f.nvfp4) {
      w.format_label = "NVFP4 (4-bit floats, FP8 block scales): no --weights value names it";
    } else if (m_f.bnb8) {
      w.format = WeightFormat::int8;
      w.format_label = "bitsandbytes int8 (LLM.int8)";
    } else {
      const std::string d = dominant(std::vector<std::pair<std::string, U>>(m_f.quant_bytes_by_dtype.begin(),
                                                                            m_f.quant_bytes_by_dtype.end()));
      const std::string all = dominant(w.bytes_by_dtype);
      const std::string& use = d.empty() ? all : d;
      if (use.starts_with("F8_")) {
        w.format = WeightFormat::fp8;
        w.format_label = "FP8 " + use.substr(3) + (m_f.block_scales ? " (block scales)" : " (per-tensor/channel scales)");
      } else if (use == "I8") {
        w.format = WeightFormat::int8;
        w.format_label = "int8 (W8A8)";
      } else if (use == "BF16") {
        w.format = WeightFormat::bf16;
        w.format_label = "bf16";
      } else if (use == "F16") {
        w.format = WeightFormat::fp16;
        w.format_label = "fp16";
      } else if (use == "F32") {
        w.format = WeightFormat::fp32;
        w.format_label = "fp32";
      } else {
        w.format_label = use.empty() ? "no tensors" : "mostly " + use;
      }
    }
  }

  static std::string dominant(const std::vector<std::pair<std::string, U>>& by)
  {
    const auto it = std::max_element(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    return it == by.end() ? std::string() : it->first;
  }

  std::span<const TensorEntry> m_t;
  const QuantHints& m_h;
  std::unordered_map<std::string_view, std::size_t> m_index;
  Findings m_f;
};

std::uint32_t json_u32(const nlohmann::json& j, std::initializer_list<const char*> keys)
{
  for (const char* k : keys) {
    const auto it = j.find(k);
    if (it != j.end() && it->is_number_unsigned() && it->get<U>() <= 1'000'000) {
      return static_cast<std::uint32_t>(it->get<U>());
    }
  }
  return 0;
}

}  // namespace

QuantHints quant_hints_from_config(std::string_view config_json)
{
  QuantHints h;
  const auto j = nlohmann::json::parse(config_json.begin(), config_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return h;
  }
  auto q = j.find("quantization_config");
  if (q == j.end() || !q->is_object()) {
    const auto text = j.find("text_config");
    if (text == j.end() || !text->is_object() || (q = text->find("quantization_config")) == text->end() ||
        !q->is_object()) {
      return h;
    }
  }
  if (const auto m = q->find("quant_method"); m != q->end() && m->is_string()) {
    h.method = to_lower(m->get<std::string>());
  }
  h.bits = json_u32(*q, {"bits", "w_bit", "num_bits"});
  h.group_size = json_u32(*q, {"group_size", "q_group_size"});
  // compressed-tensors: config_groups.<name>.weights.{num_bits, group_size}
  if (const auto groups = q->find("config_groups"); groups != q->end() && groups->is_object()) {
    for (const auto& [name, g] : groups->items()) {
      const auto weights = g.is_object() ? g.find("weights") : g.end();
      if (g.is_object() && weights != g.end() && weights->is_object()) {
        h.bits = h.bits > 0 ? h.bits : json_u32(*weights, {"num_bits"});
        h.group_size = h.group_size > 0 ? h.group_size : json_u32(*weights, {"group_size"});
      }
    }
  }
  const auto flag = [&](const char* k) {
    const auto it = q->find(k);
    return it != q->end() && it->is_boolean() && it->get<bool>();
  };
  h.bnb_4bit = flag("load_in_4bit");
  h.bnb_8bit = flag("load_in_8bit");
  return h;
}

std::vector<TensorEntry> tensor_entries(const SafetensorsHeader& h)
{
  std::vector<TensorEntry> out;
  out.reserve(h.tensors.size());
  for (const auto& t : h.tensors) {
    out.push_back(TensorEntry{t.name, std::string(to_string(t.dtype)), t.shape, t.bytes()});
  }
  return out;
}

std::vector<TensorEntry> tensor_entries(const GgufHeader& h)
{
  std::vector<TensorEntry> out;
  out.reserve(h.tensors.size());
  for (const auto& t : h.tensors) {
    const auto type = ggml_type(t.type);
    out.push_back(TensorEntry{t.name, std::string(type ? type->name : "?"), t.dims, t.bytes});
  }
  return out;
}

CheckpointWeights weights_from_safetensors(std::span<const TensorEntry> tensors, const QuantHints& hints)
{
  return SafetensorsCounter(tensors, hints).run();
}

CheckpointWeights weights_from_gguf(std::span<const TensorEntry> tensors, std::optional<std::uint32_t> file_type)
{
  CheckpointWeights w;
  w.gguf = true;
  std::map<std::string, U> by_dtype;
  for (const auto& t : tensors) {
    const auto seg = segments_of(t.name);
    const Part p = part_of(seg, t.shape.size(), false);
    WeightGroup& g = group(w, p);
    g.params = sat_add(g.params, elements(t.shape));
    g.bytes = sat_add(g.bytes, t.bytes);
    by_dtype[t.dtype] = sat_add(by_dtype[t.dtype], t.bytes);
  }
  w.bytes_by_dtype.assign(by_dtype.begin(), by_dtype.end());
  std::vector<std::pair<std::string, U>> ordered = w.bytes_by_dtype;
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string types;
  for (const auto& [name, bytes] : ordered) {
    types += (types.empty() ? "" : ", ") + name;
  }
  std::string type;
  if (file_type) {
    if (const auto name = gguf_file_type_name(*file_type)) {
      type = std::string(*name);
    }
  }
  if (!type.empty()) {
    if (type == "MXFP4_MOE") {
      w.format = WeightFormat::mxfp4;
    } else if (auto f = parse_weight_format(type); f && (is_gguf(*f) || type == "BF16" || type == "F32")) {
      w.format = *f;
    }
    w.format_label = "GGUF " + type + " (" + types + ")";
  } else {
    w.format_label = "GGUF (" + types + ")";
  }
  return w;
}

Result<AdapterWeights> adapter_from_safetensors(std::span<const TensorEntry> tensors, std::string_view config_json)
{
  const auto j = nlohmann::json::parse(config_json.begin(), config_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return fail(Errc::invalid_input, "adapter_config.json: not a JSON object");
  }
  AdapterWeights a;
  a.rank = json_u32(j, {"r"});
  if (const auto t = j.find("target_modules"); t != j.end()) {
    if (t->is_string()) {
      a.target_modules.push_back(t->get<std::string>());
    } else if (t->is_array()) {
      for (const auto& m : *t) {
        if (m.is_string()) {
          a.target_modules.push_back(m.get<std::string>());
        }
      }
    }
  }
  U min_dim = 0;
  for (const auto& t : tensors) {
    a.weights.params = sat_add(a.weights.params, elements(t.shape));
    a.weights.bytes = sat_add(a.weights.bytes, t.bytes);
    if (t.name.find("lora_A") != std::string::npos && t.shape.size() == 2) {
      min_dim = min_dim == 0 ? t.shape[0] : std::min(min_dim, t.shape[0]);  // lora_A: [r, in]
    }
  }
  if (a.rank == 0) {
    if (min_dim == 0 || min_dim > 1'000'000) {
      return fail(Errc::invalid_input, "adapter_config.json: no rank \"r\", and no lora_A tensor shows it");
    }
    a.rank = static_cast<std::uint32_t>(min_dim);
  }
  return a;
}

std::optional<std::string_view> gguf_file_type_name(std::uint32_t t) noexcept
{
  static constexpr std::array<std::string_view, 41> k_names{
      "F32",    "F16",    "Q4_0",   "Q4_1",   "",       "",       "",       "Q8_0",   "Q5_0",   "Q5_1",  "Q2_K",
      "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",   "IQ2_XXS", "IQ2_XS", "Q2_K_S",
      "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",  "IQ3_M",  "IQ2_S",  "IQ2_M",  "IQ4_XS", "IQ1_M", "BF16",
      "",       "",       "",       "TQ1_0",  "TQ2_0",  "MXFP4_MOE", "NVFP4", "Q1_0"};
  if (t >= k_names.size() || k_names[t].empty()) {
    return std::nullopt;
  }
  return k_names[t];
}

}  // namespace gpurent

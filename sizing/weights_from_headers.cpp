// SPDX-License-Identifier: MIT
// Tensors -> parts of the model, logical parameters and stored bytes (docs/models.md, "Weights
// from the files").
#include "sizing/weights_from_headers.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "sizing/job.hpp"
#include "sizing/tensor_parts.hpp"

namespace gpurent {
namespace {

using U = std::uint64_t;
using namespace tensor_parts;

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
      w.format = WeightFormat::nvfp4;
      w.format_label = "NVFP4 (4-bit floats, FP8 block scales)";
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

}  // namespace

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

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// The weights of GGUF tensors, and llama.cpp's file type names.
#include <algorithm>
#include <array>
#include <map>

#include "sizing/job.hpp"
#include "sizing/precision.hpp"
#include "sizing/tensor_parts.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {

using namespace tensor_parts;

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
    if (t.name == "token_embd.weight") {
      w.input_embedding_bytes = t.bytes;
    } else if (t.name == "output.weight") {
      w.output_tensor = true;
    }
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

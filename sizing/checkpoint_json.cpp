// SPDX-License-Identifier: MIT
// The JSON beside a checkpoint's weights that sizing reads: config.json's quantization_config
// and a LoRA adapter's adapter_config.json.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "common/text.hpp"
#include "sizing/tensor_parts.hpp"
#include "sizing/weights_from_headers.hpp"

namespace gpurent {
namespace {

using namespace tensor_parts;

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

}  // namespace gpurent

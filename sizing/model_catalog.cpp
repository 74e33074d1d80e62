// SPDX-License-Identifier: MIT
#include "sizing/model_catalog.hpp"

#include <string>
#include <vector>

#include "common/text.hpp"
#include "sizing/model_catalog_parts.hpp"

namespace gpurent {
namespace {

std::vector<ModelArch> build_catalog()
{
  std::vector<ModelArch> all;
  all.reserve(64);
  catalog::add_llama_models(all);
  catalog::add_mistral_models(all);
  catalog::add_qwen_models(all);
  catalog::add_gemma_models(all);
  catalog::add_phi_models(all);
  catalog::add_moe_models(all);
  return all;
}

std::string_view strip_prefix(std::string_view s, std::string_view prefix)
{
  if (s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix)) {
    s.remove_prefix(prefix.size());
  }
  return s;
}

}  // namespace

std::span<const ModelArch> model_catalog()
{
  static const std::vector<ModelArch> k_catalog = build_catalog();
  return k_catalog;
}

const ModelArch* find_model_ptr(std::string_view name_or_id)
{
  std::string_view key = trim(name_or_id);
  key = strip_prefix(key, "https://");
  key = strip_prefix(key, "huggingface.co/");
  key = strip_prefix(key, "hf.co/");
  while (!key.empty() && key.back() == '/') {
    key.remove_suffix(1);
  }
  if (key.empty()) {
    return nullptr;
  }
  for (const auto& m : model_catalog()) {
    if (iequals(m.name, key)) {
      return &m;
    }
    for (const auto& alias : m.aliases) {
      if (iequals(alias, key)) {
        return &m;
      }
    }
    for (const auto& id : m.hf_ids) {
      if (iequals(id, key)) {
        return &m;
      }
    }
  }
  return nullptr;
}

std::optional<ModelArch> find_model(std::string_view name_or_id)
{
  const ModelArch* m = find_model_ptr(name_or_id);
  if (m == nullptr) {
    return std::nullopt;
  }
  return *m;
}

}  // namespace gpurent

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
  catalog::add_deploy_facts(all);
  return all;
}

std::string_view strip_prefix(std::string_view s, std::string_view prefix)
{
  if (s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix)) {
    s.remove_prefix(prefix.size());
  }
  return s;
}

// The lookup key of a name or id: no spaces, no URL prefix, no trailing '/'.
std::string_view lookup_key(std::string_view name_or_id)
{
  std::string_view key = trim(name_or_id);
  key = strip_prefix(key, "https://");
  key = strip_prefix(key, "huggingface.co/");
  key = strip_prefix(key, "hf.co/");
  while (!key.empty() && key.back() == '/') {
    key.remove_suffix(1);
  }
  return key;
}

}  // namespace

std::span<const ModelArch> model_catalog()
{
  static const std::vector<ModelArch> k_catalog = build_catalog();
  return k_catalog;
}

const ModelArch* find_model_ptr(std::string_view name_or_id)
{
  const std::string_view key = lookup_key(name_or_id);
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
    for (const auto& q : m.quantized) {
      if (iequals(q.hf_id, key)) {
        return &m;
      }
    }
  }
  return nullptr;
}

std::string named_hf_id(const ModelArch& model, std::string_view name_or_id)
{
  const std::string_view key = lookup_key(name_or_id);
  for (const auto& id : model.hf_ids) {
    if (iequals(id, key)) {
      return id;
    }
  }
  for (const auto& q : model.quantized) {
    if (iequals(q.hf_id, key)) {
      return q.hf_id;
    }
  }
  return model.hf_ids.empty() ? model.name : model.hf_ids.front();
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

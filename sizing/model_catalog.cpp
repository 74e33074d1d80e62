// SPDX-License-Identifier: MIT
// The model catalogue: the built-in entries (data/models.json, turned into initialisers at build
// by sizing/gen/gen_model_catalog.cpp), with the user's [models.<name>] tables merged in.
#include "sizing/model_catalog.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "common/text.hpp"
#include "sizing/model_data.hpp"
#include "sizing/param_count.hpp"

namespace gpurent {
namespace {

const std::vector<ModelArch>& builtin()
{
  static const std::vector<ModelArch> k_builtin = generated_model_catalog();
  return k_builtin;
}

// The built-in entries with the user's merged in; empty until install_user_models is given some.
std::vector<ModelArch>& merged()
{
  static std::vector<ModelArch> k_merged;
  return k_merged;
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

bool names(const ModelArch& m, std::string_view key)
{
  if (iequals(m.name, key)) {
    return true;
  }
  const auto same = [key](const std::string& s) { return iequals(s, key); };
  return std::any_of(m.aliases.begin(), m.aliases.end(), same) || std::any_of(m.hf_ids.begin(), m.hf_ids.end(), same) ||
         std::any_of(m.quantized.begin(), m.quantized.end(), [key](const auto& q) { return iequals(q.hf_id, key); });
}

const ModelArch* builtin_named(std::string_view name)
{
  for (const auto& m : builtin()) {
    if (iequals(m.name, name)) {
      return &m;
    }
  }
  return nullptr;
}

}  // namespace

std::span<const ModelArch> model_catalog() { return merged().empty() ? builtin() : merged(); }

std::span<const ModelArch> builtin_model_catalog() { return builtin(); }

Result<ModelArch> user_model(std::string_view name, std::string_view keys_json)
{
  const ModelArch* base = builtin_named(trim(name));
  TRY_ASSIGN(ModelArch m, user_model_from_json(trim(name), keys_json, base));
  // Left out, or carried over from a built-in entry whose shape the table changed: counted from
  // the architecture (a table that changes only the context keeps the published count).
  const auto keys = nlohmann::json::parse(keys_json, nullptr, false);  // read above: valid
  const bool given = keys.is_object() && keys.contains("params");
  if (m.params == 0 || (base != nullptr && !given && count_params(m).total != count_params(*base).total)) {
    m.params = count_params(m).total;
  }
  // A new entry's names must not reach another entry (a replaced one keeps its own).
  std::vector<std::string> own{m.name};
  own.insert(own.end(), m.aliases.begin(), m.aliases.end());
  own.insert(own.end(), m.hf_ids.begin(), m.hf_ids.end());
  for (const auto& q : m.quantized) {
    own.push_back(q.hf_id);
  }
  for (const auto& other : builtin()) {
    if (&other == base) {
      continue;
    }
    for (const auto& n : own) {
      if (names(other, n)) {
        return fail(Errc::invalid_input, "model " + m.name + ": `" + n + "` already names the built-in model " + other.name +
                                             "; use [models." + other.name + "] to change that one");
      }
    }
  }
  return m;
}

void install_user_models(std::vector<ModelArch> models)
{
  if (models.empty() && merged().empty()) {
    return;  // the common case: spans handed out earlier stay valid
  }
  if (models.empty()) {
    merged().clear();
    return;
  }
  std::vector<ModelArch> all = builtin();
  for (ModelArch& u : models) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const ModelArch& m) { return iequals(m.name, u.name); });
    if (it != all.end()) {
      *it = std::move(u);
    } else {
      all.push_back(std::move(u));
    }
  }
  merged() = std::move(all);
}

const ModelArch* find_model_ptr(std::string_view name_or_id)
{
  const std::string_view key = lookup_key(name_or_id);
  if (key.empty()) {
    return nullptr;
  }
  for (const auto& m : model_catalog()) {
    if (names(m, key)) {
      return &m;
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

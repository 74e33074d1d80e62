// SPDX-License-Identifier: MIT
#include "providers/json_fields.hpp"

namespace gpurent {
namespace {

Error bad(std::string_view prefix, const std::string& where, const std::string& what)
{
  return Error{Errc::invalid_input, std::string(prefix) + where + ": " + what};
}

}  // namespace

Result<void> json_only_keys(const nlohmann::json& obj, const JsonKeys& allowed, std::string_view prefix,
                            const std::string& where)
{
  for (const auto& [k, v] : obj.items()) {
    if (!allowed.contains(k)) {
      std::string list;
      for (const auto& a : allowed) {
        list += (list.empty() ? "" : ", ") + a;
      }
      return std::unexpected(bad(prefix, where + "." + k, "unknown key; the keys are " + list));
    }
  }
  return {};
}

Result<std::string> json_text(const nlohmann::json& obj, const char* key, std::string_view prefix,
                              const std::string& where, bool required)
{
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) {
      return std::unexpected(bad(prefix, where + "." + key, "missing"));
    }
    return std::string();
  }
  if (!it->is_string()) {
    return std::unexpected(bad(prefix, where + "." + key, "must be a string"));
  }
  return it->get<std::string>();
}

}  // namespace gpurent

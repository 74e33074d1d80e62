// SPDX-License-Identifier: MIT
#pragma once
// PURE: what the strict readers of the compiled-in data files (data/cards.json, data/offers.json)
// share: only the keys a shape allows, and text fields, with errors that say where.
#include <nlohmann/json.hpp>

#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

using JsonKeys = std::set<std::string, std::less<>>;

// Every message is `prefix` + `where` + "." + key + ": " + what (prefix: "offer data: " or "").
[[nodiscard]] Result<void> json_only_keys(const nlohmann::json& obj, const JsonKeys& allowed, std::string_view prefix,
                                          const std::string& where);
// A string field; absent or null gives "" unless required.
[[nodiscard]] Result<std::string> json_text(const nlohmann::json& obj, const char* key, std::string_view prefix,
                                            const std::string& where, bool required);

}  // namespace gpurent

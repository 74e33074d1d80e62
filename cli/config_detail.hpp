// SPDX-License-Identifier: MIT
#pragma once
// Internal to cli/config*.cpp (not a public interface; cli/config.hpp is): the key table's
// lookups and the one place a value is validated and stored, shared by the file, the
// environment and the flags.
//   config.cpp       the key table, validating and storing a value, displaying one, flags
//   config_load.cpp  reading: the file (strict and lenient), the environment, load_config
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "cli/config.hpp"

namespace gpurent::config_detail {

// The key `name` of the table (not the [prices] section); nullptr when unknown.
[[nodiscard]] const ConfigKeyInfo* find_key(std::string_view name);
// "budget_usd, default_provider, …" for messages.
[[nodiscard]] std::string known_keys();
// Stores a validated value; `number` is used for number keys, `text` for the others.
[[nodiscard]] Result<void> assign(Config& c, const ConfigKeyInfo& k, const std::string& text, std::optional<double> number,
                                  const std::map<std::string, std::string>& env);
// true/false (also 1/0, yes/no) of a boolean key, from the file, the environment or a flag.
[[nodiscard]] Result<bool> parse_config_bool(std::string_view key, std::string_view text);
// The built-in defaults of the text keys (the URLs).
void apply_defaults(Config& c);

}  // namespace gpurent::config_detail

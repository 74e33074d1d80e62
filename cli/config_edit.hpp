// SPDX-License-Identifier: MIT
#pragma once
// Editing the config file as text, for `gpurent config init` and `gpurent config set` (pure).
// `set` changes one line and keeps every other line as it was: comments, blank lines, order.
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace gpurent {

// The commented template `config init` writes: every key of the table (cli/config.cpp) with its
// description, its environment variable and an example value, all commented out.
[[nodiscard]] std::string config_template();

// `file_text` with KEY set to VALUE. KEY is a key of the table (`budget_usd`) or a price,
// `prices.<provider>.<card>` (USD per hour for the whole server). An existing `KEY = …` line is
// rewritten in place (its trailing comment kept); else a commented-out `# KEY = …` line of the
// template is replaced; else the line is added at the end of its table. The result must load
// (config_from) or nothing is returned: Errc::usage naming what is wrong with the value.
[[nodiscard]] Result<std::string> config_set_text(std::string_view file_text, std::string_view key,
                                                  std::string_view value);

// Whether `key` holds a secret (the file must then be mode 0600).
[[nodiscard]] bool config_key_is_secret(std::string_view key);

}  // namespace gpurent

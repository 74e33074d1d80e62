// SPDX-License-Identifier: MIT
#pragma once
// Internal to cli/completion*.cpp (not a public interface; cli/completion.hpp is): what the
// three generators share.
//   completion.cpp       these helpers and the bash script
//   completion_zsh.cpp   the zsh script (one _arguments function per command)
//   completion_fish.cpp  the fish script (one `complete` line per subcommand and option)
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_spec.hpp"

namespace gpurent::completion_detail {

// The top command and every command below it, depth first ("", "plan", "config", "config show", …).
[[nodiscard]] std::vector<const CommandSpec*> all_commands(const CommandSpec& app);
[[nodiscard]] std::string join(const std::vector<std::string>& words, std::string_view sep = " ");
[[nodiscard]] std::vector<std::string> subcommand_names(const CommandSpec& c);
[[nodiscard]] std::vector<const OptionSpec*> positionals(const CommandSpec& c);
// One line: completion descriptions are short.
[[nodiscard]] std::string first_sentence(const std::string& text);

}  // namespace gpurent::completion_detail

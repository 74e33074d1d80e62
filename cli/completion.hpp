// SPDX-License-Identifier: MIT
#pragma once
// Shell completion scripts generated from the command description (cli/command_spec.hpp) and
// the value lists of cli/command_table.cpp: commands, subcommands, options, and the values of
// --card, --provider, --task, … (cards, providers and models from the built-in catalogues).
#include <string>
#include <string_view>

#include "cli/command_spec.hpp"

namespace gpurent {

[[nodiscard]] std::string bash_completion(const CommandSpec& app);
[[nodiscard]] std::string zsh_completion(const CommandSpec& app);
[[nodiscard]] std::string fish_completion(const CommandSpec& app);

}  // namespace gpurent

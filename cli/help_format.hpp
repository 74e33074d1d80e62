// SPDX-License-Identifier: MIT
#pragma once
// gpurent's help layout over CLI11: within 100 columns, named placeholders (--card CARD), and
// every command's help ending with its examples (cli/command_table.cpp).
#include <string>

#include "cli/command_spec.hpp"

namespace CLI {
class App;
}

namespace gpurent {

inline constexpr std::size_t k_help_width = 100;

// Installs the layout on `app`; subcommands added afterwards inherit it.
void use_gpurent_help(CLI::App& app);
// The subcommand of `app` called `name`; null when there is none.
[[nodiscard]] CLI::App* find_subcommand(CLI::App& app, const std::string& name);
// "config set" for that subcommand; "" for the top-level app.
[[nodiscard]] std::string command_path(const CLI::App& app);
// The app and its subcommands as data (help, completion, man page).
[[nodiscard]] CommandSpec describe_app(const CLI::App& app);

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// Every command as plain data, read from the CLI11 definitions (cli/help_format.cpp) plus the
// command table (cli/command_table.cpp). Help, shell completion and the man page are generated
// from it, so that they cannot drift from what the parser accepts. No CLI11 here.
#include <string>
#include <vector>

namespace gpurent {

struct OptionSpec {
  std::vector<std::string> names;  // "--yes", "-y"; a positional: its name ("model")
  bool positional = false;
  bool takes_value = false;
  bool repeatable = false;  // a list: the option may be given again, a positional takes several words
  bool required = false;
  std::string metavar;      // what help shows for the value: "CARD", "MODEL"
  std::string description;
};

struct CommandSpec {
  std::string name;  // "set"; "gpurent" at the top
  std::string path;  // "config set"; "" at the top
  std::string description;
  std::vector<OptionSpec> options;  // --help left out
  std::vector<CommandSpec> subcommands;
  std::vector<std::string> examples;
};

// Longest line of a text, in code points (help and man pages stay within a width).
[[nodiscard]] std::size_t widest_line(const std::string& text);

}  // namespace gpurent

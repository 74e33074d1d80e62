// SPDX-License-Identifier: MIT
#pragma once
// What help, shell completion and the man page know beyond the CLI11 definitions of each command
// (cli/<name>_command.cpp): the examples every `--help` ends with, the placeholder each option
// shows, and the values an option or positional takes. No CLI11 here.
#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent {

struct CommandDoc {
  std::string_view path;                     // "plan", "config set"; "" is gpurent itself
  std::array<std::string_view, 4> examples;  // 2-4 command lines; "" = none
};

[[nodiscard]] std::span<const CommandDoc> command_docs() noexcept;
// The examples of a command (empty when it has none).
[[nodiscard]] std::vector<std::string_view> command_examples(std::string_view path);

// The placeholder of an option's value in help and the man page: "--card CARD", "--hours H".
[[nodiscard]] std::string option_metavar(std::string_view option);

// server: the names of the open tracked servers, which the scripts ask `gpurent completion servers` for.
enum class ValueKind { free, word, file, directory, server };
struct ValueSet {
  ValueKind kind = ValueKind::free;
  std::vector<std::string> words;  // ValueKind::word: what completion offers
};
// What the value of `option` ("--card") or of a positional ("model") of command `path` can be.
[[nodiscard]] ValueSet option_values(std::string_view path, std::string_view option);

}  // namespace gpurent

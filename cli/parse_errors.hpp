// SPDX-License-Identifier: MIT
#pragma once
// CLI11's parse errors in gpurent's words ("Could not convert: --gpus = -1" becomes
// "--gpus `-1`: expects a whole number (0 or more)"). Pure: cli/app.cpp, the one place that
// catches CLI::ParseError, fills ParseFailure from the exception and the command it parsed.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct ParseFailure {
  std::string kind;                               // CLI11's error name: "ExtrasError", "ConversionError", …
  std::string what;                               // CLI11's message
  std::string command;                            // "plan", "config set"; "" for gpurent itself
  std::vector<std::string> options;               // the command's option names (--card, -y), for "did you mean"
  std::vector<std::string> subcommands;           // its subcommands (config: show, path, …)
  std::map<std::string, std::string> value_types;  // option -> CLI11 type name ("UINT", "FLOAT", "" for a flag)
  std::string example;                            // one example of the command, for a missing required option
  std::string stray_word;                         // a word given where a subcommand goes that names none
};

// An Errc::usage error: what was wrong in the user's terms, and the command's help to read next.
[[nodiscard]] Error parse_failure_error(const ParseFailure& f);

// The candidate closest to `word` (edit distance at most 2, or a prefix of it); "" when none is.
[[nodiscard]] std::string closest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace gpurent

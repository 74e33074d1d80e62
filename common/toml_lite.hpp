// SPDX-License-Identifier: MIT
#pragma once
// A small, strict TOML subset for gpurent's config file (pure: parses a string).
// Supported: `# comments`, blank lines, `[section]` and `[dotted.section]` headers (segments bare
// or "quoted"), `key = value` with bare or "quoted" keys, values "basic strings" (escapes for
// quote, backslash, n, t, r and uXXXX), 'literal strings', decimal numbers (optional sign, fraction, exponent) and
// true/false. Everything else (arrays, inline tables, multi-line strings, dates, dotted keys,
// duplicate keys or sections) is an error naming the line.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace gpurent {

struct TomlValue {
  enum class Kind { string, number, boolean };
  Kind kind = Kind::string;
  std::string text;  // Kind::string
  double number = 0;  // Kind::number
  bool boolean = false;  // Kind::boolean
};

struct TomlEntry {
  std::vector<std::string> section;  // empty for the root table
  std::string key;
  TomlValue value;
  int line = 0;
};

struct TomlDocument {
  std::vector<TomlEntry> entries;                 // in file order
  std::vector<std::vector<std::string>> sections;  // every header seen, in order
  std::vector<int> section_lines;                  // line of each header
};

inline constexpr std::size_t k_toml_max_bytes = 1024 * 1024;

// Errors are Errc::invalid_input with a message "line N: <what>".
[[nodiscard]] Result<TomlDocument> parse_toml(std::string_view text);

// "prices.gpucloud" style rendering of a section path (quoted where a segment needs it).
[[nodiscard]] std::string toml_section_name(const std::vector<std::string>& section);

}  // namespace gpurent

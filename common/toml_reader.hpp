// SPDX-License-Identifier: MIT
#pragma once
// The config file's TOML, read with toml++ (TOML 1.0; https://marzer.github.io/tomlplusplus,
// Debian's libtomlplusplus-dev, compiled header-only into this one file) and flattened into what
// gpurent's config uses: `key = value` entries under their table path, with the line each one is
// on. Values gpurent's config has no use for (arrays, inline tables, arrays of tables, dates and
// times, NaN and infinities) are an error naming the line, as is any TOML syntax error (toml++'s
// description, with the column).
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
  // Every table that holds a value or nothing at all (a `[header]`; the tables a dotted header
  // only implies, such as `cards` in `[cards.a10]`, are not listed), in file order.
  std::vector<std::vector<std::string>> sections;
  std::vector<int> section_lines;                  // line of each one's header (or first key)
};

inline constexpr std::size_t k_toml_max_bytes = 1024 * 1024;

// Errors are Errc::invalid_input with a message "line N: <what>" (the lenient reader of
// `config show` leaves line N out and reads the rest).
[[nodiscard]] Result<TomlDocument> parse_toml(std::string_view text);

// "prices.gpucloud" style rendering of a section path (quoted where a segment needs it).
[[nodiscard]] std::string toml_section_name(const std::vector<std::string>& section);

}  // namespace gpurent

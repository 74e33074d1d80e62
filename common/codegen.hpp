// SPDX-License-Identifier: MIT
#pragma once
// For the build's generators (sizing/gen/gen_model_catalog.cpp, providers/gen/gen_card_catalog.cpp),
// which turn data/*.json into C++ initialisers: string literals, and writing the output whole.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace gpurent::codegen {

// A C++ string literal: printable ASCII as is, other bytes as three-digit octal escapes.
inline std::string literal(std::string_view s)
{
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(c));
      out += buf;
    }
  }
  return out + "\"";
}

// A braced list of string literals: {"a", "b"}.
inline std::string strings(const std::vector<std::string>& v)
{
  std::string out = "{";
  for (std::size_t i = 0; i < v.size(); ++i) {
    out += (i ? ", " : "") + literal(v[i]);
  }
  return out + "}";
}

// The exact double, as a hexadecimal floating literal.
inline std::string exact(double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// Writes `text` to a temporary file beside `path`, then renames it over `path` (a build stopped
// half-way never leaves half a source). False with the reason on stderr.
inline bool replace_file(const std::string& path, const std::string& text)
{
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::cerr << tmp << ": cannot be written\n";
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::cerr << path << ": cannot be written\n";
    return false;
  }
  return true;
}

}  // namespace gpurent::codegen

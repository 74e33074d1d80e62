// SPDX-License-Identifier: MIT
#pragma once
// For the build's generators (sizing/gen/gen_model_catalog.cpp, providers/gen/gen_card_catalog.cpp),
// which turn data/*.json into C++ initialisers: string literals, and writing the output whole.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

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

// SPDX-License-Identifier: MIT
#include "common/terminal_text.hpp"

#include <cstdint>

namespace gpurent {
namespace {

constexpr char k_hex[] = "0123456789abcdef";

void hex_byte(std::string& out, std::string_view prefix, unsigned value)
{
  out += prefix;
  out += k_hex[(value >> 4) & 15];
  out += k_hex[value & 15];
}

// The length of the valid UTF-8 sequence at `at` and its code point; 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t at, std::uint32_t& cp)
{
  const auto b0 = static_cast<unsigned char>(s[at]);
  std::size_t n = 0;
  std::uint32_t min = 0;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2, cp = b0 & 0x1fU, min = 0x80;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3, cp = b0 & 0x0fU, min = 0x800;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4, cp = b0 & 0x07U, min = 0x10000;
  } else {
    return 0;
  }
  if (at + n > s.size()) {
    return 0;
  }
  for (std::size_t i = 1; i < n; ++i) {
    const auto b = static_cast<unsigned char>(s[at + i]);
    if ((b & 0xc0U) != 0x80U) {
      return 0;
    }
    cp = (cp << 6) | (b & 0x3fU);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}

}  // namespace

std::string escape_controls(std::string_view text, bool keep_newline_tab)
{
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 || c == 0x7f) && !(keep_newline_tab && (c == '\n' || c == '\t'))) {
        hex_byte(out, "\\x", c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = utf8_sequence(text, i, cp);
    if (n == 0) {
      hex_byte(out, "\\x", c);
      ++i;
    } else if (cp <= 0x9f) {
      hex_byte(out, "\\u00", cp);
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace gpurent

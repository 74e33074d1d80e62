// SPDX-License-Identifier: MIT
// String escapes and ANSI colour codes, removed from a log line before it is matched.
#include <cstdint>

#include "oom/lines.hpp"

namespace gpurent::oom_detail {
namespace {

bool digit(char c) noexcept { return c >= '0' && c <= '9'; }

int hex_value(char c) noexcept
{
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// The value of `n` hex digits at s[0..n), or -1.
int hex_number(std::string_view s, std::size_t n) noexcept
{
  if (s.size() < n) {
    return -1;
  }
  int v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int d = hex_value(s[i]);
    if (d < 0) {
      return -1;
    }
    v = v * 16 + d;
  }
  return v;
}

// The character a code point below 0x80 stands for here: controls become a space, ESC stays.
char from_code(int v) noexcept
{
  if (v == 0x1b) {
    return '\x1b';
  }
  if (v == '\n' || v == '\r') {
    return '\n';
  }
  return v < 0x20 || v == 0x7f ? ' ' : static_cast<char>(v);
}

}  // namespace

void unescape(std::string_view in, std::string& out, std::string& pending, bool flush)
{
  std::string joined;
  if (!pending.empty()) {
    joined = pending + std::string(in);
    in = joined;
    pending.clear();
  }
  std::size_t i = 0;
  while (i < in.size()) {
    const std::size_t slash = in.find('\\', i);
    if (slash == std::string_view::npos) {
      out.append(in.substr(i));
      return;
    }
    out.append(in.substr(i, slash - i));
    const std::string_view rest = in.substr(slash + 1);
    if (rest.empty() || ((rest[0] == 'u' || rest[0] == 'x') && rest.size() < (rest[0] == 'u' ? 5U : 3U))) {
      if (flush) {
        out.append(in.substr(slash));  // a lone backslash at the end of the line
      } else {
        pending.assign(in.substr(slash));
      }
      return;
    }
    std::size_t used = 2;
    switch (rest[0]) {
    case 'n':
    case 'r': out.push_back('\n'); break;
    case 't': out.push_back(' '); break;
    case '"':
    case '\'':
    case '/':
    case '\\': out.push_back(rest[0]); break;
    case 'u':
    case 'x': {  // \u001b (JSON), \x1b (Python)
      const std::size_t digits = rest[0] == 'u' ? 4 : 2;
      const int v = hex_number(rest.substr(1), digits);
      if (v < 0) {
        out.push_back('\\');
        used = 1;
      } else {
        out.push_back(v < 0x80 ? from_code(v) : '?');
        used = 2 + digits;
      }
      break;
    }
    default:
      out.push_back('\\');  // not an escape: keep the backslash, read the next character as text
      used = 1;
      break;
    }
    i = slash + used;
  }
}

void strip_ansi(std::string_view in, std::string& out, int& state)
{
  // state = kind + 8 * length so far; a sequence that runs too long was not one (an unterminated
  // OSC in garbage must not swallow the rest of a 2 GB line).
  constexpr int k_max_csi = 32;
  constexpr int k_max_osc = 512;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    const int kind = state & 7;
    const int length = state >> 3;
    switch (kind) {
    case 1:  // after ESC
      state = c == '[' ? 2 : c == ']' ? 3 : 0;
      continue;
    case 2:  // CSI: parameters until a final byte
      state = (c >= '@' && c <= '~') || length >= k_max_csi ? 0 : 2 + 8 * (length + 1);
      continue;
    case 3:  // OSC: until BEL or ESC backslash
      state = c == '\x07' || length >= k_max_osc ? 0 : (c == '\x1b' ? 4 : 3) + 8 * (length + 1);
      continue;
    case 4:
      state = c == '\\' || length >= k_max_osc ? 0 : 3 + 8 * (length + 1);
      continue;
    default: break;
    }
    if (c != '\x1b' && c != '^' && c != '[') {
      // Fast path: copy up to the next character that may start a sequence in one go.
      const std::size_t next = in.find_first_of("\x1b^[", i);
      const std::size_t end = next == std::string_view::npos ? in.size() : next;
      out.append(in.substr(i, end - i));
      i = end - 1;
      continue;
    }
    if (c == '\x1b') {
      state = 1;
      continue;
    }
    if (c == '^' && i + 1 < in.size() && in[i + 1] == '[') {
      state = 1;  // caret notation "^[[0m"
      ++i;
      continue;
    }
    if (c == '[') {  // bare residue "[0m", "[1;31m" of a pasted coloured log
      std::size_t j = i + 1;
      while (j < in.size() && j - i <= 12 && (digit(in[j]) || in[j] == ';')) {
        ++j;
      }
      if (j < in.size() && in[j] == 'm' && j > i + 1) {
        i = j;
        continue;
      }
    }
    out.push_back(c);
  }
}

}  // namespace gpurent::oom_detail

// SPDX-License-Identifier: MIT
#include "oom/grammar.hpp"

#include <utility>

namespace gpurent::oom_detail {

Match match_pattern(std::string_view text, std::size_t pos, std::string_view pattern, bool final)
{
  Match m;
  std::size_t t = pos;
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}') {
      const std::size_t next = pattern.find('{', i + 3);
      const std::string_view then = pattern.substr(i + 3, next == std::string_view::npos ? std::string_view::npos : next - i - 3);
      Piece piece = read_placeholder(pattern[i + 1], text, t, final, then);
      if (piece.status != Status::ok) {
        m.status = piece.status;
        m.error = std::move(piece.error);
        return m;
      }
      if (m.count < m.fields.size()) {
        m.fields[m.count++] = piece.field;
      }
      t = piece.end;
      i += 3;
      continue;
    }
    if (t >= text.size()) {
      m.status = final ? Status::mismatch : Status::eof;
      return m;
    }
    if (text[t] != pattern[i]) {
      return m;
    }
    ++t;
    ++i;
  }
  m.status = Status::ok;
  m.end = t;
  return m;
}

Match match_ending_at(std::string_view text, std::size_t end, std::string_view word, std::string_view pattern, std::size_t window)
{
  const std::size_t floor = end > window ? end - window : 0;
  const std::size_t at = text.substr(0, end).rfind(word);
  if (at == std::string_view::npos || at < floor) {
    return Match{};
  }
  Match m = match_pattern(text.substr(0, end), at, pattern, true);
  if (m.status == Status::ok && m.end != end) {
    m.status = Status::mismatch;
  }
  return m;
}

}  // namespace gpurent::oom_detail

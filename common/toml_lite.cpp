// SPDX-License-Identifier: MIT
#include "common/toml_lite.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "common/text.hpp"

namespace gpurent {
namespace {

class LineParser {
public:
  LineParser(std::string_view line, int number) : m_s(line), m_line(number) {}

  void skip_ws()
  {
    while (m_pos < m_s.size() && (m_s[m_pos] == ' ' || m_s[m_pos] == '\t')) {
      ++m_pos;
    }
  }
  [[nodiscard]] bool at_end() const { return m_pos >= m_s.size(); }
  [[nodiscard]] char peek(std::size_t ahead = 0) const
  {
    return m_pos + ahead < m_s.size() ? m_s[m_pos + ahead] : '\0';
  }
  [[nodiscard]] bool rest_is_blank_or_comment()
  {
    skip_ws();
    return at_end() || peek() == '#';
  }
  void advance(std::size_t n = 1) { m_pos += n; }

  // Errors are one line: control characters quoted from the input (a decoded "\n" in a key,
  // say) are shown escaped.
  [[nodiscard]] std::unexpected<Error> error(const std::string& what) const
  {
    std::string shown;
    for (const char c : what) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        shown += c == '\n' ? std::string("\\n") : printable(c);
      } else {
        shown += c;
      }
    }
    return fail(Errc::invalid_input, "line " + std::to_string(m_line) + ": " + shown);
  }

  // A bare key ([A-Za-z0-9_-]+) or a quoted one.
  [[nodiscard]] Result<std::string> key()
  {
    skip_ws();
    if (peek() == '"' || peek() == '\'') {
      TRY_ASSIGN(std::string k, quoted());
      if (k.empty()) {
        return error("empty key");
      }
      return k;
    }
    const std::size_t start = m_pos;
    while (!at_end() && is_bare(peek())) {
      advance();
    }
    if (m_pos == start) {
      return error(at_end() ? "expected a key" : std::string("unexpected character `") + printable(peek()) + "`; expected a key");
    }
    return std::string(m_s.substr(start, m_pos - start));
  }

  [[nodiscard]] Result<TomlValue> value()
  {
    skip_ws();
    TomlValue v;
    const char c = peek();
    if (at_end()) {
      return error("missing value after `=`");
    }
    if (c == '"' || c == '\'') {
      TRY_ASSIGN(v.text, quoted());
      v.kind = TomlValue::Kind::string;
      return v;
    }
    if (c == '[') {
      return error("arrays are not supported");
    }
    if (c == '{') {
      return error("inline tables are not supported");
    }
    const std::size_t start = m_pos;
    while (!at_end() && peek() != ' ' && peek() != '\t' && peek() != '#') {
      advance();
    }
    const std::string_view token = m_s.substr(start, m_pos - start);
    if (token == "true" || token == "false") {
      v.kind = TomlValue::Kind::boolean;
      v.boolean = token == "true";
      return v;
    }
    if (!is_number(token)) {
      return error("invalid value `" + std::string(token.substr(0, 40)) +
                   "`; expected a \"string\", a number or true/false");
    }
    const auto d = parse_double(token);
    if (!d.has_value()) {
      return error("number `" + std::string(token.substr(0, 40)) + "` is out of range");
    }
    v.kind = TomlValue::Kind::number;
    v.number = *d;
    return v;
  }

private:
  static bool is_bare(char c)
  {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  static std::string printable(char c)
  {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      return "\\x" + std::string(1, "0123456789abcdef"[u >> 4]) + std::string(1, "0123456789abcdef"[u & 15]);
    }
    return std::string(1, c);
  }
  static bool is_digits(std::string_view s)
  {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  }
  // [+-]? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  static bool is_number(std::string_view t)
  {
    if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
      t.remove_prefix(1);
    }
    const auto e = t.find_first_of("eE");
    std::string_view mant = t.substr(0, e);
    if (e != std::string_view::npos) {
      std::string_view ex = t.substr(e + 1);
      if (!ex.empty() && (ex[0] == '+' || ex[0] == '-')) {
        ex.remove_prefix(1);
      }
      if (!is_digits(ex)) {
        return false;
      }
    }
    const auto dot = mant.find('.');
    const std::string_view whole = mant.substr(0, dot);
    if (!is_digits(whole) || (whole.size() > 1 && whole[0] == '0')) {
      return false;
    }
    return dot == std::string_view::npos || is_digits(mant.substr(dot + 1));
  }
  static void append_utf8(std::string& out, std::uint32_t cp)
  {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  [[nodiscard]] Result<std::string> quoted()
  {
    const char q = peek();
    if (peek(1) == q && peek(2) == q) {
      return error("multi-line strings are not supported");
    }
    advance();
    std::string out;
    while (true) {
      if (at_end()) {
        return error("unterminated string");
      }
      const char c = peek();
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7f) {
        return error("control character " + printable(c) + " in a string");
      }
      advance();
      if (c == q) {
        return out;
      }
      if (c != '\\' || q == '\'') {
        out.push_back(c);
        continue;
      }
      TRY(escape(out));
    }
  }

  [[nodiscard]] Result<void> escape(std::string& out)
  {
    if (at_end()) {
      return error("unterminated string");
    }
    const char e = peek();
    advance();
    switch (e) {
    case '"': out.push_back('"'); return {};
    case '\\': out.push_back('\\'); return {};
    case 'n': out.push_back('\n'); return {};
    case 't': out.push_back('\t'); return {};
    case 'r': out.push_back('\r'); return {};
    case 'u': {
      std::uint32_t cp = 0;
      for (int i = 0; i < 4; ++i) {
        const char h = peek();
        int d = -1;
        if (h >= '0' && h <= '9') {
          d = h - '0';
        } else if (h >= 'a' && h <= 'f') {
          d = h - 'a' + 10;
        } else if (h >= 'A' && h <= 'F') {
          d = h - 'A' + 10;
        }
        if (d < 0) {
          return error("\\u needs 4 hex digits");
        }
        cp = cp * 16 + static_cast<std::uint32_t>(d);
        advance();
      }
      if (cp >= 0xD800 && cp <= 0xDFFF) {
        return error("\\u escape is a surrogate, not a character");
      }
      append_utf8(out, cp);
      return {};
    }
    default: return error(std::string("unknown escape \\") + printable(e));
    }
  }

  std::string_view m_s;
  std::size_t m_pos = 0;
  int m_line = 0;
};

}  // namespace

std::string toml_section_name(const std::vector<std::string>& section)
{
  std::string out;
  for (const auto& seg : section) {
    out += out.empty() ? "" : ".";
    const bool bare = !seg.empty() && std::all_of(seg.begin(), seg.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    out += bare ? seg : "\"" + seg + "\"";
  }
  return out;
}

Result<TomlDocument> parse_toml(std::string_view text)
{
  if (text.size() > k_toml_max_bytes) {
    return fail(Errc::invalid_input, "file is larger than 1 MiB; a config file is a few lines");
  }
  if (text.find('\0') != std::string_view::npos) {
    return fail(Errc::invalid_input, "file contains NUL bytes; it is not a text file");
  }
  TomlDocument doc;
  std::vector<std::string> current;
  std::string current_name;
  std::set<std::string> seen_sections;
  std::set<std::string> seen_keys;  // section name + '\x1f' + key
  int number = 0;
  for (std::string_view raw : split(text, '\n')) {
    ++number;
    if (!raw.empty() && raw.back() == '\r') {
      raw.remove_suffix(1);
    }
    LineParser p(raw, number);
    if (p.rest_is_blank_or_comment()) {
      continue;
    }
    if (p.peek() == '[') {
      if (p.peek(1) == '[') {
        return p.error("arrays of tables ([[...]]) are not supported");
      }
      p.advance();
      std::vector<std::string> section;
      while (true) {
        TRY_ASSIGN(std::string seg, p.key());
        section.push_back(std::move(seg));
        p.skip_ws();
        if (p.peek() == '.') {
          p.advance();
          continue;
        }
        if (p.peek() == ']') {
          p.advance();
          break;
        }
        return p.error("expected `.` or `]` in the section header");
      }
      if (!p.rest_is_blank_or_comment()) {
        return p.error("unexpected text after the section header");
      }
      const std::string name = toml_section_name(section);
      if (!seen_sections.insert(name).second) {
        return p.error("section [" + name + "] appears twice");
      }
      current_name = name;
      doc.sections.push_back(section);
      doc.section_lines.push_back(number);
      current = std::move(section);
      continue;
    }
    TRY_ASSIGN(std::string key, p.key());
    p.skip_ws();
    if (p.peek() == '.') {
      return p.error("dotted keys are not supported; use a [section]");
    }
    if (p.peek() != '=') {
      return p.error("expected `=` after the key `" + key.substr(0, 40) + "`");
    }
    p.advance();
    TRY_ASSIGN(TomlValue value, p.value());
    if (!p.rest_is_blank_or_comment()) {
      return p.error("unexpected text after the value");
    }
    if (!seen_keys.insert(current_name + '\x1f' + key).second) {
      return p.error("key `" + key.substr(0, 40) + "` appears twice");
    }
    doc.entries.push_back(TomlEntry{current, std::move(key), std::move(value), number});
  }
  return doc;
}

}  // namespace gpurent

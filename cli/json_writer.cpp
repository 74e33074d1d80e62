// SPDX-License-Identifier: MIT
#include "cli/json_writer.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "common/rounding.hpp"

namespace gpurent {

void JsonWriter::indent(std::size_t levels) { m_out.append(m_base + 2 * levels, ' '); }

void JsonWriter::separate()
{
  if (m_empty.back() != 0) {
    m_out += '\n';
    m_empty.back() = 0;
  } else {
    m_out.append(",\n", 2);
  }
  indent(m_empty.size());
}

void JsonWriter::before_value()
{
  if (m_after_key) {
    m_after_key = false;  // the key placed the value already
    return;
  }
  if (!m_empty.empty()) {  // an array item
    separate();
  }
}

JsonWriter& JsonWriter::key(std::string_view k)
{
  separate();
  // The quoted key and ": " in one append where the key needs no escape (a member's key is
  // written some 7,500 times per plan).
  if (!needs_escape(k)) {
    const std::size_t at = m_out.size();
    m_out.append(k.size() + 4, '"');
    std::copy(k.begin(), k.end(), m_out.begin() + static_cast<std::ptrdiff_t>(at + 1));
    m_out[at + k.size() + 2] = ':';
    m_out[at + k.size() + 3] = ' ';
  } else {
    quoted(k);
    m_out.append(": ", 2);
  }
  m_after_key = true;
  return *this;
}

void JsonWriter::open(char c)
{
  before_value();
  m_out += c;
  m_empty.push_back(1);
}

void JsonWriter::close(char c)
{
  const bool empty = m_empty.back() != 0;
  m_empty.pop_back();
  if (!empty) {
    m_out += '\n';
    indent(m_empty.size());
  }
  m_out += c;
}

void JsonWriter::begin_object() { open('{'); }
void JsonWriter::end_object() { close('}'); }
void JsonWriter::begin_array() { open('['); }
void JsonWriter::end_array() { close(']'); }

void JsonWriter::string(std::string_view s)
{
  before_value();
  quoted(s);
}

bool JsonWriter::needs_escape(std::string_view s) noexcept
{
  // Printable ASCII but for the quote and the backslash goes as it is (found by a table lookup per
  // byte, no branch).
  static constexpr auto k_escaped = [] {
    std::array<unsigned char, 256> t{};
    for (std::size_t c = 0; c < 256; ++c) {
      t[c] = c < 0x20 || c >= 0x7f || c == '"' || c == '\\' ? 1 : 0;
    }
    return t;
  }();
  unsigned char any = 0;
  for (const char c : s) {
    any |= k_escaped[static_cast<unsigned char>(c)];
  }
  return any != 0;
}

void JsonWriter::quoted(std::string_view s)
{
  // Anything but printable ASCII (escapes, UTF-8, and nlohmann's error on invalid UTF-8) is
  // nlohmann's own dump of the string.
  if (needs_escape(s)) {
    m_out += nlohmann::ordered_json(std::string(s)).dump();
    return;
  }
  // One growth of the string, not three appends (libstdc++ 12's resize_and_overwrite hands the
  // operation the grown capacity instead of the size asked for).
  const std::size_t at = m_out.size();
  m_out.append(s.size() + 2, '"');
  std::copy(s.begin(), s.end(), m_out.begin() + static_cast<std::ptrdiff_t>(at + 1));
}

void JsonWriter::boolean(bool b)
{
  before_value();
  m_out += b ? "true" : "false";
}

void JsonWriter::null()
{
  before_value();
  m_out += "null";
}

namespace {

// A value that is a decimal of at most two places (the answer's rounded figures: GiB, dollars,
// tokens per second, hours) in nlohmann's shortest form ("6.13", "24.8", "3.0", "-0.05"), written
// directly: such a double is the one nearest that decimal, so the decimal with its trailing zeros
// dropped is the shortest that reads back as it. Anything else (more places, -0.0, very large):
// nullptr.
char* two_places(double d, char* out) noexcept
{
  if (!(d > -1e12 && d < 1e12) || (d == 0.0 && std::signbit(d))) {
    return nullptr;
  }
  const auto n = static_cast<std::int64_t>(round_half_away(d * 100.0));
  if (static_cast<double>(n) / 100.0 != d) {
    return nullptr;
  }
  std::uint64_t v = n < 0 ? static_cast<std::uint64_t>(-n) : static_cast<std::uint64_t>(n);
  if (n < 0) {
    *out++ = '-';
  }
  out = std::to_chars(out, out + 24, v / 100).ptr;
  *out++ = '.';
  const auto cents = static_cast<char>(v % 100);
  *out++ = static_cast<char>('0' + cents / 10);
  if (cents % 10 != 0) {
    *out++ = static_cast<char>('0' + cents % 10);
  }
  return out;
}

}  // namespace

void JsonWriter::number(double d)
{
  before_value();
  if (!std::isfinite(d)) {
    m_out += "null";  // as nlohmann writes NaN and infinities
    return;
  }
  char fast[32];
  if (const char* end = two_places(d, fast)) {
    m_out.append(fast, static_cast<std::size_t>(end - fast));
    return;
  }
  // nlohmann's own shortest round-trip formatting (what its serializer calls), so that a value
  // prints here exactly as in a dumped document.
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
  m_out.append(buf, end);
}

void JsonWriter::number(std::int64_t n)
{
  before_value();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  m_out.append(buf, r.ptr);
}

void JsonWriter::number(std::uint64_t n)
{
  before_value();
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  m_out.append(buf, r.ptr);
}

void JsonWriter::member_or_null(std::string_view k, const std::string& s)
{
  key(k);
  if (s.empty()) {
    null();
  } else {
    string(s);
  }
}

void JsonWriter::member_or_null(std::string_view k, const std::optional<double>& d)
{
  key(k);
  if (d) {
    number(*d);
  } else {
    null();
  }
}

}  // namespace gpurent

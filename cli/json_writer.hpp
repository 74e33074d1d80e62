// SPDX-License-Identifier: MIT
// A JSON writer that appends to a string exactly what nlohmann's dump(2) prints for the same
// document (keys in the order written, two spaces per level, "{}" and "[]" when empty, strings
// escaped and doubles formatted as nlohmann does), without building the document first. plan
// writes one object per option at every start (docs/benchmarks.md "plan start-up"); building each
// as an nlohmann document and dumping it cost more than the ranking itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpurent {

class JsonWriter {
public:
  // `out` grows; `depth` spaces is where the first value sits (its nested lines move right).
  explicit JsonWriter(std::string& out, std::size_t depth = 0) : m_out(out), m_base(depth) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next member's key, inside an object.
  JsonWriter& key(std::string_view k);

  void string(std::string_view s);
  void boolean(bool b);
  void null();
  void number(double d);
  void number(std::int64_t n);
  void number(std::uint64_t n);
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  void number(T n)
  {
    if constexpr (std::is_signed_v<T>) {
      number(static_cast<std::int64_t>(n));
    } else {
      number(static_cast<std::uint64_t>(n));
    }
  }

  // key(k) then the value.
  void member(std::string_view k, std::string_view s) { key(k).string(s); }
  void member(std::string_view k, const char* s) { key(k).string(s); }
  void member(std::string_view k, const std::string& s) { key(k).string(s); }
  void member_bool(std::string_view k, bool b) { key(k).boolean(b); }
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
  void member(std::string_view k, T n)
  {
    key(k).number(n);
  }
  // A string or null when empty; a number or null when absent.
  void member_or_null(std::string_view k, const std::string& s);
  void member_or_null(std::string_view k, const std::optional<double>& d);

private:
  void before_value();  // the separator and indentation an array item needs
  void quoted(std::string_view s);  // a string as JSON, escaped
  [[nodiscard]] static bool needs_escape(std::string_view s) noexcept;  // as JSON it is not the bytes themselves
  void separate();  // before a member or an item: the line break, the comma after an earlier one, the indentation
  void open(char c);
  void close(char c);
  void indent(std::size_t levels);

  std::string& m_out;
  std::size_t m_base;
  // Per open container: 1 while nothing is written in it. A string: 15 levels without an
  // allocation (a writer is made per option of a plan).
  std::string m_empty;
  bool m_after_key = false;
};

}  // namespace gpurent

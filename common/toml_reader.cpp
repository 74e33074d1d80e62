// SPDX-License-Identifier: MIT
#include "common/toml_reader.hpp"

// toml++ compiled into this file only (Debian ships it as a shared library too, which the
// executable must not load: it links libc alone, docs/benchmarks.md "Start-up"), without
// exceptions: parse() returns a result holding the table or the error.
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#define TOML_ENABLE_FORMATTERS 0
// toml++'s internal assertions abort the process (or, built with NDEBUG by clang, become
// __builtin_assume) where its parser then returns an ordinary error. Bad input must get a clear
// error, never an abort: the one precondition input can break in 3.3 (a table header whose
// first character cannot start a key, marzer/tomlplusplus#301, fixed upstream in 2026-05) is
// refused before toml++ sees it (header_start_error below), and the others are checked, not
// assumed.
#define TOML_ASSERT(expr) static_assert(true)
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/text.hpp"

namespace gpurent {
namespace {

// One line whatever the input quoted: control characters are shown escaped (\n, \xNN).
std::string one_line(std::string_view what)
{
  std::string shown;
  for (const char c : what) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      shown += "\\n";
    } else if (u < 0x20 || u == 0x7f) {
      shown += "\\x" + std::string(1, "0123456789abcdef"[u >> 4]) + std::string(1, "0123456789abcdef"[u & 15]);
    } else {
      shown += c;
    }
  }
  return shown;
}

std::unexpected<Error> error_at(std::uint32_t line, std::string_view what)
{
  return fail(Errc::invalid_input, "line " + std::to_string(std::max<std::uint32_t>(line, 1)) + ": " + one_line(what));
}

bool key_start(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '"' || c == '\'';
}

// A line that opens a table header (`[` or `[[`, after blanks) must go on with a key: toml++ 3.3
// asserts that it does (marzer/tomlplusplus#301). Lines inside multi-line strings or arrays are
// not told apart; the config has no use for either.
std::optional<std::uint32_t> header_start_error(std::string_view text)
{
  std::uint32_t line = 0;
  for (std::string_view l : split(text, '\n')) {
    ++line;
    std::size_t i = 0;
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) {
      ++i;
    }
    if (i >= l.size() || l[i] != '[') {
      continue;
    }
    ++i;
    if (i < l.size() && l[i] == '[') {
      ++i;
    }
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) {
      ++i;
    }
    if (i >= l.size() || !key_start(l[i])) {
      return line;
    }
  }
  return std::nullopt;
}

class Flattener {
public:
  explicit Flattener(TomlDocument& doc) : m_doc(doc) {}

  Result<void> table(const toml::table& t, std::vector<std::string>& path)
  {
    bool holds_value = false;
    for (const auto& [key, node] : t) {
      holds_value = holds_value || !node.is_table();
    }
    if (!path.empty() && (holds_value || t.empty())) {
      m_doc.sections.push_back(path);
      m_doc.section_lines.push_back(static_cast<int>(t.source().begin.line));
    }
    for (const auto& [key, node] : t) {
      const std::uint32_t line = node.source().begin.line;
      const std::string name(key.str());
      if (name.empty()) {
        return error_at(line, "empty key");
      }
      if (const auto* sub = node.as_table()) {
        if (sub->is_inline()) {
          return error_at(line, "`" + name + "`: inline tables are not used in gpurent's config; write a [" +
                                    toml_section_name(with(path, name)) + "] section");
        }
        path.push_back(name);
        TRY(table(*sub, path));
        path.pop_back();
        continue;
      }
      TomlEntry e;
      e.section = path;
      e.key = name;
      e.line = static_cast<int>(line);
      if (const auto* s = node.as_string()) {
        e.value.kind = TomlValue::Kind::string;
        e.value.text = s->get();
      } else if (const auto* i = node.as_integer()) {
        e.value.kind = TomlValue::Kind::number;
        e.value.number = static_cast<double>(i->get());
      } else if (const auto* f = node.as_floating_point()) {
        if (!std::isfinite(f->get())) {
          return error_at(line, "`" + name + "`: nan and inf are not numbers gpurent's config can use");
        }
        e.value.kind = TomlValue::Kind::number;
        e.value.number = f->get();
      } else if (const auto* b = node.as_boolean()) {
        e.value.kind = TomlValue::Kind::boolean;
        e.value.boolean = b->get();
      } else if (node.is_array()) {
        return error_at(line, "`" + name + "`: arrays are not used in gpurent's config");
      } else {
        return error_at(line, "`" + name + "`: dates and times are not used in gpurent's config");
      }
      m_doc.entries.push_back(std::move(e));
    }
    return {};
  }

private:
  static std::vector<std::string> with(std::vector<std::string> path, const std::string& name)
  {
    path.push_back(name);
    return path;
  }

  TomlDocument& m_doc;
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
  if (const auto line = header_start_error(text)) {
    return error_at(*line, "a table header must start with a key: a bare key (A-Za-z0-9_-) or a quoted one");
  }
  toml::parse_result parsed = toml::parse(text);
  if (!parsed) {
    // "Error while parsing key-value pair: expected '=', saw 'h'" -> "expected '=', saw 'h'
    // (column 10, in a key-value pair)".
    const toml::parse_error& e = parsed.error();
    std::string what(e.description());
    std::string where = "column " + std::to_string(e.source().begin.column);
    constexpr std::string_view k_prefix = "Error while parsing ";
    if (const auto colon = what.find(": "); what.starts_with(k_prefix) && colon != std::string::npos) {
      where += ", in a " + what.substr(k_prefix.size(), colon - k_prefix.size());
      what = what.substr(colon + 2);
    }
    return error_at(e.source().begin.line, what + " (" + where + ")");
  }
  TomlDocument doc;
  std::vector<std::string> path;
  Flattener flat(doc);
  TRY(flat.table(parsed.table(), path));
  // toml++ keeps a table's keys sorted; the file's order is the lines' order.
  std::stable_sort(doc.entries.begin(), doc.entries.end(),
                   [](const TomlEntry& a, const TomlEntry& b) { return a.line < b.line; });
  std::vector<std::size_t> order(doc.sections.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return doc.section_lines[a] < doc.section_lines[b]; });
  TomlDocument sorted = doc;
  for (std::size_t i = 0; i < order.size(); ++i) {
    sorted.sections[i] = doc.sections[order[i]];
    sorted.section_lines[i] = doc.section_lines[order[i]];
  }
  return sorted;
}

}  // namespace gpurent

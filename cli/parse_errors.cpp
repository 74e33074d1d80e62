// SPDX-License-Identifier: MIT
#include "cli/parse_errors.hpp"

#include <algorithm>
#include <cctype>

#include "cli/command_table.hpp"
#include "common/text.hpp"

namespace gpurent {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string gpurent_cmd(const std::string& command)
{
  return command.empty() ? "`gpurent`" : "`gpurent " + command + "`";
}

std::string help_hint(const std::string& command)
{
  return command.empty() ? "see `gpurent --help`" : "see `gpurent " + command + " --help`";
}

// "A: B" -> {"A", "B"} at the first ": ".
std::pair<std::string, std::string> head_rest(const std::string& s)
{
  const auto colon = s.find(": ");
  if (colon == std::string::npos) {
    return {s, ""};
  }
  return {s.substr(0, colon), s.substr(colon + 2)};
}

// A positional's name as help shows it ("name" -> "NAME"); options stay as they are.
std::string shown_name(const std::string& name)
{
  if (name.starts_with("-")) {
    return name;
  }
  std::string out = name;
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string what_it_expects(const std::string& type)
{
  if (type == "UINT") {
    return "expects a whole number (0 or more)";
  }
  if (type == "INT") {
    return "expects a whole number";
  }
  if (type == "FLOAT") {
    return "expects a number";
  }
  if (type.empty()) {
    return "is a flag and takes no value";
  }
  return "is not a valid value";
}

Error usage(const ParseFailure& f, std::string message, std::string hint = "")
{
  return Error{Errc::usage, std::move(message) + "; " + (hint.empty() ? help_hint(f.command) : std::move(hint))};
}

Error extras(const ParseFailure& f)
{
  const auto [head, rest] = head_rest(f.what);
  // CLI11 lists the unexpected words in its own order ("2 --gpuss" for `--gpuss 2`): an unknown
  // option among them is what the user mistyped, so it is named before any stray value.
  const auto words = split(rest, ' ');
  std::string first = std::string(trim(words.front()));
  for (const auto& w : words) {
    if (trim(w).starts_with("-")) {
      first = std::string(trim(w));
      break;
    }
  }
  if (first.starts_with("-")) {
    const std::string name = first.substr(0, first.find('='));
    const std::string near = closest_word(name, f.options);
    return usage(f, gpurent_cmd(f.command) + " has no option " + name + (near.empty() ? "" : " (did you mean " + near + "?)"));
  }
  if (!f.subcommands.empty()) {
    std::string list;
    for (const auto& s : f.subcommands) {
      list += (list.empty() ? "" : ", ") + s;
    }
    const std::string near = closest_word(first, f.subcommands);
    return usage(f, gpurent_cmd(f.command) + " has no subcommand `" + first + "`" +
                        (near.empty() ? "" : " (did you mean `" + near + "`?)") + "; its subcommands: " + list);
  }
  return usage(f, gpurent_cmd(f.command) + ": unexpected argument `" + first + "`");
}

Error required(const ParseFailure& f)
{
  if (f.what.find("subcommand") != std::string::npos) {
    std::string list;
    for (const auto& s : f.subcommands) {
      list += (list.empty() ? "" : ", ") + s;
    }
    if (!f.stray_word.empty()) {
      const std::string near = closest_word(f.stray_word, f.subcommands);
      return usage(f, gpurent_cmd(f.command) + " has no subcommand `" + f.stray_word + "`" +
                          (near.empty() ? "" : " (did you mean `" + near + "`?)") + "; its subcommands: " + list);
    }
    return usage(f, gpurent_cmd(f.command) + " needs a " + (f.command.empty() ? "command" : "subcommand") +
                        (list.empty() ? "" : " (" + list + ")"));
  }
  const auto is = f.what.find(" is required");
  const std::string name = is == std::string::npos ? f.what : f.what.substr(0, is);
  const std::string hint = f.example.empty() ? help_hint(f.command) : "e.g. `" + f.example + "`";
  return usage(f, gpurent_cmd(f.command) + " needs " + shown_name(name), hint);
}

Error mismatch(const ParseFailure& f)
{
  const auto [name, rest] = head_rest(f.what);
  if (rest.starts_with("At Most 1 required")) {
    return usage(f, shown_name(name) + " was given more than once; give it once");
  }
  if (rest.find("missing") != std::string::npos || rest.starts_with("At least")) {
    return usage(f, shown_name(name) + " needs a value: " + shown_name(name) + " " + option_metavar(name));
  }
  const auto to = f.what.find(" arguments to ");
  if (f.what.starts_with("Expected") && to != std::string::npos) {
    const std::string opt = f.what.substr(to + 14, f.what.find(',', to) - to - 14);
    return usage(f, opt + " needs a value: " + opt + " " + option_metavar(opt));
  }
  return usage(f, f.what);
}

Error conversion(const ParseFailure& f)
{
  const std::string prefix = "Could not convert: ";
  if (f.what.starts_with(prefix)) {
    const std::string rest = f.what.substr(prefix.size());
    const auto eq = rest.find(" = ");
    const std::string name = rest.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : rest.substr(eq + 3);
    const auto type = f.value_types.find(name);
    return usage(f, shown_name(name) + " `" + value.substr(0, 40) + "`: " +
                        what_it_expects(type == f.value_types.end() ? "TEXT" : type->second));
  }
  const auto [name, rest] = head_rest(f.what);
  if (rest.find("flag") != std::string::npos || rest.find("true/false") != std::string::npos) {
    return usage(f, name + " is a flag and takes no value");
  }
  const std::string allowed = "The value ";
  const auto for_pos = f.what.find(" is not an allowed value for ");
  if (f.what.starts_with(allowed) && for_pos != std::string::npos) {
    return usage(f, f.what.substr(for_pos + 29) + " `" + f.what.substr(allowed.size(), for_pos - allowed.size()) +
                        "`: not an allowed value");
  }
  return usage(f, f.what);
}

Error validation(const ParseFailure& f)
{
  const auto [name, rest] = head_rest(f.what);
  const std::string value_prefix = "Value ";
  const auto range = rest.find(" not in range ");
  if (rest.starts_with(value_prefix) && range != std::string::npos) {
    // CLI11's range check says "not in range" of a value that is no number at all too.
    const std::string value = rest.substr(value_prefix.size(), range - value_prefix.size());
    const bool number = !value.empty() && value.find_first_not_of("+-.0123456789eE") == std::string::npos &&
                        std::any_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    return usage(f, shown_name(name) + " " + (number ? value + ": out of range" : "`" + value + "`: not a number") + "; give " +
                        rest.substr(range + 14));
  }
  return usage(f, shown_name(name) + ": " + rest);
}

Error two_options(const ParseFailure& f, std::string_view verb, std::string_view text)
{
  const auto at = f.what.find(verb);
  if (at == std::string::npos) {
    return usage(f, f.what);
  }
  return usage(f, f.what.substr(0, at) + std::string(text) + f.what.substr(at + verb.size()));
}

}  // namespace

std::string closest_word(std::string_view word, const std::vector<std::string>& candidates)
{
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (word.size() >= 3 && c.starts_with(word)) {
      d = std::min<std::size_t>(d, 1);
    }
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Error parse_failure_error(const ParseFailure& f)
{
  if (f.kind == "ExtrasError") {
    return extras(f);
  }
  if (f.kind == "RequiredError") {
    return required(f);
  }
  if (f.kind == "ArgumentMismatch") {
    return mismatch(f);
  }
  if (f.kind == "ConversionError") {
    return conversion(f);
  }
  if (f.kind == "ValidationError") {
    return validation(f);
  }
  if (f.kind == "ExcludesError") {
    return two_options(f, " excludes ", " cannot be used with ");
  }
  if (f.kind == "RequiresError") {
    return two_options(f, " requires ", " needs ");
  }
  return usage(f, gpurent_cmd(f.command) + ": " + f.what);
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#include "cli/config_edit.hpp"

#include <algorithm>
#include <vector>

#include "cli/config.hpp"
#include "common/text.hpp"
#include "common/toml_reader.hpp"
#include "providers/catalog.hpp"

namespace gpurent {
namespace {

// Example values for the template, for keys without a built-in default.
std::string example_value(const ConfigKeyInfo& k)
{
  if (!k.default_text.empty()) {
    return k.type == ConfigType::number || k.type == ConfigType::boolean ? std::string(k.default_text) : "\"" + std::string(k.default_text) + "\"";
  }
  if (k.name == "budget_usd") {
    return "100";
  }
  if (k.name == "default_provider") {
    return "\"runpod\"";
  }
  if (k.name == "backup_dir") {
    return "\"~/gpurent-backups\"";
  }
  if (k.name == "ssh_identity") {
    return "\"~/.ssh/id_ed25519\"";
  }
  if (k.name == "known_hosts") {
    return "\"~/.local/state/gpurent/known_hosts\"";
  }
  return "\"\"";
}

std::vector<std::string> lines_of(std::string_view text)
{
  std::vector<std::string> lines;
  for (const auto l : split(text, '\n')) {
    lines.emplace_back(l);
  }
  if (!lines.empty() && lines.back().empty()) {
    lines.pop_back();  // the newline that ends the file
  }
  return lines;
}

std::string text_of(const std::vector<std::string>& lines)
{
  std::string out;
  for (const auto& l : lines) {
    out += l + "\n";
  }
  return out;
}

// Where a `# comment` starts on a line, outside quoted strings; npos when there is none.
std::size_t comment_start(std::string_view line)
{
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '"' && c == '\\') {
      ++i;
    } else if (quote != 0 && c == quote) {
      quote = 0;
    } else if (quote == 0 && (c == '"' || c == '\'')) {
      quote = c;
    } else if (quote == 0 && c == '#') {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string toml_string(std::string_view s)
{
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      static constexpr char k_hex[] = "0123456789ABCDEF";
      out += "\\u00";
      out += k_hex[u >> 4];
      out += k_hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string toml_key(std::string_view key)
{
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return bare ? std::string(key) : toml_string(key);
}

// "# budget_usd = 100" (a commented-out template line for `key`).
bool is_commented_key_line(std::string_view line, std::string_view key)
{
  line = trim(line);
  if (!line.starts_with('#')) {
    return false;
  }
  line = trim(line.substr(1));
  if (!line.starts_with(key)) {
    return false;
  }
  line = trim(line.substr(key.size()));
  return line.starts_with('=');
}

struct Target {
  std::vector<std::string> section;  // empty: the root table
  std::string key;
  std::string rendered;  // the value as TOML
};

Result<Target> target_for(std::string_view key, std::string_view value)
{
  if (key.starts_with("prices.")) {
    const auto rest = key.substr(7);
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) {
      return fail(Errc::usage, "config key `" + std::string(key) + "`: give prices.<provider>.<card>, e.g. prices.gpucloud.rtx-pro-6000");
    }
    auto p = find_provider(rest.substr(0, dot));
    if (!p) {
      return fail(Errc::usage, "config " + std::string(key) + ": " + p.error().message);
    }
    if (!parse_double(value)) {
      return fail(Errc::usage, "config " + std::string(key) + ": `" + std::string(value.substr(0, 40)) +
                                   "` is not a number; give USD per hour for the whole server, e.g. 1.6");
    }
    return Target{{"prices", p->name}, std::string(rest.substr(dot + 1)), std::string(trim(value))};
  }
  const ConfigKeyInfo* info = nullptr;
  for (const auto& k : config_keys()) {
    if (k.name == key && k.name != "prices") {
      info = &k;
    }
  }
  if (info == nullptr) {
    std::string known;
    for (const auto& k : config_keys()) {
      known += (known.empty() ? "" : ", ") + std::string(k.name == "prices" ? "prices.<provider>.<card>" : k.name);
    }
    return fail(Errc::usage, "config key `" + std::string(key.substr(0, 40)) + "`: unknown; known keys: " + known);
  }
  if (info->type == ConfigType::boolean) {
    const std::string b = to_lower(trim(value));
    if (b != "true" && b != "false") {
      return fail(Errc::usage, "config " + std::string(key) + ": `" + std::string(value.substr(0, 40)) + "` is not true or false");
    }
    return Target{{}, std::string(key), b};
  }
  if (info->type == ConfigType::number) {
    if (!parse_decimal(value)) {
      return fail(Errc::usage, "config " + std::string(key) + ": `" + std::string(value.substr(0, 40)) + "` is not a number");
    }
    return Target{{}, std::string(key), std::string(value)};
  }
  return Target{{}, std::string(key), toml_string(value)};
}

// The line index of the entry for `t` in the parsed document, or -1.
int entry_line(const TomlDocument& doc, const Target& t)
{
  for (const auto& e : doc.entries) {
    if (e.section == t.section && (e.key == t.key || (!t.section.empty() && normalize_key(e.key) == normalize_key(t.key)))) {
      return e.line - 1;
    }
  }
  return -1;
}

// Index of the line after which a new entry of `section` goes; -1: before everything.
int insertion_line(const TomlDocument& doc, const std::vector<std::string>& section, const std::vector<std::string>& lines,
                   bool& need_header)
{
  need_header = false;
  const std::size_t line_count = lines.size();
  int last = -1;
  for (const auto& e : doc.entries) {
    if (e.section == section) {
      last = std::max(last, e.line - 1);
    }
  }
  if (last >= 0) {
    return last;
  }
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    if (doc.sections[i] == section) {
      return doc.section_lines[i] - 1;  // right under its header
    }
  }
  if (section.empty()) {
    // The root table ends where the first section starts (and the comments above its header).
    if (doc.section_lines.empty()) {
      return static_cast<int>(line_count) - 1;
    }
    int header = doc.section_lines.front() - 1;
    while (header > 0 && (trim(lines[static_cast<std::size_t>(header - 1)]).empty() ||
                          trim(lines[static_cast<std::size_t>(header - 1)]).starts_with('#'))) {
      --header;
    }
    return header - 1;
  }
  need_header = true;
  return static_cast<int>(line_count) - 1;
}

}  // namespace

std::string config_template()
{
  std::string out =
      "# gpurent configuration (TOML), written by `gpurent config init`.\n"
      "# Edit it here or with `gpurent config set KEY VALUE`; `gpurent config show` prints every\n"
      "# value and where it comes from. Precedence: built-in default < this file < environment < flag.\n"
      "# Unknown keys are an error. A file that holds a secret must be mode 0600.\n";
  for (const auto& k : config_keys()) {
    if (k.name == "prices") {
      continue;
    }
    out += "\n# " + std::string(k.description) + (k.secret ? " (a secret)" : "") + "\n";
    std::string env = k.env.empty() ? "" : "env " + std::string(k.env);
    if (!k.provider_env.empty()) {
      env += " or " + std::string(k.provider_env);
    }
    if (!env.empty()) {
      out += "# (" + env + ")\n";
    }
    out += "# " + std::string(k.name) + " = " + example_value(k) + "\n";
  }
  out += "\n# What you pay, USD per hour for the whole server: \"<card>\" or \"<card>x<gpus>\" per provider.\n"
         "# `gpurent config set prices.<provider>.<card> USD` adds one.\n"
         "# [prices.gpucloud]\n"
         "# \"rtx-pro-6000\" = 1.6\n"
         "# \"rtx-pro-6000x8\" = 12.5\n";
  return out;
}

bool config_key_is_secret(std::string_view key)
{
  for (const auto& k : config_keys()) {
    if (k.name == key) {
      return k.secret;
    }
  }
  return false;
}

Result<std::string> config_set_text(std::string_view file_text, std::string_view key, std::string_view value)
{
  auto doc = parse_toml(file_text);
  if (!doc) {
    return fail(Errc::invalid_input, "the config file: " + doc.error().message + "; fix that line first (nothing was changed)");
  }
  TRY_ASSIGN(const Target t, target_for(key, value));
  std::vector<std::string> lines = lines_of(file_text);
  const std::string entry = toml_key(t.key) + " = " + t.rendered;

  if (const int at = entry_line(*doc, t); at >= 0) {
    std::string& line = lines[static_cast<std::size_t>(at)];
    const auto comment = comment_start(line);
    const std::size_t indent = line.find_first_not_of(" \t");
    line = line.substr(0, indent == std::string::npos ? 0 : indent) + entry +
           (comment == std::string::npos ? "" : "   " + line.substr(comment));
  } else {
    // A commented-out template line of the root table ("# budget_usd = 100") becomes the entry.
    const std::size_t root_end = doc->section_lines.empty() ? lines.size() : static_cast<std::size_t>(doc->section_lines.front() - 1);
    bool replaced = false;
    for (std::size_t i = 0; t.section.empty() && i < root_end && !replaced; ++i) {
      if (is_commented_key_line(lines[i], t.key)) {
        lines[i] = entry;
        replaced = true;
      }
    }
    if (!replaced) {
      bool need_header = false;
      const int after = insertion_line(*doc, t.section, lines, need_header);
      std::vector<std::string> added;
      if (need_header) {
        if (!lines.empty() && !trim(lines.back()).empty()) {
          added.emplace_back();
        }
        added.push_back("[" + toml_section_name(t.section) + "]");
      }
      added.push_back(entry);
      lines.insert(lines.begin() + (after + 1), added.begin(), added.end());
    }
  }
  std::string out = text_of(lines);
  auto check = config_from(out, "config.toml", {});
  if (!check) {
    std::string why = check.error().message;
    if (why.starts_with("config.toml:")) {
      why = why.substr(why.find(": ") + 2);  // the line number is ours, not the user's
    }
    return fail(Errc::usage, "config set " + std::string(key) + ": " + why);
  }
  return out;
}

}  // namespace gpurent

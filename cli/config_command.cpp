// SPDX-License-Identifier: MIT
// `gpurent config show|path|init|set|get`: the configuration, where each value comes from, and
// editing the file (cli/config_edit.cpp) without losing its comments.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>


#include <filesystem>
#include <ostream>

#include "providers/atomic_file.hpp"
#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/config_edit.hpp"
#include "cli/secret_prompt.hpp"
#include "cli/services.hpp"
#include "common/text.hpp"
#include "providers/card.hpp"

namespace gpurent {
namespace {

nlohmann::json key_json(const Config& c, const ConfigKeyInfo& k)
{
  nlohmann::json j;
  j["key"] = k.name;
  const auto v = c.text(k.name);
  if (!v.has_value()) {
    j["value"] = nullptr;
  } else if (k.secret) {
    j["value"] = "***set***";
  } else if (k.name == "budget_usd") {
    j["value"] = to_units(*c.budget, 2);
  } else if (k.name == "offers_max_age_hours") {
    j["value"] = c.offers_max_age_hours;
  } else if (k.name == "catalog_max_age_hours") {
    j["value"] = c.catalog_max_age_hours;
  } else if (k.type == ConfigType::boolean) {
    j["value"] = *v == "true";
  } else {
    j["value"] = *v;
  }
  j["origin"] = origin_name(c.origin(k.name));
  const auto src = c.sources.find(k.name);
  j["source"] = src == c.sources.end() ? nlohmann::json(nullptr) : nlohmann::json(src->second);
  j["env"] = k.env.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.env);
  j["secret"] = k.secret;
  j["description"] = k.description;
  return j;
}

void show_json(Services& s, const Config& c)
{
  nlohmann::json j;
  j["path"] = c.path;
  j["file_found"] = c.file_found;
  j["keys"] = nlohmann::json::array();
  for (const auto& k : config_keys()) {
    if (k.name != "prices") {
      j["keys"].push_back(key_json(c, k));
    }
  }
  j["prices"] = nlohmann::json::array();
  for (const auto& o : c.price_overrides) {
    j["prices"].push_back({{"provider", o.provider},
                           {"card", o.card},
                           {"gpus", o.gpus},
                           {"price_per_hour", to_units(o.price_per_hour, 6)},
                           {"origin", "file"}});
  }
  s.out << j.dump(2) << '\n';
}

void show_text(Services& s, const Config& c)
{
  s.out << "config file: " << (c.path.empty() ? "(none: HOME and XDG_CONFIG_HOME are unset)" : c.path)
        << (c.file_found ? "" : " (not found; built-in defaults)") << '\n';
  s.out << fmt::format("{:<21} {:<36} {}\n", "KEY", "VALUE", "FROM");
  for (const auto& k : config_keys()) {
    if (k.name == "prices") {
      continue;
    }
    std::string from(origin_name(c.origin(k.name)));
    if (const auto src = c.sources.find(k.name); src != c.sources.end() && c.origin(k.name) == ConfigOrigin::env) {
      from += " " + src->second;
    }
    std::string value = config_display_value(c, k);
    if (value.size() > 36) {
      value = "..." + value.substr(value.size() - 33);
    }
    s.out << fmt::format("{:<21} {:<36} {}\n", k.name, value, from);
  }
  if (c.price_overrides.empty()) {
    s.out << "prices: none set (add [prices.<provider>] \"<card>\" = USD per hour)\n";
    return;
  }
  s.out << "prices (from the config file, USD per hour, whole server):\n";
  for (const auto& o : c.price_overrides) {
    s.out << fmt::format("  {:<9} {:<14} x{:<2} {}/h\n", o.provider, o.card, o.gpus, format_usd(o.price_per_hour));
  }
}

// Writes `text` to `path` atomically (a temporary file renamed over it). The mode stays what it
// was, narrowed to 0600 when the file holds a secret; a new file is 0600.
Result<void> write_config(Services& s, const std::string& path, const std::string& text)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::vector<std::string> problems;
  const Config probe = config_from_lenient(text, path, {}, problems);
  bool secret = false;
  for (const auto& k : config_keys()) {
    secret = secret || (k.secret && probe.origin(k.name) == ConfigOrigin::file);
  }
  unsigned mode = 0600;
  const auto st = fs::status(path, ec);
  if (!ec && fs::exists(st)) {
    mode = static_cast<unsigned>(st.permissions()) & 0777U;
    if (secret && (mode & 0177U) != 0) {
      mode &= 0600U;
      report_warning(s, "the config file now holds a secret: its mode becomes 0600 (was readable by others)");
    }
  }
  return write_file_atomically(path, text, mode);
}

Result<std::string> writable_path(const Services& s)
{
  const std::string path = config_path(s.env);
  if (path.empty()) {
    return fail(Errc::usage, "no config file location: HOME and XDG_CONFIG_HOME are unset; set GPURENT_CONFIG to a file path");
  }
  return path;
}

Result<void> run_init(Services& s, bool force)
{
  TRY_ASSIGN(const std::string path, writable_path(s));
  TRY_ASSIGN(const auto existing, read_config_file(path));
  if (existing && !force) {
    return fail(Errc::refused, "config init: " + path + " exists; change it with `gpurent config set KEY VALUE`, "
                               "or replace it with `gpurent config init --force` (the old file is kept as .bak)");
  }
  if (existing) {
    std::error_code ec;
    std::filesystem::copy_file(path, path + ".bak", std::filesystem::copy_options::overwrite_existing, ec);
    if (ec) {
      return fail(Errc::internal, "config init: cannot keep the old file as " + path + ".bak: " + ec.message() +
                                      "; nothing was changed");
    }
    std::filesystem::permissions(path + ".bak", std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  }
  TRY(write_config(s, path, config_template()));
  if (s.global.json) {
    s.out << nlohmann::json{{"path", path}, {"backup", existing ? nlohmann::json(path + ".bak") : nlohmann::json(nullptr)}}.dump(2)
          << '\n';
  } else {
    s.out << "wrote " << path << (existing ? " (the old file is " + path + ".bak)" : "") << '\n';
    s.err << "every key is commented out; set one with `gpurent config set KEY VALUE`, e.g. "
             "`gpurent config set default_provider runpod`\n";
  }
  return {};
}

// The value of `config set KEY [VALUE]`: "-" reads it from standard input; none asks for it on
// the terminal with echo off (never on the command line, where history and `ps` keep it).
Result<std::string> set_value(Services& s, const std::string& key, const std::optional<std::string>& given)
{
  const std::string what = "config set " + key;
  if (given && *given != "-") {
    if (config_key_is_secret(key)) {
      report_warning(s, "a secret on the command line stays in the shell's history and shows in `ps`; next time use "
                        "`gpurent config set " + key + " -` (standard input) or leave the value out to be asked");
    }
    return *given;
  }
  if (given) {
    return read_value_line(s.in, what + " -");
  }
  if (!s.stdin_tty) {
    return fail(Errc::usage, what + ": no VALUE given and standard input is not a terminal to ask on; give the value on "
                                    "standard input with `-`, e.g. `gpurent config set " + key + " - < FILE`");
  }
  return read_hidden_line(s.in, s.err, key + " (typing is not shown): ", what);
}

Result<void> run_set(Services& s, const std::string& key, const std::optional<std::string>& given)
{
  TRY_ASSIGN(const std::string value, set_value(s, key, given));
  TRY_ASSIGN(const std::string path, writable_path(s));
  TRY_ASSIGN(const auto existing, read_config_file(path));
  TRY_ASSIGN(const std::string text, config_set_text(existing.value_or(""), key, value));
  TRY(write_config(s, path, text));
  const bool secret = config_key_is_secret(key);
  const std::string shown = secret ? "***set***" : value;
  for (const auto& k : config_keys()) {
    for (const std::string_view var : {k.env, k.provider_env}) {
      if (k.name == key && !var.empty() && s.getenv(std::string(var))) {
        report_warning(s, std::string(var) + " is set in the environment and wins over the file");
      }
    }
  }
  if (s.global.json) {
    s.out << nlohmann::json{{"path", path}, {"key", key}, {"value", shown}}.dump(2) << '\n';
  } else {
    s.out << key << " = " << shown << "   (" << path << ")\n";
  }
  return {};
}

Result<void> run_get(Services& s, const std::string& key)
{
  TRY_ASSIGN(const Config c, load_config(s));
  std::optional<std::string> value;
  nlohmann::json json_value = nullptr;
  std::string origin = "default";
  if (key.starts_with("prices.")) {
    const auto parts = split(key, '.');
    if (parts.size() < 3) {
      return fail(Errc::usage, "config get " + key + ": give prices.<provider>.<card>, e.g. prices.gpucloud.rtx-pro-6000");
    }
    const std::string card_text = key.substr(parts[0].size() + parts[1].size() + 2);
    for (const auto& o : c.price_overrides) {
      if (o.provider == parts[1] && (normalize_key(o.card) == normalize_key(card_text) ||
                                     normalize_key(o.card + "x" + std::to_string(o.gpus)) == normalize_key(card_text))) {
        value = format_usd(o.price_per_hour).substr(1);
        json_value = to_units(o.price_per_hour, 6);
        origin = "file";
      }
    }
  } else {
    const ConfigKeyInfo* info = nullptr;
    for (const auto& k : config_keys()) {
      info = k.name == key && k.name != "prices" ? &k : info;
    }
    if (info == nullptr) {
      return fail(Errc::usage, "config get " + key.substr(0, 40) + ": unknown key; `gpurent config show` lists the keys");
    }
    value = c.text(key);
    if (value && info->secret) {
      value = "***set***";
    }
    json_value = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    origin = std::string(origin_name(c.origin(key)));
  }
  if (!value) {
    return fail(Errc::not_found, "config get " + key + ": not set; set it with `gpurent config set " + key + " VALUE`");
  }
  if (s.global.json) {
    s.out << nlohmann::json{{"key", key}, {"value", json_value}, {"origin", origin}}.dump(2) << '\n';
  } else {
    s.out << *value << '\n';
  }
  return {};
}

// `config show`: with a broken file, everything that can be read, then the bad lines.
void run_show(Services& s)
{
  auto c = load_config(s);
  if (!c && c.error().code == Errc::invalid_input) {
    const std::string path = config_path(s.env);
    auto file = read_config_file(path);
    if (file && *file) {
      std::vector<std::string> problems;
      Config partial = config_from_lenient(**file, path, s.env, problems);
      partial.path = path;
      partial.file_found = true;
      if (s.global.json) {
        show_json(s, partial);
      } else {
        show_text(s, partial);
      }
      for (std::size_t i = 1; i < problems.size(); ++i) {
        report_warning(s, problems[i]);
      }
      const std::string first = problems.empty() ? c.error().message : problems.front();
      s.exit_code = report_error(s, Error{Errc::invalid_input, first + "; fix that line: the values above leave it out"});
      return;
    }
  }
  if (!c) {
    s.exit_code = report_error(s, c.error());
    return;
  }
  if (s.global.json) {
    show_json(s, *c);
  } else {
    show_text(s, *c);
  }
}

}  // namespace

void add_config_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("config", "show and edit the configuration: where each value comes from");
  sub->require_subcommand(1);
  auto* show = sub->add_subcommand("show", "print every key, its value (secrets hidden) and its origin");
  show->callback([&s] { run_show(s); });
  auto* path = sub->add_subcommand("path", "print the config file's path");
  path->callback([&s] {
    const std::string p = config_path(s.env);
    if (s.global.json) {
      s.out << nlohmann::json{{"path", p}}.dump() << '\n';
    } else {
      s.out << p << '\n';
    }
  });
  auto force = std::make_shared<bool>(false);
  auto* init = sub->add_subcommand("init", "write a commented config file with every key (mode 0600)");
  init->add_flag("--force", *force, "replace an existing file (kept as config.toml.bak)");
  init->callback([&s, force] {
    if (auto r = run_init(s, *force); !r) {
      s.exit_code = report_error(s, r.error());
    }
  });
  auto kv = std::make_shared<std::pair<std::string, std::string>>();
  auto* set = sub->add_subcommand("set", "set KEY to VALUE in the config file, keeping its comments");
  set->add_option("key", kv->first, "a key of `gpurent config show`, or prices.<provider>.<card>")->required();
  auto* value = set->add_option("value", kv->second,
                  "the value (USD, hours, a path, a URL, a provider name, true/false); `-` reads it from standard input, "
                  "none asks on the terminal without echo (for secrets)");
  set->callback([&s, kv, value] {
    const auto given = value->count() > 0 ? std::optional<std::string>(kv->second) : std::nullopt;
    if (auto r = run_set(s, kv->first, given); !r) {
      s.exit_code = report_error(s, r.error());
    }
  });
  auto key = std::make_shared<std::string>();
  auto* get = sub->add_subcommand("get", "print the value of KEY as gpurent uses it (secrets hidden)");
  get->add_option("key", *key, "a key of `gpurent config show`, or prices.<provider>.<card>")->required();
  get->callback([&s, key] {
    if (auto r = run_get(s, *key); !r) {
      s.exit_code = report_error(s, r.error());
    }
  });
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
// `gpurent config show [--json]` and `gpurent config path`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>

#include "cli/commands.hpp"
#include "cli/config.hpp"
#include "cli/services.hpp"
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

}  // namespace

void add_config_command(CLI::App& app, Services& s)
{
  auto* sub = app.add_subcommand("config", "show the configuration and where each value comes from");
  sub->require_subcommand(1);
  auto* show = sub->add_subcommand("show", "print every key, its value (secrets hidden) and its origin");
  show->callback([&s] {
    auto c = load_config(s);
    if (!c) {
      s.exit_code = report_error(s, c.error());
      return;
    }
    if (s.global.json) {
      show_json(s, *c);
    } else {
      show_text(s, *c);
    }
  });
  auto* path = sub->add_subcommand("path", "print the config file's path");
  path->callback([&s] {
    const std::string p = config_path(s.env);
    if (s.global.json) {
      s.out << nlohmann::json{{"path", p}}.dump() << '\n';
    } else {
      s.out << p << '\n';
    }
  });
}

}  // namespace gpurent

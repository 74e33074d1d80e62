// SPDX-License-Identifier: MIT
// Reading the configuration (cli/config.hpp): the TOML file, strictly or leniently for `config show`,
// and the environment, over the defaults; load_config refuses a file that holds a secret readable by others.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/config.hpp"
#include "cli/config_detail.hpp"
#include "cli/services.hpp"
#include "common/text.hpp"
#include "common/toml_reader.hpp"
#include "providers/card_data.hpp"
#include "providers/offers.hpp"
#include "sizing/model_catalog.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpurent {
namespace {

using config_detail::assign;
using config_detail::find_key;
using config_detail::known_keys;

// The model a [models.<name>] table names. Model names hold dots ("llama-3.1-8b"), which TOML
// reads as nested tables unless quoted; a model table has none of its own, so the parts after
// `models` are the name: [models.llama-3.1-8b] is the same as [models."llama-3.1-8b"].
std::string model_table_name(const std::vector<std::string>& section)
{
  std::string name;
  for (std::size_t i = 1; i < section.size(); ++i) {
    name += (i > 1 ? "." : "") + section[i];
  }
  return name;
}

// A [models.<name>] value as data/models.json has it: whole numbers as integers (the model reader
// refuses fractions and says so), the list keys from comma-separated text.
nlohmann::json model_value(const TomlEntry& e)
{
  if (e.value.kind == TomlValue::Kind::boolean) {
    return e.value.boolean;
  }
  if (e.value.kind == TomlValue::Kind::number) {
    const double n = e.value.number;
    if (n >= 0 && n < 9007199254740992.0 && n == static_cast<double>(static_cast<std::uint64_t>(n))) {
      return static_cast<std::uint64_t>(n);
    }
    return n;
  }
  if (e.key == "hf_ids" || e.key == "aliases" || e.key == "quant_skip") {
    nlohmann::json list = nlohmann::json::array();
    for (const auto a : split(e.value.text, ',')) {
      if (!trim(a).empty()) {
        list.push_back(std::string(trim(a)));
      }
    }
    return list;
  }
  return e.value.text;
}

// Applies the file's entries. With `problems`, a bad section or entry is recorded there and
// skipped (config show shows what it can); without, the first one is the error.
Result<void> apply_file(Config& c, const TomlDocument& doc, std::string_view label,
                        const std::map<std::string, std::string>& env, std::vector<std::string>* problems = nullptr)
{
  std::vector<std::vector<std::string>> bad_sections;
  const auto problem = [&](std::string message) -> Result<void> {
    if (problems == nullptr) {
      return fail(Errc::invalid_input, std::move(message));
    }
    problems->push_back(std::move(message));
    return {};
  };
  // [cards.<id>] (and its [cards.<id>.tflops] / [cards.<id>.link] tables): data/cards.json's keys.
  std::map<std::string, nlohmann::json> cards;
  std::map<std::string, int> card_lines;
  // [models.<name>]: data/models.json's keys (lists as comma-separated text).
  std::map<std::string, nlohmann::json> models;
  std::map<std::string, int> model_lines;
  for (std::size_t i = 0; i < doc.sections.size(); ++i) {
    const auto& sec = doc.sections[i];
    const bool prices = sec.size() == 2 && sec[0] == "prices";
    const bool prices_root = sec.size() == 1 && sec[0] == "prices";
    const bool card = !sec.empty() && sec[0] == "cards" &&
                      (sec.size() == 2 || (sec.size() == 3 && (sec[2] == "tflops" || sec[2] == "link")));
    const std::string at = std::string(label) + ":" + std::to_string(doc.section_lines[i]);
    if (card) {
      if (!card_lines.contains(sec[1])) {
        card_lines[sec[1]] = doc.section_lines[i];
        cards[sec[1]] = nlohmann::json::object();
      }
      continue;
    }
    if (sec.size() >= 2 && sec[0] == "models") {
      const std::string name = model_table_name(sec);
      if (!model_lines.contains(name)) {
        model_lines[name] = doc.section_lines[i];
        models[name] = nlohmann::json::object();
      }
      continue;
    }
    if (!prices && !prices_root) {
      bad_sections.push_back(sec);
      TRY(problem(at + ": unknown section [" + toml_section_name(sec) +
                  "]; the only sections are [prices.<provider>], [cards.<id>] (with [cards.<id>.tflops], "
                  "[cards.<id>.link]) and [models.<name>]"));
      continue;
    }
    if (prices) {
      auto p = find_provider(sec[1]);
      if (!p) {
        bad_sections.push_back(sec);
        TRY(problem(at + ": " + p.error().message));
      }
    }
  }
  for (const auto& e : doc.entries) {
    const std::string at = std::string(label) + ":" + std::to_string(e.line);
    if (std::find(bad_sections.begin(), bad_sections.end(), e.section) != bad_sections.end()) {
      continue;
    }
    if (e.section.size() >= 2 && e.section[0] == "models") {
      models[model_table_name(e.section)][e.key] = model_value(e);
      continue;
    }
    if (!e.section.empty() && e.section[0] == "cards") {
      auto& obj = cards[e.section[1]];
      auto& target = e.section.size() == 3 ? obj[e.section[2]] : obj;
      if (e.value.kind == TomlValue::Kind::boolean) {
        target[e.key] = e.value.boolean;  // link.nvlink_bridge; elsewhere the card's reader refuses it
      } else if (e.value.kind == TomlValue::Kind::number) {
        // compute_capability = 8.9 is the same as "8.9".
        target[e.key] = e.key == "compute_capability" ? nlohmann::json(fmt::format("{:.1f}", e.value.number))
                                                      : nlohmann::json(e.value.number);
      } else if (e.key == "aliases") {
        nlohmann::json list = nlohmann::json::array();
        for (const auto a : split(e.value.text, ',')) {
          if (!trim(a).empty()) {
            list.push_back(std::string(trim(a)));
          }
        }
        target[e.key] = list;
      } else {
        target[e.key] = e.value.text;
      }
      continue;
    }
    if (!e.section.empty()) {
      if (e.section.size() != 2) {
        TRY(problem(at + ": put prices under [prices.<provider>], e.g. [prices.gpucloud]"));
        continue;
      }
      if (e.value.kind != TomlValue::Kind::number) {
        TRY(problem(at + ": price `" + e.key + "` must be a number (USD per hour)"));
        continue;
      }
      auto o = make_price_override(e.section[1], e.key, e.value.number);
      if (!o) {
        TRY(problem(at + ": " + o.error().message));
        continue;
      }
      c.price_overrides.push_back(*o);
      c.origins["prices"] = ConfigOrigin::file;
      c.sources["prices"] = std::string(label);
      continue;
    }
    const auto* k = find_key(e.key);
    if (k == nullptr) {
      TRY(problem(at + ": unknown key `" + e.key.substr(0, 40) + "`; known keys: " + known_keys()));
      continue;
    }
    std::optional<double> number;
    std::string text;
    if (k->type == ConfigType::boolean && e.value.kind != TomlValue::Kind::boolean) {
      TRY(problem(at + ": `" + e.key + "` takes true or false (no quotes)"));
      continue;
    }
    if (e.value.kind == TomlValue::Kind::number) {
      number = e.value.number;
      text = "number";
    } else if (e.value.kind == TomlValue::Kind::boolean) {
      if (k->type != ConfigType::boolean) {
        TRY(problem(at + ": `" + e.key + "` does not take true/false"));
        continue;
      }
      text = e.value.boolean ? "true" : "false";
    } else {
      if (k->type == ConfigType::number) {
        TRY(problem(at + ": `" + e.key + "` must be a number, not a string"));
        continue;
      }
      text = e.value.text;
    }
    auto r = assign(c, *k, text, number, env);
    if (!r) {
      TRY(problem(at + ": " + r.error().message));
      continue;
    }
    c.origins[std::string(k->name)] = ConfigOrigin::file;
    c.sources[std::string(k->name)] = at;
  }
  for (const auto& [name, keys] : models) {
    const std::string at = std::string(label) + ":" + std::to_string(model_lines[name]);
    auto model = user_model(name, keys.dump());
    if (!model) {
      TRY(problem(at + ": [models." + name + "]: " + model.error().message));
      continue;
    }
    c.models.push_back(std::move(*model));
    c.origins["models"] = ConfigOrigin::file;
    c.sources["models"] = at;
  }
  for (const auto& [id, keys] : cards) {
    const std::string at = std::string(label) + ":" + std::to_string(card_lines[id]);
    auto card = user_card_from_json(id, keys.dump());
    if (!card) {
      TRY(problem(at + ": [cards." + id + "]: " + card.error().message));
      continue;
    }
    c.cards.push_back(std::move(*card));
    c.origins["cards"] = ConfigOrigin::file;
    c.sources["cards"] = at;
  }
  return {};
}

Result<void> apply_env(Config& c, const std::map<std::string, std::string>& env, std::vector<std::string>* problems = nullptr)
{
  for (const auto& k : config_keys()) {
    for (std::string_view var : {k.env, k.provider_env}) {
      if (var.empty()) {
        continue;
      }
      const auto it = env.find(std::string(var));
      if (it == env.end() || it->second.empty()) {
        continue;
      }
      const auto number = parse_double(it->second);
      auto r = assign(c, k, it->second, number, env);
      if (!r && problems != nullptr) {
        problems->push_back(std::string(var) + ": " + r.error().message);
        break;
      }
      if (!r) {
        return fail(Errc::invalid_input, std::string(var) + ": " + r.error().message);
      }
      c.origins[std::string(k.name)] = ConfigOrigin::env;
      c.sources[std::string(k.name)] = std::string(var);
      break;  // GPURENT_<KEY> wins over the provider's own variable
    }
  }
  return {};
}

}  // namespace

std::string config_path(const std::map<std::string, std::string>& env)
{
  const auto get = [&](const char* k) -> std::string {
    const auto it = env.find(k);
    return it == env.end() ? std::string() : it->second;
  };
  if (const auto p = get("GPURENT_CONFIG"); !p.empty()) {
    return p;
  }
  if (const auto x = get("XDG_CONFIG_HOME"); !x.empty()) {
    return x + "/gpurent/config.toml";
  }
  if (const auto h = get("HOME"); !h.empty()) {
    return h + "/.config/gpurent/config.toml";
  }
  return "";
}

Result<Config> config_from(std::string_view file_text, std::string_view file_label,
                           const std::map<std::string, std::string>& env)
{
  Config c;
  config_detail::apply_defaults(c);
  if (!file_text.empty()) {
    auto doc = parse_toml(file_text);
    if (!doc) {
      return fail(Errc::invalid_input, "config " + std::string(file_label) + ": " + doc.error().message +
                                           "; fix that line (`gpurent config show` shows what the rest sets)");
    }
    TRY(apply_file(c, *doc, file_label, env));
  }
  TRY(apply_env(c, env));
  return c;
}

Config config_from_lenient(std::string_view file_text, std::string_view file_label,
                           const std::map<std::string, std::string>& env, std::vector<std::string>& problems)
{
  Config c;
  config_detail::apply_defaults(c);
  std::vector<std::string> lines;
  for (const auto l : split(file_text, '\n')) {
    lines.emplace_back(l);
  }
  for (std::size_t round = 0; round <= lines.size() && !file_text.empty(); ++round) {
    std::string text;
    for (const auto& l : lines) {
      text += l + "\n";
    }
    auto doc = parse_toml(text);
    if (doc) {
      (void)apply_file(c, *doc, file_label, env, &problems);
      break;
    }
    // "line N: why": leave that line out and read the rest.
    const std::string& m = doc.error().message;
    const auto n = m.starts_with("line ") ? parse_u64(m.substr(5, m.find(':') - 5)) : std::nullopt;
    if (!n || *n == 0 || *n > lines.size()) {
      problems.push_back(std::string(file_label) + ": " + m);
      break;
    }
    problems.push_back(std::string(file_label) + ":" + std::to_string(*n) + m.substr(m.find(':')));
    lines[*n - 1].clear();
  }
  (void)apply_env(c, env, &problems);
  return c;
}

Result<std::optional<std::string>> read_config_file(const std::string& path)
{
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (path.empty() || ec || !fs::exists(st)) {
    return std::optional<std::string>();
  }
  if (!fs::is_regular_file(st)) {
    return fail(Errc::invalid_input, "config " + path + ": not a regular file; point GPURENT_CONFIG at a TOML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return fail(Errc::invalid_input, "config " + path + ": cannot be read; check its permissions");
  }
  std::string text(k_toml_max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return std::optional<std::string>(std::move(text));
}

Result<ConfigCatalogues> config_catalogues(const Services& s)
{
  const std::string path = config_path(s.env);
  const auto file = read_config_file(path);
  if (!file || !*file) {
    return ConfigCatalogues{};
  }
  std::vector<std::string> problems;  // other problems: the command's own load_config reports them
  Config c = config_from_lenient(**file, path, s.env, problems);
  for (const auto& p : problems) {
    if (p.find("[cards.") != std::string::npos || p.find("[models.") != std::string::npos) {
      return fail(Errc::invalid_input, "config " + p);
    }
  }
  return ConfigCatalogues{std::move(c.cards), std::move(c.models)};
}

Result<Config> load_config(const Services& s)
{
  namespace fs = std::filesystem;
  const std::string path = config_path(s.env);
  const bool explicit_path = s.getenv("GPURENT_CONFIG").has_value();
  TRY_ASSIGN(const auto file, read_config_file(path));
  if (!file && explicit_path) {
    return fail(Errc::not_found, "config " + path + ": GPURENT_CONFIG names a file that does not exist; create it "
                                                    "(`gpurent config init`) or unset GPURENT_CONFIG");
  }
  const std::string text = file.value_or("");
  if (file) {
    TRY_ASSIGN(Config probe, config_from(text, path, {}));
    std::error_code ec;
    const auto perms = static_cast<unsigned>(fs::status(path, ec).permissions()) & 0777U;
    bool secret = false;
    for (const auto& k : config_keys()) {
      secret = secret || (k.secret && probe.origin(k.name) == ConfigOrigin::file);
    }
    if (secret && (perms & 0177U) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", perms);
      return fail(Errc::refused, "config " + path + ": holds a secret but its mode is " + mode +
                                     " (readable by others); run `chmod 600 " + path + "`");
    }
  }
  TRY_ASSIGN(Config c, config_from(text, path, s.env));
  c.path = path;
  c.file_found = file.has_value();
  return c;
}

}  // namespace gpurent

// SPDX-License-Identifier: MIT
#pragma once
// One table of config keys. Precedence: built-in default < config file < environment < flag.
// File: $GPURENT_CONFIG, else $XDG_CONFIG_HOME/gpurent/config.toml, else ~/.config/gpurent/config.toml.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "common/units.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "sizing/model.hpp"

namespace gpurent {
struct Services;

enum class ConfigOrigin { default_value, file, env, flag };
[[nodiscard]] std::string_view origin_name(ConfigOrigin o) noexcept;  // "default", "file", "env", "flag"

enum class ConfigType { text, number, path, url, provider, boolean };

struct ConfigKeyInfo {
  std::string_view name;          // key in the file, e.g. "budget_usd"
  ConfigType type;
  std::string_view default_text;  // "" = unset by default
  std::string_view env;           // GPURENT_<NAME>
  std::string_view provider_env;  // the provider's own variable (LAMBDA_API_KEY…), "" if none
  std::string_view description;
  bool secret;                    // never printed; the file must be mode 0600
};

[[nodiscard]] std::span<const ConfigKeyInfo> config_keys() noexcept;

struct Config {
  std::optional<MicroUsd> budget;  // budget_usd: spend guard for `up`
  std::optional<std::string> default_provider;
  double offers_max_age_hours = 24;
  std::optional<std::string> backup_dir;
  std::optional<std::string> ssh_identity;
  std::optional<std::string> known_hosts;
  std::optional<std::string> lambda_api_key;
  std::optional<std::string> runpod_api_key;
  std::optional<std::string> vast_api_key;
  std::optional<std::string> hf_token;
  std::optional<std::string> hf_endpoint;
  std::optional<std::string> lambda_api_url;
  std::optional<std::string> runpod_api_url;
  std::optional<std::string> vast_api_url;
  // The price catalogue (docs/market.md): where it is fetched, which clouds, when it is refreshed.
  std::optional<std::string> catalog_url;
  std::optional<std::string> catalog_fallback_url;
  std::optional<std::string> catalog_clouds;  // "aws,gcp" (validated); unset: every catalogue cloud
  double catalog_max_age_hours = 24;
  bool catalog_auto_refresh = true;  // false: plan, up and offers never fetch it themselves (offers --refresh does)
  bool allow_insecure_http = false;  // credentials may go over plain HTTP to another machine (with a warning)
  std::vector<Offer> price_overrides;  // [prices.<provider>], price_origin "config"
  std::vector<Card> cards;             // [cards.<id>]: cards added or overridden (origin "config")
  std::vector<ModelArch> models;      // [models.<name>]: models added or overridden (data/models.json's keys)

  std::string path;        // the config file looked at ("" when no HOME/XDG is known)
  bool file_found = false;
  std::map<std::string, ConfigOrigin, std::less<>> origins;  // key -> where its value came from
  std::map<std::string, std::string, std::less<>> sources;   // key -> "config.toml:3", "LAMBDA_API_KEY", "--flag"

  [[nodiscard]] ConfigOrigin origin(std::string_view key) const;
  // The value as text for display ("" when unset). Secrets come back as stored: callers that print
  // must use config_display_value().
  [[nodiscard]] std::optional<std::string> text(std::string_view key) const;
};

// The path config_show reports and load_config reads.
[[nodiscard]] std::string config_path(const std::map<std::string, std::string>& env);

// Reads and validates the whole configuration (file + environment). Errors name the file, line
// and key; unknown keys and sections are errors; a file holding a secret with a mode wider than
// 0600 is refused (Errc::refused).
[[nodiscard]] Result<Config> load_config(const Services& s);
// The config file's [cards.<id>] and [models.<name>] tables (other problems of the file are left to
// the command's own load_config). The CLI installs them before a command parses its arguments, so
// --card finds a user's card and `plan <name>` a user's model; a broken table is an error naming
// the line and key.
struct ConfigCatalogues {
  std::vector<Card> cards;
  std::vector<ModelArch> models;
};
[[nodiscard]] Result<ConfigCatalogues> config_catalogues(const Services& s);
// The same from given parts (tests and the fuzz target use it; no I/O).
[[nodiscard]] Result<Config> config_from(std::string_view file_text, std::string_view file_label,
                                         const std::map<std::string, std::string>& env);

// What can be read when the file is broken (`config show`): bad lines and entries are left out
// and described in `problems` ("config.toml:3: …"), the rest applies.
[[nodiscard]] Config config_from_lenient(std::string_view file_text, std::string_view file_label,
                                         const std::map<std::string, std::string>& env, std::vector<std::string>& problems);

// The file's text (at most k_toml_max_bytes + 1 bytes) and whether it exists; not validated.
[[nodiscard]] Result<std::optional<std::string>> read_config_file(const std::string& path);

// A command-line flag for `key` (highest precedence).
[[nodiscard]] Result<void> set_config_flag(Config& c, std::string_view key, std::string_view value);

// What `config show` prints for a key: "***set***" for a set secret, "(unset)" when unset.
[[nodiscard]] std::string config_display_value(const Config& c, const ConfigKeyInfo& key);

}  // namespace gpurent

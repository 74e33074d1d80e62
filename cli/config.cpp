// SPDX-License-Identifier: MIT
#include "cli/config.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "cli/config_detail.hpp"
#include "common/rounding.hpp"
#include "common/text.hpp"
#include "providers/market/catalog_fetch.hpp"

namespace gpurent {
namespace {

constexpr std::array<ConfigKeyInfo, 21> k_keys{{
    {"budget_usd", ConfigType::number, "", "GPURENT_BUDGET_USD", "",
     "spend guard: `up` refuses when accrued plus projected spend would pass it (USD)", false},
    {"default_provider", ConfigType::provider, "", "GPURENT_DEFAULT_PROVIDER", "",
     "provider used when --provider is not given", false},
    {"offers_max_age_hours", ConfigType::number, "24", "GPURENT_OFFERS_MAX_AGE_HOURS", "",
     "fetched offers older than this fall back to built-in prices", false},
    {"catalog_url", ConfigType::url, "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs",
     "GPURENT_CATALOG_URL", "", "the price catalogue's `catalogs` folder (SkyPilot's; files <url>/v8/<cloud>/vms.csv)", false},
    {"catalog_fallback_url", ConfigType::url, "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs",
     "GPURENT_CATALOG_FALLBACK_URL", "", "where the catalogue is fetched when catalog_url answers HTTP 429", false},
    {"catalog_clouds", ConfigType::text, "", "GPURENT_CATALOG_CLOUDS", "",
     "the clouds whose catalogue files are fetched, comma-separated (default: every cloud with GPU rows)", false},
    {"catalog_max_age_hours", ConfigType::number, "24", "GPURENT_CATALOG_MAX_AGE_HOURS", "",
     "plan, up and offers refresh a catalogue cache older than this (not with --offline)", false},
    {"catalog_auto_refresh", ConfigType::boolean, "true", "GPURENT_CATALOG_AUTO_REFRESH", "",
     "plan, up and offers fetch the price catalogue themselves when there is no cached copy or it is older than "
     "catalog_max_age_hours; false: only `offers --refresh` fetches it", false},
    {"backup_dir", ConfigType::path, "", "GPURENT_BACKUP_DIR", "",
     "where `backup`, `down --destroy` and `run --then backup` write, a directory per server (default ~/.local/share/gpurent/backups/NAME)", false},
    {"ssh_identity", ConfigType::path, "", "GPURENT_SSH_IDENTITY", "",
     "SSH private key (default: the agent, then ~/.ssh/id_ed25519, ~/.ssh/id_rsa)", false},
    {"known_hosts", ConfigType::path, "", "GPURENT_KNOWN_HOSTS", "",
     "known_hosts file (default: gpurent's own in the state dir)", false},
    {"lambda_api_key", ConfigType::text, "", "GPURENT_LAMBDA_API_KEY", "LAMBDA_API_KEY", "Lambda Cloud API key", true},
    {"runpod_api_key", ConfigType::text, "", "GPURENT_RUNPOD_API_KEY", "RUNPOD_API_KEY", "RunPod API key", true},
    {"vast_api_key", ConfigType::text, "", "GPURENT_VAST_API_KEY", "VAST_API_KEY", "Vast.ai API key", true},
    {"hf_token", ConfigType::text, "", "GPURENT_HF_TOKEN", "HF_TOKEN", "Hugging Face token (gated models)", true},
    {"hf_endpoint", ConfigType::url, "https://huggingface.co", "GPURENT_HF_ENDPOINT", "HF_ENDPOINT",
     "Hugging Face Hub base URL", false},
    {"lambda_api_url", ConfigType::url, "https://cloud.lambda.ai", "GPURENT_LAMBDA_API_URL", "",
     "Lambda Cloud API base URL", false},
    {"runpod_api_url", ConfigType::url, "https://rest.runpod.io/v1", "GPURENT_RUNPOD_API_URL", "",
     "RunPod REST API base URL", false},
    {"vast_api_url", ConfigType::url, "https://console.vast.ai/api/v0", "GPURENT_VAST_API_URL", "",
     "Vast.ai API base URL", false},
    {"allow_insecure_http", ConfigType::boolean, "false", "GPURENT_ALLOW_INSECURE_HTTP", "",
     "send API keys and the Hub token over plain http:// to another machine too (a warning each time; loopback is always allowed)", false},
    {"prices", ConfigType::number, "", "", "",
     "[prices.<provider>] \"<card>\" or \"<card>x<gpus>\" = USD per hour for the whole server", false},
}};

template <class C>
auto string_field(C& c, std::string_view key) -> decltype(&c.default_provider)
{
  if (key == "default_provider") { return &c.default_provider; }
  if (key == "backup_dir") { return &c.backup_dir; }
  if (key == "ssh_identity") { return &c.ssh_identity; }
  if (key == "known_hosts") { return &c.known_hosts; }
  if (key == "lambda_api_key") { return &c.lambda_api_key; }
  if (key == "runpod_api_key") { return &c.runpod_api_key; }
  if (key == "vast_api_key") { return &c.vast_api_key; }
  if (key == "hf_token") { return &c.hf_token; }
  if (key == "hf_endpoint") { return &c.hf_endpoint; }
  if (key == "lambda_api_url") { return &c.lambda_api_url; }
  if (key == "runpod_api_url") { return &c.runpod_api_url; }
  if (key == "vast_api_url") { return &c.vast_api_url; }
  if (key == "catalog_url") { return &c.catalog_url; }
  if (key == "catalog_fallback_url") { return &c.catalog_fallback_url; }
  if (key == "catalog_clouds") { return &c.catalog_clouds; }
  return nullptr;
}

template <class C>
auto bool_field(C& c, std::string_view key) -> decltype(&c.allow_insecure_http)
{
  if (key == "allow_insecure_http") { return &c.allow_insecure_http; }
  if (key == "catalog_auto_refresh") { return &c.catalog_auto_refresh; }
  return nullptr;
}

// "aws, gcp,runpod" -> "aws,gcp,runpod": known catalogue clouds, each once.
Result<std::string> normalise_catalog_clouds(std::string_view text)
{
  std::string out;
  std::vector<std::string> seen;
  for (const auto part : split(text, ',')) {
    const std::string cloud = to_lower(trim(part));
    if (cloud.empty()) {
      continue;
    }
    if (!market::is_catalog_cloud(cloud)) {
      std::string known;
      for (const auto k : market::catalog_clouds()) {
        known += (known.empty() ? "" : ", ") + std::string(k);
      }
      return fail(Errc::invalid_input, "catalog_clouds: `" + cloud.substr(0, 40) + "` is not a cloud of the catalogue; known: " + known);
    }
    if (std::find(seen.begin(), seen.end(), cloud) == seen.end()) {
      seen.push_back(cloud);
      out += (out.empty() ? "" : ",") + cloud;
    }
  }
  if (out.empty()) {
    return fail(Errc::invalid_input, "catalog_clouds: no cloud named; remove the key for every cloud");
  }
  return out;
}

}  // namespace

namespace config_detail {

const ConfigKeyInfo* find_key(std::string_view name)
{
  for (const auto& k : k_keys) {
    if (k.name == name && k.name != "prices") {
      return &k;
    }
  }
  return nullptr;
}

std::string known_keys()
{
  std::string out;
  for (const auto& k : k_keys) {
    out += out.empty() ? "" : ", ";
    out += k.name;
  }
  return out;
}

Result<void> assign(Config& c, const ConfigKeyInfo& k, const std::string& text, std::optional<double> number,
                    const std::map<std::string, std::string>& env)
{
  const std::string what = std::string(k.name);
  if (k.type == ConfigType::number) {
    if (!number.has_value()) {
      return fail(Errc::invalid_input, what + ": expected a number, got `" + text.substr(0, 40) + "`");
    }
    if (k.name == "budget_usd") {
      if (*number < 0 || *number >= 1e9) {
        return fail(Errc::invalid_input, what + ": must be between 0 and 1e9 USD");
      }
      c.budget = MicroUsd{round_to_i64(*number * 1e6)};
    } else if (k.name == "catalog_max_age_hours") {
      if (!(*number > 0) || *number > 8760) {
        return fail(Errc::invalid_input, what + ": must be > 0 and <= 8760 hours");
      }
      c.catalog_max_age_hours = *number;
    } else {
      if (!(*number > 0) || *number > 8760) {
        return fail(Errc::invalid_input, what + ": must be > 0 and <= 8760 hours");
      }
      c.offers_max_age_hours = *number;
    }
    return {};
  }
  if (text.empty()) {
    return fail(Errc::invalid_input, what + ": empty value; remove the key to unset it");
  }
  if (k.type == ConfigType::boolean) {
    bool* field = bool_field(c, k.name);
    if (field == nullptr) {
      return fail(Errc::internal, what + ": a boolean key without a field in Config");
    }
    TRY_ASSIGN(*field, parse_config_bool(k.name, text));
    return {};
  }
  std::string value = text;
  if (k.type == ConfigType::url && !value.starts_with("http://") && !value.starts_with("https://")) {
    return fail(Errc::invalid_input, what + ": `" + value.substr(0, 60) + "` is not an http(s) URL");
  }
  if (k.name == "catalog_clouds") {
    TRY_ASSIGN(value, normalise_catalog_clouds(value));
  }
  if (k.type == ConfigType::provider) {
    TRY_ASSIGN(const ProviderInfo p, find_provider(value));
    value = p.name;
  }
  if (k.type == ConfigType::path && value.starts_with("~/")) {
    const auto home = env.find("HOME");
    if (home != env.end() && !home->second.empty()) {
      value = home->second + value.substr(1);
    }
  }
  *string_field(c, k.name) = value;
  return {};
}

Result<bool> parse_config_bool(std::string_view key, std::string_view text)
{
  const std::string t = to_lower(trim(text));
  if (t == "true" || t == "1" || t == "yes") {
    return true;
  }
  if (t == "false" || t == "0" || t == "no") {
    return false;
  }
  return fail(Errc::invalid_input, std::string(key) + ": expected true or false, got `" + std::string(text.substr(0, 40)) + "`");
}

void apply_defaults(Config& c)
{
  for (const auto& k : k_keys) {
    if (!k.default_text.empty() && k.type != ConfigType::number && k.type != ConfigType::boolean) {
      *string_field(c, k.name) = std::string(k.default_text);
    }
  }
}

}  // namespace config_detail

std::string_view origin_name(ConfigOrigin o) noexcept
{
  switch (o) {
  case ConfigOrigin::default_value: return "default";
  case ConfigOrigin::file: return "file";
  case ConfigOrigin::env: return "env";
  case ConfigOrigin::flag: return "flag";
  }
  return "default";
}

std::span<const ConfigKeyInfo> config_keys() noexcept { return k_keys; }

ConfigOrigin Config::origin(std::string_view key) const
{
  const auto it = origins.find(key);
  return it == origins.end() ? ConfigOrigin::default_value : it->second;
}

std::optional<std::string> Config::text(std::string_view key) const
{
  if (key == "budget_usd") {
    return budget ? std::optional<std::string>(format_usd(*budget).substr(1)) : std::nullopt;
  }
  if (key == "offers_max_age_hours" || key == "catalog_max_age_hours") {
    std::ostringstream os;
    os << (key == "offers_max_age_hours" ? offers_max_age_hours : catalog_max_age_hours);
    return os.str();
  }
  if (const auto* b = bool_field(*this, key)) {
    return std::string(*b ? "true" : "false");
  }
  if (key == "prices") {
    return price_overrides.empty() ? std::nullopt
                                   : std::optional<std::string>(std::to_string(price_overrides.size()) + " override(s)");
  }
  const auto* f = string_field(*this, key);
  return f != nullptr ? *f : std::nullopt;
}

std::string config_display_value(const Config& c, const ConfigKeyInfo& key)
{
  const auto v = c.text(key.name);
  if (!v.has_value()) {
    return "(unset)";
  }
  return key.secret ? "***set***" : *v;
}

Result<void> set_config_flag(Config& c, std::string_view key, std::string_view value)
{
  const auto* k = config_detail::find_key(key);
  if (k == nullptr) {
    return fail(Errc::usage, "config key `" + std::string(key) + "`: unknown; known keys: " + config_detail::known_keys());
  }
  TRY(config_detail::assign(c, *k, std::string(value), parse_double(value), {}));
  c.origins[std::string(k->name)] = ConfigOrigin::flag;
  c.sources[std::string(k->name)] = "--" + std::string(k->name);
  return {};
}

}  // namespace gpurent

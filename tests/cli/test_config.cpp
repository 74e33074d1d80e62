// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli/config.hpp"
#include "cli_harness.hpp"

using namespace gpurent;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir()
  {
    static int counter = 0;
    path = fs::temp_directory_path() / ("gpurent-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path / "xdg" / "gpurent");
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] fs::path config() const { return path / "xdg" / "gpurent" / "config.toml"; }
  void write(const std::string& text, fs::perms mode) const
  {
    std::ofstream(config()) << text;
    fs::permissions(config(), mode);
  }
  [[nodiscard]] std::map<std::string, std::string> env() const
  {
    return {{"HOME", path.string()}, {"XDG_CONFIG_HOME", (path / "xdg").string()}};
  }
};

const fs::perms k_0600 = fs::perms::owner_read | fs::perms::owner_write;
const fs::perms k_0644 = k_0600 | fs::perms::group_read | fs::perms::others_read;

}  // namespace

TEST_CASE("Config: precedence is default < file < env < flag", "[cli][config]")
{
  const std::string file = "offers_max_age_hours = 6\ndefault_provider = \"RunPod\"\nbudget_usd = 100\n";
  auto c = config_from(file, "config.toml", {{"GPURENT_BUDGET_USD", "250"}});
  REQUIRE(c.has_value());
  CHECK(c->offers_max_age_hours == 6);
  CHECK(c->origin("offers_max_age_hours") == ConfigOrigin::file);
  CHECK(c->default_provider == "runpod");
  CHECK(c->budget->n == 250'000'000);
  CHECK(c->origin("budget_usd") == ConfigOrigin::env);
  CHECK(c->sources.at("budget_usd") == "GPURENT_BUDGET_USD");
  CHECK(c->origin("backup_dir") == ConfigOrigin::default_value);
  CHECK(c->hf_endpoint == "https://huggingface.co");
  REQUIRE(set_config_flag(*c, "budget_usd", "10").has_value());
  CHECK(c->budget->n == 10'000'000);
  CHECK(c->origin("budget_usd") == ConfigOrigin::flag);
  CHECK_FALSE(set_config_flag(*c, "nope", "1").has_value());
  const auto d = config_from("", "x", {});
  REQUIRE(d.has_value());
  CHECK(d->offers_max_age_hours == 24);
  CHECK_FALSE(d->budget.has_value());
}

TEST_CASE("Config: provider credential variables and GPURENT_ names", "[cli][config]")
{
  auto c = config_from("", "x", {{"LAMBDA_API_KEY", "lam"}, {"RUNPOD_API_KEY", "rp"}, {"GPURENT_RUNPOD_API_KEY", "rp2"},
                                 {"HF_TOKEN", "hf"}, {"GPURENT_LAMBDA_API_URL", "http://127.0.0.1:9999"}});
  REQUIRE(c.has_value());
  CHECK(c->lambda_api_key == "lam");
  CHECK(c->sources.at("lambda_api_key") == "LAMBDA_API_KEY");
  CHECK(c->runpod_api_key == "rp2");
  CHECK(c->hf_token == "hf");
  CHECK(c->lambda_api_url == "http://127.0.0.1:9999");
  for (const auto& k : config_keys()) {
    if (k.secret) {
      INFO(k.name);
      CHECK(config_display_value(*c, k) == (c->text(k.name) ? "***set***" : "(unset)"));
    }
  }
}

TEST_CASE("Config: unknown keys, sections and bad values are errors with the line", "[cli][config]")
{
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"budget_usd = 1\nbudget = 5", "config.toml:2: unknown key `budget`"},
      {"[providers]\n", "config.toml:1: unknown section [providers]"},
      {"[prices.acme]\n", "unknown; known providers"},
      {"[prices]\nx = 1\n", "put prices under [prices.<provider>]"},
      {"[prices.gpucloud]\n\"rtx-4090\" = 1.0\n", "config.toml:2: price `rtx-4090` for gpucloud"},
      {"[prices.runpod]\nl4 = \"cheap\"\n", "must be a number"},
      {"[prices.runpod]\nvoodoo = 1\n", "not in the catalogue"},
      {"budget_usd = \"100\"\n", "must be a number, not a string"},
      {"budget_usd = -1\n", "between 0 and 1e9"},
      {"offers_max_age_hours = 0\n", "> 0"},
      {"default_provider = \"acme\"\n", "unknown; known providers"},
      {"lambda_api_url = \"ftp://x\"\n", "not an http(s) URL"},
      {"backup_dir = true\n", "does not take true/false"},
      {"hf_token = \"\"\n", "empty value"},
      {"budget_usd = 1 2\n", "config.toml: line 1"},
  };
  for (const auto& [text, want] : cases) {
    INFO(text);
    const auto r = config_from(text, "config.toml", {});
    REQUIRE_FALSE(r.has_value());
    CHECK_THAT(r.error().message, Catch::Contains(want));
  }
  CHECK_THAT(config_from("", "x", {{"GPURENT_BUDGET_USD", "lots"}}).error().message,
             Catch::Contains("GPURENT_BUDGET_USD: budget_usd: expected a number"));
}

TEST_CASE("Config: price overrides from [prices.<provider>]", "[cli][config]")
{
  const auto c = config_from("[prices.gpucloud]\n\"rtx-pro-6000x8\" = 12.5\n\"RTX PRO 6000\" = 1.6\n[prices.cloudgpu]\nrtx-4090 = 0.69\n",
                             "config.toml", {});
  REQUIRE(c.has_value());
  REQUIRE(c->price_overrides.size() == 3);
  CHECK(c->price_overrides[0].gpus == 8);
  CHECK(c->price_overrides[0].price_per_hour.n == 12'500'000);
  CHECK(c->price_overrides[1].card == "rtx-pro-6000");
  CHECK(c->price_overrides[2].provider == "cloudgpu");
  CHECK(c->origin("prices") == ConfigOrigin::file);
}

TEST_CASE("Config: a file holding a secret must be mode 0600", "[cli][config]")
{
  TempDir t;
  t.write("runpod_api_key = \"rp-secret-value\"\n", k_0644);
  const auto bad = test::run_cli({"config", "show"}, t.env());
  CHECK(bad.code == 3);
  CHECK_THAT(bad.err, Catch::Contains("chmod 600"));
  CHECK(bad.err.find("rp-secret-value") == std::string::npos);
  CHECK(bad.out.empty());

  fs::permissions(t.config(), k_0600);
  const auto ok = test::run_cli({"config", "show"}, t.env());
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Catch::Contains("***set***"));
  CHECK(ok.out.find("rp-secret-value") == std::string::npos);

  // without secrets, a world-readable file is fine
  t.write("budget_usd = 5\n", k_0644);
  const auto plain = test::run_cli({"config", "show"}, t.env());
  CHECK(plain.code == 0);
}

TEST_CASE("Config: show --json lists every key with value, origin and no secret", "[cli][config]")
{
  TempDir t;
  t.write("budget_usd = 99.5\nvast_api_key = \"vast-secret\"\n[prices.runpod]\n\"l4x2\" = 1.5\n", k_0600);
  auto env = t.env();
  env["LAMBDA_API_KEY"] = "lambda-secret";
  const auto r = test::run_cli({"config", "show", "--json"}, env);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("secret\"") != std::string::npos);  // the "secret" field exists
  CHECK(r.out.find("vast-secret") == std::string::npos);
  CHECK(r.out.find("lambda-secret") == std::string::npos);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["path"] == t.config().string());
  CHECK(j["file_found"] == true);
  std::map<std::string, nlohmann::json> by_key;
  for (const auto& k : j["keys"]) {
    by_key[k["key"].get<std::string>()] = k;
    CHECK(k.contains("origin"));
    CHECK(k.contains("value"));
  }
  CHECK(by_key.size() + 1 == config_keys().size());
  CHECK(by_key["budget_usd"]["value"] == 99.5);
  CHECK(by_key["budget_usd"]["origin"] == "file");
  CHECK(by_key["vast_api_key"]["value"] == "***set***");
  CHECK(by_key["lambda_api_key"]["origin"] == "env");
  CHECK(by_key["runpod_api_key"]["value"].is_null());
  CHECK(by_key["offers_max_age_hours"]["origin"] == "default");
  REQUIRE(j["prices"].size() == 1);
  CHECK(j["prices"][0]["gpus"] == 2);
  CHECK(j["prices"][0]["price_per_hour"] == 1.5);
}

TEST_CASE("Config: path honours GPURENT_CONFIG, XDG_CONFIG_HOME, HOME", "[cli][config]")
{
  CHECK(config_path({{"HOME", "/h"}}) == "/h/.config/gpurent/config.toml");
  CHECK(config_path({{"HOME", "/h"}, {"XDG_CONFIG_HOME", "/x"}}) == "/x/gpurent/config.toml");
  CHECK(config_path({{"HOME", "/h"}, {"GPURENT_CONFIG", "/c.toml"}}) == "/c.toml");
  CHECK(config_path({}).empty());
  const auto r = test::run_cli({"config", "path"}, std::map<std::string, std::string>{{"HOME", "/h"}});
  CHECK(r.code == 0);
  CHECK(r.out == "/h/.config/gpurent/config.toml\n");
  const auto missing = test::run_cli({"config", "show"}, std::map<std::string, std::string>{{"GPURENT_CONFIG",
                                      "/nonexistent/gpurent.toml"}});
  CHECK(missing.code == 1);
  CHECK_THAT(missing.err, Catch::Contains("does not exist"));
  TempDir t;
  t.write("nonsense here\n", k_0600);
  const auto broken = test::run_cli({"config", "show"}, t.env());
  CHECK(broken.code == 2);  // a malformed config file: a usage error, JSON code "usage"
  CHECK_THAT(broken.err, Catch::Contains("config.toml:1: expected '=', saw 'h' (column 10, in a key-value pair)"));
}

TEST_CASE("Config: the full example file in tests/data/config parses", "[cli][config]")
{
  std::ifstream f(std::string(GPURENT_TEST_DATA) + "/config/full.toml");
  std::stringstream ss;
  ss << f.rdbuf();
  const auto c = config_from(ss.str(), "full.toml", {{"HOME", "/home/u"}});
  REQUIRE(c.has_value());
  CHECK(c->budget->n == 250'000'000);
  CHECK(c->backup_dir == "/home/u/gpurent-backups");
  CHECK(c->runpod_api_key == "fake-runpod-key");
  CHECK(c->price_overrides.size() == 4);
  CHECK(c->origin("vast_api_url") == ConfigOrigin::file);
  std::ifstream b(std::string(GPURENT_TEST_DATA) + "/config/bad_unknown_key.toml");
  std::stringstream bs;
  bs << b.rdbuf();
  CHECK_THAT(config_from(bs.str(), "bad.toml", {}).error().message, Catch::Contains("bad.toml:2: unknown key `max_price`"));
}

// SPDX-License-Identifier: MIT
// `config set` edits the file as text: property-tested over random files that KEY ends up with
// VALUE (read back through the same loader every command uses) and that every other line stays
// as it was; plus `config init`, `set` and `get` through the command line.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

#include "cli/cli_harness.hpp"
#include "cli/config.hpp"
#include "cli/config_edit.hpp"
#include "common/text.hpp"
#include "fakes/temp_dir.hpp"
#include "common/rounding.hpp"
#include "common/units.hpp"

namespace fs = std::filesystem;
using gpurent::config_from;
using gpurent::config_set_text;

namespace {

std::vector<std::string> lines_of(const std::string& text)
{
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(line);
  }
  return out;
}

struct Setting {
  std::string key;
  std::string value;     // as given to `config set`
  std::string expected;  // Config::text(key) afterwards ("" for a price: checked separately)
};

// Values `config set` must accept, with what the loader then reports.
std::vector<Setting> settings()
{
  return {
      {"budget_usd", "50", "50.00"},
      {"budget_usd", "0.5", "0.50"},
      {"offers_max_age_hours", "6", "6"},
      {"default_provider", "RunPod", "runpod"},
      {"default_provider", "vast", "vast"},
      {"backup_dir", "/data/backups with space", "/data/backups with space"},
      {"ssh_identity", "/keys/id \"quoted\" \\ back", "/keys/id \"quoted\" \\ back"},
      {"known_hosts", "/k#h", "/k#h"},
      {"lambda_api_key", "sk-'single'\"double\"", "sk-'single'\"double\""},
      {"runpod_api_key", "rp_tab\there", "rp_tab\there"},
      {"hf_endpoint", "http://127.0.0.1:9999/hub", "http://127.0.0.1:9999/hub"},
      {"vast_api_url", "https://vast.example/api/v0", "https://vast.example/api/v0"},
      {"allow_insecure_http", "true", "true"},
      {"allow_insecure_http", "False", "false"},
      {"prices.gpucloud.rtx-pro-6000", "1.6", ""},
      {"prices.runpod.l4x2", "0.9", ""},
      {"prices.cloudgpu.a100-80gb-sxm", "2.25", ""},
  };
}

// A random, valid config file: comments, blank lines, root entries (some with a trailing
// comment), commented-out template lines, and [prices.<provider>] tables.
std::string random_file(std::mt19937& rng)
{
  const std::vector<std::string> roots = {
      "budget_usd = 75", "offers_max_age_hours = 12   # half a day", "default_provider = \"lambda\"",
      "backup_dir = '/b'", "hf_endpoint = \"https://hf.example\"  # mirror", "runpod_api_key = \"rp-old\"",
  };
  const std::vector<std::string> noise = {"# a comment", "", "   # indented comment", "# budget_usd = 100",
                                          "# runpod_api_key = \"\"", "#default_provider=\"vast\""};
  const std::vector<std::string> tables = {"[prices.gpucloud]\n\"rtx-pro-6000x8\" = 12.5   # whole server\n",
                                           "[prices.runpod]\nl4 = 0.5\n# cheap\n", "[prices.\"cloudgpu\"]\n"};
  std::string out;
  std::vector<std::string> pool = roots;
  std::shuffle(pool.begin(), pool.end(), rng);
  const std::size_t n_roots = std::uniform_int_distribution<std::size_t>(0, pool.size())(rng);
  for (std::size_t i = 0; i < n_roots; ++i) {
    for (int k = std::uniform_int_distribution<int>(0, 2)(rng); k > 0; --k) {
      out += noise[std::uniform_int_distribution<std::size_t>(0, noise.size() - 1)(rng)] + "\n";
    }
    out += pool[i] + "\n";
  }
  std::vector<std::string> t = tables;
  std::shuffle(t.begin(), t.end(), rng);
  const std::size_t n_tables = std::uniform_int_distribution<std::size_t>(0, t.size())(rng);
  for (std::size_t i = 0; i < n_tables; ++i) {
    out += (std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? "\n" : "") + t[i];
  }
  return out;
}

// How many of `before`'s lines are not in `after` in the same order (via the longest common
// subsequence): at most one, the line that was set.
std::size_t lines_lost(const std::vector<std::string>& before, const std::vector<std::string>& after)
{
  std::vector<std::vector<std::size_t>> lcs(before.size() + 1, std::vector<std::size_t>(after.size() + 1, 0));
  for (std::size_t i = 1; i <= before.size(); ++i) {
    for (std::size_t j = 1; j <= after.size(); ++j) {
      lcs[i][j] = before[i - 1] == after[j - 1] ? lcs[i - 1][j - 1] + 1 : std::max(lcs[i - 1][j], lcs[i][j - 1]);
    }
  }
  return before.size() - lcs[before.size()][after.size()];
}

}  // namespace

TEST_CASE("config set: the value round-trips and every other line is kept (property)", "[cli][config][property]")
{
  std::mt19937 rng(20260131);
  const auto all = settings();
  for (int round = 0; round < 400; ++round) {
    const std::string before = random_file(rng);
    REQUIRE(config_from(before, "config.toml", {}).has_value());
    const Setting& s = all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(rng)];
    INFO("file:\n" << before << "\nset " << s.key << " " << s.value);
    const auto after = config_set_text(before, s.key, s.value);
    REQUIRE(after.has_value());
    INFO("after:\n" << *after);
    const auto c = config_from(*after, "config.toml", {});
    REQUIRE(c.has_value());
    if (s.expected.empty()) {
      const auto parts = gpurent::split(s.key, '.');
      bool found = false;
      for (const auto& o : c->price_overrides) {
        const std::string card = gpurent::normalize_key(o.card + (o.gpus > 1 ? "x" + std::to_string(o.gpus) : ""));
        found = found || (o.provider == parts[1] && card == gpurent::normalize_key(parts[2]) &&
                          o.price_per_hour.n == gpurent::round_to_i64(*gpurent::parse_double(s.value) * 1e6));
      }
      CHECK(found);
    } else {
      CHECK(c->text(s.key) == s.expected);
      CHECK(c->origin(s.key) == gpurent::ConfigOrigin::file);
    }
    const auto old_lines = lines_of(before);
    const auto new_lines = lines_of(*after);
    CHECK(lines_lost(old_lines, new_lines) <= 1);
    CHECK(new_lines.size() <= old_lines.size() + 3);  // at most: blank, [header], entry
    // A second identical set changes nothing.
    const auto again = config_set_text(*after, s.key, s.value);
    REQUIRE(again.has_value());
    CHECK(*again == *after);
  }
}

TEST_CASE("config set: in place, trailing comment kept, the template's line is uncommented", "[cli][config]")
{
  const auto a = config_set_text("# top\noffers_max_age_hours = 12   # half a day\n\n[prices.runpod]\nl4 = 0.5\n",
                                 "offers_max_age_hours", "6");
  REQUIRE(a.has_value());
  CHECK(*a == "# top\noffers_max_age_hours = 6   # half a day\n\n[prices.runpod]\nl4 = 0.5\n");
  const auto b = config_set_text(gpurent::config_template(), "budget_usd", "50");
  REQUIRE(b.has_value());
  CHECK(b->find("\nbudget_usd = 50\n") != std::string::npos);
  CHECK(b->find("# budget_usd = ") == std::string::npos);
  CHECK(lines_of(*b).size() == lines_of(gpurent::config_template()).size());
  const auto c = config_set_text("[prices.runpod]\nl4 = 0.5\n", "default_provider", "vast");
  REQUIRE(c.has_value());
  CHECK(*c == "default_provider = \"vast\"\n[prices.runpod]\nl4 = 0.5\n");
  const auto d = config_set_text("budget_usd = 5\n", "prices.vast.RTX 4090", "0.3");
  REQUIRE(d.has_value());
  CHECK(*d == "budget_usd = 5\n\n[prices.vast]\n\"RTX 4090\" = 0.3\n");
}

TEST_CASE("config set: bad keys and values change nothing and say why", "[cli][config]")
{
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"bogus", "1", "unknown; known keys"},
      {"budget_usd", "lots", "not a number"},
      {"budget_usd", "-5", "between 0 and 1e9"},
      {"default_provider", "acme", "unknown; known providers"},
      {"hf_endpoint", "ftp://x", "not an http(s) URL"},
      {"prices.acme.l4", "1", "unknown; known providers"},
      {"prices.runpod", "1", "prices.<provider>.<card>"},
      {"prices.runpod.voodoo", "1", "not in the catalogue"},
      {"lambda_api_key", "", "empty value"},
  };
  for (const auto& [key, value, why] : cases) {
    INFO(key << " = " << value);
    const auto r = config_set_text("budget_usd = 5\n", key, value);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == gpurent::Errc::usage);
    CHECK_THAT(r.error().message, Catch::Contains(why));
  }
  const auto broken = config_set_text("budget_usd = \n", "budget_usd", "5");
  REQUIRE_FALSE(broken.has_value());
  CHECK_THAT(broken.error().message, Catch::Contains("line 1") && Catch::Contains("nothing was changed"));
}

TEST_CASE("config init/set/get: a 0600 template, edits kept, values read back", "[cli][config]")
{
  const gpurent::test::TempDir tmp("gpurent-config-edit");
  const fs::path& dir = tmp.path();
  gpurent::test::CliHarness h;
  h.env["XDG_CONFIG_HOME"] = dir.string();
  const fs::path file = dir / "gpurent" / "config.toml";

  auto r = h.run({"config", "init"});
  REQUIRE(r.code == 0);
  CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  const auto defaults = h.run({"config", "show", "--json"});
  REQUIRE(defaults.code == 0);  // the template sets nothing
  const auto shown = nlohmann::json::parse(defaults.out);
  for (const auto& k : shown["keys"]) {
    CHECK(k["origin"] == "default");
  }
  CHECK(h.run({"config", "init"}).code == 3);  // never overwritten without --force

  REQUIRE(h.run({"config", "set", "budget_usd", "50"}).code == 0);
  REQUIRE(h.run({"config", "set", "vast_api_key", "vast-secret-1"}).code == 0);
  r = h.run({"config", "get", "budget_usd"});
  CHECK(r.code == 0);
  CHECK(r.out == "50.00\n");
  r = h.run({"config", "get", "vast_api_key"});
  CHECK(r.out == "***set***\n");
  r = h.run({"config", "set", "vast_api_key", "vast-secret-2", "--json"});
  CHECK(r.out.find("vast-secret") == std::string::npos);
  CHECK(r.err.find("vast-secret") == std::string::npos);
  r = h.run({"config", "get", "hf_token"});
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("gpurent config set hf_token VALUE"));

  // A file that was world-readable becomes 0600 once it holds a secret.
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  REQUIRE(h.run({"config", "set", "default_provider", "runpod"}).code == 0);
  CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

  // The template's comments are all still there.
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  for (const auto& line : lines_of(gpurent::config_template())) {
    if (line.starts_with("# ") && line.find(" = ") == std::string::npos) {
      INFO(line);
      CHECK(text.str().find(line) != std::string::npos);
    }
  }
  r = h.run({"config", "init", "--force"});
  CHECK(r.code == 0);
  CHECK(fs::exists(file.string() + ".bak"));
}

TEST_CASE("config set KEY -: the value from standard input, never on stdout", "[cli][config][credentials]")
{
  const gpurent::test::TempDir tmp("gpurent-config-stdin");
  gpurent::test::CliHarness h;
  h.env["XDG_CONFIG_HOME"] = tmp.path().string();
  const fs::path file = tmp.path() / "gpurent" / "config.toml";
  const auto file_text = [&] {
    std::ifstream in(file);
    std::stringstream t;
    t << in.rdbuf();
    return t.str();
  };

  h.stdin_text = "rk_from_stdin_4711\r\nsecond line is not read\n";
  auto r = h.run({"config", "set", "runpod_api_key", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(file_text(), Catch::Contains("runpod_api_key = \"rk_from_stdin_4711\""));
  CHECK(r.out.find("rk_from") == std::string::npos);
  CHECK(r.err.find("rk_from") == std::string::npos);
  CHECK_THAT(r.out, Catch::Contains("***set***"));
  CHECK((fs::status(file).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

  h.stdin_text = "rk_json\n";
  r = h.run({"config", "set", "runpod_api_key", "-", "--json"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["value"] == "***set***");
  CHECK_THAT(file_text(), Catch::Contains("\"rk_json\""));

  // Not only secrets: any key.
  h.stdin_text = "50\n";
  REQUIRE(h.run({"config", "set", "budget_usd", "-"}).code == 0);
  CHECK_THAT(file_text(), Catch::Contains("budget_usd = 50"));

  // Nothing on standard input: an error, the file as it was.
  const std::string before = file_text();
  h.stdin_text = "";
  r = h.run({"config", "set", "runpod_api_key", "-"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("nothing on standard input"));
  CHECK(file_text() == before);

  // No value and no terminal to ask on: a usage error that says to use `-`.
  h.stdin_text = "rk_never_read\n";
  r = h.run({"config", "set", "runpod_api_key"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("`-`") && Catch::Contains("not a terminal"));
  CHECK(file_text() == before);

  // A secret given on the command line still works, with a warning about history and ps.
  h.stdin_text = "";
  r = h.run({"config", "set", "runpod_api_key", "rk_argv"});
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("warning") && Catch::Contains("config set runpod_api_key -"));
  CHECK(r.err.find("rk_argv") == std::string::npos);
}

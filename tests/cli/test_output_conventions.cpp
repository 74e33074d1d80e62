// SPDX-License-Identifier: MIT
// What a terminal user sees: ASCII bars outside a UTF-8 locale, no colour with TERM=dumb,
// tables that never cut an id, `offers` starting with its first table.
#include <catch2/catch.hpp>

#include "cli/cli_harness.hpp"
#include "sizing/model_catalog.hpp"

using gpurent::test::CliHarness;
using gpurent::test::CliRun;

namespace {

CliRun plan_with(const std::map<std::string, std::string>& locale)
{
  CliHarness h;
  h.env.erase("LANG");
  for (const auto& [k, v] : locale) {
    h.env[k] = v;
  }
  return h.run({"plan", "llama-3.1-8b", "--card", "rtx-4090"});
}

bool has_block_bars(const std::string& text) { return text.find("\u2588") != std::string::npos; }

}  // namespace

TEST_CASE("output: bar charts are plain ASCII unless the locale is UTF-8", "[cli][output]")
{
  const CliRun c = plan_with({{"LANG", "C"}});
  REQUIRE(c.code == 0);
  CHECK_FALSE(has_block_bars(c.out));
  CHECK(c.out.find("\u00b7") == std::string::npos);
  CHECK_THAT(c.out, Catch::Contains("###"));
  for (const char ch : c.out) {
    CHECK(static_cast<unsigned char>(ch) < 0x80);
  }
  CHECK_FALSE(has_block_bars(plan_with({}).out));  // no locale at all is the C locale
  CHECK(has_block_bars(plan_with({{"LANG", "en_US.UTF-8"}}).out));
  CHECK(has_block_bars(plan_with({{"LANG", "C"}, {"LC_CTYPE", "C.utf8"}}).out));
  CHECK(has_block_bars(plan_with({{"LANG", "C"}, {"LC_ALL", "de_DE.UTF-8@euro"}}).out));
  CHECK_FALSE(has_block_bars(plan_with({{"LANG", "en_US.UTF-8"}, {"LC_ALL", "POSIX"}}).out));
  CHECK_FALSE(has_block_bars(plan_with({{"LANG", "en_US.ISO-8859-1"}}).out));
}

TEST_CASE("output: no colour with TERM=dumb, NO_COLOR or --no-color, even on a terminal", "[cli][output]")
{
  const auto run = [](const std::map<std::string, std::string>& extra, std::vector<std::string> args) {
    CliHarness h;
    h.stdout_tty = true;
    h.stderr_tty = true;
    for (const auto& [k, v] : extra) {
      h.env[k] = v;
    }
    return h.run(args);
  };
  const std::vector<std::string> plan{"plan", "llama-3.1-8b"};
  const std::vector<std::string> bad{"plan", "nosuch"};
  CHECK(run({{"TERM", "xterm-256color"}}, plan).out.find('\x1b') != std::string::npos);
  CHECK(run({{"TERM", "xterm-256color"}}, bad).err.find('\x1b') != std::string::npos);
  for (const auto& env : std::vector<std::map<std::string, std::string>>{{{"TERM", "dumb"}}, {{"NO_COLOR", "1"}}}) {
    CHECK(run(env, plan).out.find('\x1b') == std::string::npos);
    CHECK(run(env, bad).err.find('\x1b') == std::string::npos);
  }
  auto args = plan;
  args.emplace_back("--no-color");
  CHECK(run({{"TERM", "xterm"}}, args).out.find('\x1b') == std::string::npos);
}

TEST_CASE("output: models shows every Hugging Face id whole, within 80 columns", "[cli][output]")
{
  CliHarness h;
  const CliRun r = h.run({"models"});
  REQUIRE(r.code == 0);
  CHECK(r.out.find('~') == std::string::npos);
  for (const auto& m : gpurent::model_catalog()) {
    if (!m.hf_ids.empty()) {
      INFO(m.hf_ids.front());
      CHECK_THAT(r.out, Catch::Contains(" " + m.hf_ids.front() + "\n"));
    }
  }
}

TEST_CASE("output: offers starts with its first table, a provider without list prices says how to fetch", "[cli][output]")
{
  CliHarness h;
  const CliRun all = h.run({"offers"});
  REQUIRE(all.code == 0);
  CHECK_THAT(all.out, Catch::StartsWith("gpucloud: "));
  // Vast's offers in the market snapshot are listed, with where they come from.
  const CliRun listed = h.run({"offers", "--provider", "vast"});
  CHECK(listed.code == 0);
  CHECK_THAT(listed.out, Catch::StartsWith("vast: per-second") && Catch::Contains("prices: the market snapshot of 2026-12-05"));
  // Nothing matches: say where Vast's offers come from.
  const CliRun vast = h.run({"offers", "--provider", "vast", "--min-vram", "500"});
  CHECK(vast.code == 0);
  CHECK_THAT(vast.out, Catch::StartsWith("no offers match\n"));
  CHECK_THAT(vast.out, Catch::Contains("VAST_API_KEY") && Catch::Contains("gpurent offers --refresh --provider vast"));
  h.env["VAST_API_KEY"] = "set";
  const CliRun keyed = h.run({"offers", "--provider", "vast", "--min-vram", "500"});
  CHECK(keyed.out.find("Set VAST_API_KEY") == std::string::npos);
  CHECK_THAT(keyed.out, Catch::Contains("gpurent offers --refresh --provider vast"));
  const CliRun json = h.run({"offers", "--provider", "vast", "--json", "--min-vram", "500"});
  CHECK_THAT(json.out, Catch::Contains("\"note\""));
}

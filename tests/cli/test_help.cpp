// SPDX-License-Identifier: MIT
// Help: every command's --help within 100 columns and ending with 2-4 examples that work as
// shown; `gpurent help CMD`; golden files of the main help texts; --version.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/build_info.hpp"
#include "cli/cli_harness.hpp"
#include "cli/command_table.hpp"
#include "cli/commands.hpp"
#include "fakes/temp_dir.hpp"

namespace fs = std::filesystem;
using gpurent::test::check_golden;
using gpurent::test::CliHarness;
using gpurent::test::CliRun;

namespace {

std::vector<std::string> words_of(const std::string& path)
{
  std::vector<std::string> out;
  std::istringstream in(path);
  std::string w;
  while (in >> w) {
    out.push_back(w);
  }
  return out;
}

// Every command path: the top-level commands and config's subcommands.
std::vector<std::string> all_paths()
{
  std::vector<std::string> paths;
  for (const auto name : gpurent::command_names()) {
    paths.emplace_back(name);
  }
  for (const char* sub : {"show", "path", "init", "set", "get"}) {
    paths.push_back(std::string("config ") + sub);
  }
  return paths;
}

std::size_t columns(const std::string& line)
{
  std::size_t n = 0;
  for (const char c : line) {
    n += (static_cast<unsigned char>(c) & 0xC0U) != 0x80U ? 1U : 0U;
  }
  return n;
}

// The lines after "Examples:" (the help must end with them).
std::vector<std::string> trailing_examples(const std::string& help)
{
  const auto at = help.rfind("\nExamples:\n");
  REQUIRE(at != std::string::npos);
  std::vector<std::string> out;
  std::istringstream in(help.substr(at + 11));
  std::string line;
  while (std::getline(in, line)) {
    out.push_back(line);
  }
  return out;
}

// A shell-like split of an example line: words, 'single' and "double" quotes.
std::vector<std::string> split_command(const std::string& line)
{
  std::vector<std::string> out;
  std::string word;
  char quote = 0;
  bool in_word = false;
  for (const char c : line) {
    if (quote != 0) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) {
        out.push_back(word);
      }
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) {
    out.push_back(word);
  }
  return out;
}

}  // namespace

TEST_CASE("help: every command's --help fits 100 columns and ends with 2-4 examples", "[cli][help]")
{
  for (const auto& path : all_paths()) {
    INFO(path);
    std::vector<std::string> args = words_of(path);
    args.emplace_back("--help");
    CliHarness h;
    const CliRun r = h.run(args);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line)) {
      INFO(line);
      CHECK(columns(line) <= 100);
    }
    const auto examples = trailing_examples(r.out);
    CHECK(examples.size() >= 2);
    CHECK(examples.size() <= 4);
    for (const auto& e : examples) {
      CHECK_THAT(e, Catch::StartsWith("  "));
    }
    CHECK_THAT(r.out, Catch::Contains("Usage: gpurent " + path));

    // `gpurent help PATH` prints the same text.
    std::vector<std::string> help_args{"help"};
    for (const auto& w : words_of(path)) {
      help_args.push_back(w);
    }
    const CliRun via_help = h.run(help_args);
    CHECK(via_help.code == 0);
    CHECK(via_help.out == r.out);
  }
  CliHarness h;
  const CliRun top = h.run({"--help"});
  REQUIRE(top.code == 0);
  CHECK(h.run({"help"}).out == top.out);
  const auto examples = trailing_examples(top.out);
  CHECK(examples.size() >= 2);
  for (const auto name : gpurent::command_names()) {
    CHECK_THAT(top.out, Catch::Contains("\n  " + std::string(name) + " "));
  }
}

TEST_CASE("help: the help texts match the golden files", "[cli][help]")
{
  CliHarness h;
  check_golden("help_top.txt", h.run({"--help"}).out);
  check_golden("help_plan.txt", h.run({"plan", "--help"}).out);
  check_golden("help_cost.txt", h.run({"cost", "--help"}).out);
  check_golden("help_backup.txt", h.run({"backup", "--help"}).out);
  check_golden("help_config_set.txt", h.run({"config", "set", "--help"}).out);
}

TEST_CASE("help: the examples of the offline commands work as shown", "[cli][help]")
{
  // Commands that need a provider, a server or a log file are exercised elsewhere (e2e).
  const std::set<std::string> offline{"plan", "fits", "models", "offers", "cost", "config", "help", "completion", "man"};
  const gpurent::test::TempDir tmp("gpurent-help-examples");
  const fs::path& dir = tmp.path();
  CliHarness h;
  h.env["XDG_CONFIG_HOME"] = (dir / "config").string();
  h.env["XDG_CACHE_HOME"] = (dir / "cache").string();
  std::size_t run = 0;
  for (const auto& doc : gpurent::command_docs()) {
    for (const auto example : doc.examples) {
      std::string line(example);
      if (line.empty() || !line.starts_with("gpurent ")) {
        continue;  // e.g. a shell line around gpurent
      }
      line = line.substr(0, line.find("   ("));  // a note after the command
      line = line.substr(0, line.find(" > "));   // a redirection
      line = line.substr(0, line.find(" | "));   // a pipe
      auto args = split_command(line);
      args.erase(args.begin());
      if (args.empty() || !offline.contains(args.front()) || line.find("--refresh") != std::string::npos) {
        continue;
      }
      INFO(line);
      if (args == std::vector<std::string>{"config", "init"}) {
        fs::remove(dir / "config" / "gpurent" / "config.toml");  // shown twice (config, config init)
      }
      const CliRun r = h.run(args);
      INFO(r.err);
      CHECK(r.code == 0);
      ++run;
    }
  }
  CHECK(run >= 25);
}

TEST_CASE("help: --version names the version, the commit and the build date", "[cli][help]")
{
  CliHarness h;
  const CliRun r = h.run({"--version"});
  REQUIRE(r.code == 0);
  CHECK(std::regex_match(r.out, std::regex(R"(gpurent \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-dirty)?|unknown), built \d{4}-\d{2}-\d{2}\)\n)")));
  const auto b = gpurent::build_info();
  CHECK_THAT(r.out, Catch::Contains(std::string(b.commit)));
}

TEST_CASE("help: unknown options and commands point to the right help, in gpurent's words", "[cli][help]")
{
  CliHarness h;
  const auto bogus = h.run({"plan", "--gpuss", "2"});
  CHECK(bogus.code == 2);
  CHECK(bogus.err == "gpurent: error: `gpurent plan` has no option --gpuss (did you mean --gpus?); see `gpurent plan --help`\n");
  // With MODEL given, CLI11 reports the stray value first ("2 --gpuss"): the option is named.
  const auto after_model = h.run({"plan", "llama-3.1-8b", "--gpuss", "2"});
  CHECK(after_model.code == 2);
  CHECK(after_model.err == "gpurent: error: `gpurent plan` has no option --gpuss (did you mean --gpus?); see `gpurent plan --help`\n");
  const auto nested = h.run({"config", "set", "budget_usd", "5", "--bogus"});
  CHECK_THAT(nested.err, Catch::Contains("see `gpurent config set --help`"));
  const auto convert = h.run({"cost", "--provider", "runpod", "--card", "l4", "--hours", "1", "--gpus", "-1"});
  CHECK(convert.err == "gpurent: error: --gpus `-1`: expects a whole number (0 or more); see `gpurent cost --help`\n");
  const auto twice = h.run({"plan", "llama-3.1-8b", "--gpus", "1", "--gpus", "2"});
  CHECK(twice.err == "gpurent: error: --gpus was given more than once; give it once; see `gpurent plan --help`\n");
  const auto missing = h.run({"cost", "--provider", "runpod"});
  CHECK(missing.err == "gpurent: error: `gpurent cost` needs --card; e.g. `gpurent cost --provider runpod --card rtx-4090 --hours 2`\n");
  const auto sub = h.run({"config", "sho"});
  CHECK_THAT(sub.err, Catch::Contains("has no subcommand `sho` (did you mean `show`?)"));
  const auto command = h.run({"plna"});
  CHECK_THAT(command.err, Catch::Contains("unknown command 'plna'") && Catch::Contains("(did you mean `plan`?)"));
  for (const auto* r : {&bogus, &nested, &convert, &twice, &missing, &sub, &command}) {
    CHECK(r->err.find("Could not convert") == std::string::npos);
    CHECK(r->err.find("required but received") == std::string::npos);
    CHECK(r->err.find("The following argument") == std::string::npos);
    CHECK(std::count(r->err.begin(), r->err.end(), '\n') == 1);
  }
}

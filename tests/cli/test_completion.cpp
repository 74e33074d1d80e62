// SPDX-License-Identifier: MIT
// Shell completion and the man page, generated from the command table: the bash script passes
// `bash -n` and completes commands, subcommands, options and the values of --card/--provider
// (driven through bash's own COMP_WORDS/COMP_CWORD); zsh and fish scripts parse (and fish
// completes); the man page renders without a groff warning.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "cli/cli_harness.hpp"
#include "cli/commands.hpp"
#include "fakes/temp_dir.hpp"
#include "providers/card.hpp"

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using gpurent::test::CliHarness;
using gpurent::test::TempDir;

namespace {

struct Shell {
  int status = -1;
  std::string out;
};

// Runs a command line under /bin/sh, capturing stdout (stderr is left to the test log).
Shell sh(const std::string& command)
{
  Shell r;
  FILE* p = ::popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    r.out.append(buf, n);
  }
  r.status = ::pclose(p);
  return r;
}

// Runs a driver script under bash: one line of completions per `comp` call.
std::vector<std::string> completions(const std::filesystem::path& driver)
{
  const auto r = sh("bash '" + driver.string() + "'");
  REQUIRE(r.status == 0);
  std::istringstream lines(r.out);
  std::vector<std::string> got;
  std::string line;
  while (std::getline(lines, line)) {
    got.push_back(line);
  }
  return got;
}

bool have(const std::string& program) { return sh("command -v " + program + " >/dev/null 2>&1").status == 0; }

std::string generated(const std::vector<std::string>& args)
{
  CliHarness h;
  const auto r = h.run(args);
  REQUIRE(r.code == 0);
  REQUIRE(r.err.empty());
  return r.out;
}

}  // namespace

TEST_CASE("completion: the bash script parses and completes like bash would", "[cli][completion]")
{
  const TempDir t("gpurent-completion");
  const auto script = t.write("gpurent.bash", generated({"completion", "bash"}));
  REQUIRE(sh("bash -n '" + script.string() + "'").status == 0);
  // COMP_WORDS/COMP_CWORD as bash's programmable completion sets them; prints COMPREPLY.
  const auto driver = t.write("drive.bash", "source '" + script.string() + "'\n" + R"(
complete -p gpurent >/dev/null || exit 3
comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _gpurent; echo "${COMPREPLY[*]}"; }
comp gpurent pl
comp gpurent ''
comp gpurent plan --card rtx-409
comp gpurent cost --provider ru
comp gpurent --json plan --card rtx-4090 --provider l
comp gpurent plan --ta
comp gpurent plan --task q
comp gpurent config s
comp gpurent config set budg
comp gpurent fits a100
comp gpurent plan llama-3.1-8
comp gpurent plan --card = h1
comp gpurent completion f
comp gpurent ssh box -- nvid
)");
  const auto got = completions(driver);
  REQUIRE(got.size() == 14);
  CHECK(got[0] == "plan");
  for (const auto name : gpurent::command_names()) {
    CHECK_THAT(" " + got[1] + " ", Catch::Contains(" " + std::string(name) + " "));
  }
  CHECK(got[2] == "rtx-4090 rtx-4090-48gb");
  CHECK(got[3] == "runpod");
  CHECK(got[4] == "lambda");
  CHECK(got[5] == "--task");
  CHECK(got[6] == "qlora");
  CHECK(got[7] == "show set");
  CHECK(got[8] == "budget_usd");
  CHECK(got[9] == "a100-40gb-sxm a100-40gb-pcie a100-80gb-sxm a100-80gb-pcie");
  CHECK(got[10] == "llama-3.1-8b");
  CHECK(got[11] == "h100-sxm h100-pcie h100-nvl");
  CHECK(got[12] == "fish");
  CHECK(got[13].empty());  // after --: the remote command, nothing to offer
}

TEST_CASE("completion: NAME completes from the tracked servers, which the script asks gpurent for", "[cli][completion]")
{
  const TempDir t("gpurent-completion");
  const auto script = t.write("gpurent.bash", generated({"completion", "bash"}));
  // `gpurent completion servers` stands in for the state of this machine.
  const auto driver = t.write("drive.bash", "source '" + script.string() + "'\n" + R"(
gpurent() { [[ "$1 $2" == "completion servers" ]] && printf 'train1\ntrain2\nbox\n'; }
comp() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _gpurent; echo "${COMPREPLY[*]}"; }
comp gpurent down tr
comp gpurent status ''
comp gpurent backup b
comp gpurent backup box /wor
comp gpurent ssh --identity k tr
comp gpurent down train1 --st
)");
  const auto got = completions(driver);
  REQUIRE(got.size() == 6);
  CHECK(got[0] == "train1 train2");
  CHECK(got[1] == "train1 train2 box");
  CHECK(got[2] == "box");
  CHECK(got[3].empty());  // backup's REMOTE_PATHs are not server names
  CHECK(got[4] == "train1 train2");
  CHECK(got[5] == "--stop");
  // zsh and fish ask the same command.
  CHECK_THAT(generated({"completion", "zsh"}), Catch::Contains("gpurent completion servers"));
  CHECK_THAT(generated({"completion", "fish"}), Catch::Contains("(gpurent completion servers 2>/dev/null)"));
}

TEST_CASE("completion servers: nothing, and no database created, where gpurent has no state", "[cli][completion]")
{
  const TempDir t("gpurent-completion-state");
  CliHarness h;
  h.env["GPURENT_STATE_DIR"] = (t.path() / "state").string();
  const auto r = h.run({"completion", "servers"});
  CHECK(r.code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  CHECK_FALSE(fs::exists(t.path() / "state" / "state.db"));
}

TEST_CASE("completion: every card of the catalogue is offered for --card", "[cli][completion]")
{
  const std::string script = generated({"completion", "bash"});
  for (const auto& card : gpurent::card_catalog()) {
    CHECK_THAT(script, Catch::Contains(" " + card.id + " ") || Catch::Contains("'" + card.id + " ") ||
                           Catch::Contains(" " + card.id + "'"));
  }
}

TEST_CASE("completion: the zsh and fish scripts parse, fish completes", "[cli][completion]")
{
  const TempDir t("gpurent-completion");
  const auto zsh = t.write("_gpurent", generated({"completion", "zsh"}));
  const auto fish = t.write("gpurent.fish", generated({"completion", "fish"}));
  CHECK_THAT(generated({"completion", "zsh"}), Catch::StartsWith("#compdef gpurent\n"));
  if (have("zsh")) {
    CHECK(sh("zsh -n '" + zsh.string() + "'").status == 0);
  } else {
    WARN("zsh not installed: its script's syntax is not checked");
  }
  if (!have("fish")) {
    WARN("fish not installed: its script is not checked");
    return;
  }
  CHECK(sh("fish --no-execute '" + fish.string() + "'").status == 0);
  const auto r = sh("fish -c \"source '" + fish.string() +
                    "'; complete -C 'gpurent pl'; complete -C 'gpurent cost --provider ru'; complete -C 'gpurent config s'\"");
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::StartsWith("plan\t"));
  CHECK_THAT(r.out, Catch::Contains("\nrunpod\t"));
  CHECK_THAT(r.out, Catch::Contains("\nset\t") && Catch::Contains("\nshow\t"));
}

TEST_CASE("completion: an unknown shell is a usage error, --json wraps the script", "[cli][completion]")
{
  CliHarness h;
  const auto bad = h.run({"completion", "tcsh"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("give bash, zsh or fish"));
  const auto json = h.run({"completion", "bash", "--json"});
  REQUIRE(json.code == 0);
  CHECK_THAT(nlohmann::json::parse(json.out)["script"].get<std::string>(), Catch::Contains("complete -F _gpurent gpurent"));
}

TEST_CASE("man: the page names every command and option, and renders without warnings", "[cli][man]")
{
  const std::string page = generated({"man"});
  CHECK_THAT(page, Catch::Contains(".TH GPURENT 1 "));
  for (const auto name : gpurent::command_names()) {
    CHECK_THAT(page, Catch::Contains(".SS \"gpurent " + std::string(name)));
  }
  for (const char* text : {"\\-\\-card", "\\-\\-accept\\-new\\-host\\-key", "GPURENT_BUDGET_USD", "RUNPOD_API_KEY",
                           "EXIT STATUS", "gpurent plan llama\\-3.1\\-8b"}) {
    CHECK_THAT(page, Catch::Contains(text));
  }
  if (!have("groff")) {
    WARN("groff not installed: the page is not rendered");
    return;
  }
  const TempDir t("gpurent-completion");
  const auto file = t.write("gpurent.1", page);
  // -ww: every warning; -z: no output. A warning line on stderr fails the check.
  const auto warnings = sh("groff -man -Tutf8 -ww -z '" + file.string() + "' 2>&1");
  CHECK(warnings.status == 0);
  CHECK(warnings.out.empty());
  const auto text = sh("groff -man -Tascii -P-c '" + file.string() + "' 2>/dev/null");
  CHECK_THAT(text.out, Catch::Contains("gpurent completion") && Catch::Contains("Examples:"));
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "cli/parse_errors.hpp"

using gpurent::closest_word;
using gpurent::ParseFailure;
using gpurent::parse_failure_error;

namespace {

std::string rewrite(const std::string& kind, const std::string& what, const std::string& command = "plan")
{
  ParseFailure f;
  f.kind = kind;
  f.what = what;
  f.command = command;
  f.options = {"--gpus", "--card", "--json", "-y"};
  f.value_types = {{"--gpus", "UINT"}, {"--hours", "FLOAT"}, {"--json", ""}, {"--card", "TEXT"}};
  f.example = "gpurent " + command + " example";
  const auto e = parse_failure_error(f);
  CHECK(e.code == gpurent::Errc::usage);
  return e.message;
}

}  // namespace

TEST_CASE("parse errors: CLI11's messages become gpurent's", "[cli][parse_errors]")
{
  CHECK(rewrite("ExtrasError", "The following argument was not expected: --crad") ==
        "`gpurent plan` has no option --crad (did you mean --card?); see `gpurent plan --help`");
  CHECK(rewrite("ExtrasError", "The following arguments were not expected: x y") ==
        "`gpurent plan`: unexpected argument `x`; see `gpurent plan --help`");
  CHECK(rewrite("ExtrasError", "The following argument was not expected: --zzzzzz") ==
        "`gpurent plan` has no option --zzzzzz; see `gpurent plan --help`");
  CHECK(rewrite("ConversionError", "Could not convert: --gpus = -1") ==
        "--gpus `-1`: expects a whole number (0 or more); see `gpurent plan --help`");
  CHECK(rewrite("ConversionError", "Could not convert: --json = x") ==
        "--json `x`: is a flag and takes no value; see `gpurent plan --help`");
  CHECK(rewrite("ArgumentMismatch", "--gpus: At Most 1 required but received 2") ==
        "--gpus was given more than once; give it once; see `gpurent plan --help`");
  CHECK(rewrite("ArgumentMismatch", "--card: 1 required TEXT missing") ==
        "--card needs a value: --card CARD; see `gpurent plan --help`");
  CHECK(rewrite("RequiredError", "--provider is required", "cost") ==
        "`gpurent cost` needs --provider; e.g. `gpurent cost example`");
  CHECK(rewrite("RequiredError", "name is required", "down") == "`gpurent down` needs NAME; e.g. `gpurent down example`");
  CHECK(rewrite("ValidationError", "--gpus: Value 9 not in range 1 to 8", "attach") ==
        "--gpus 9: out of range; give 1 to 8; see `gpurent attach --help`");
  CHECK(rewrite("ValidationError", "--streams: Value zero not in range 1 to 64", "backup") ==
        "--streams `zero`: not a number; give 1 to 64; see `gpurent backup --help`");
  CHECK(rewrite("ExcludesError", "--stop excludes --destroy", "down") ==
        "--stop cannot be used with --destroy; see `gpurent down --help`");
  CHECK(rewrite("RequiresError", "--force requires --destroy", "down") == "--force needs --destroy; see `gpurent down --help`");
  CHECK(rewrite("HorribleError", "something odd", "") == "`gpurent`: something odd; see `gpurent --help`");
}

TEST_CASE("parse errors: a missing or mistyped subcommand lists the subcommands", "[cli][parse_errors]")
{
  ParseFailure f;
  f.kind = "RequiredError";
  f.what = "A subcommand is required";
  f.command = "config";
  f.subcommands = {"show", "path", "init", "set", "get"};
  CHECK(parse_failure_error(f).message ==
        "`gpurent config` needs a subcommand (show, path, init, set, get); see `gpurent config --help`");
  f.stray_word = "sett";
  CHECK(parse_failure_error(f).message == "`gpurent config` has no subcommand `sett` (did you mean `set`?); its "
                                          "subcommands: show, path, init, set, get; see `gpurent config --help`");
}

TEST_CASE("parse errors: closest_word suggests only near words", "[cli][parse_errors]")
{
  const std::vector<std::string> words{"plan", "fits", "models", "offers", "cost", "config"};
  CHECK(closest_word("plna", words) == "plan");
  CHECK(closest_word("conf", words) == "config");
  CHECK(closest_word("xyzzy", words).empty());
  CHECK(closest_word("", words).empty());
}

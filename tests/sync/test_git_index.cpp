// SPDX-License-Identifier: MIT
// The git index reader (sync/git_index.hpp) against indexes git itself wrote (versions 2, 3 with
// intent-to-add entries, 4 with path compression; skip-worktree entries), and against cut and
// damaged bytes.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/git_index.hpp"

using namespace gpurent;

using gpurent::testing::slurp;

namespace {

std::vector<std::string> split_nul(const std::string& s)
{
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, '\0');) {
    out.push_back(f);
  }
  return out;
}

}  // namespace

TEST_CASE("parse_git_index: the paths git lists, for index versions 2, 3 and 4", "[sync][git_index]")
{
  if (::system("git --version >/dev/null 2>&1") != 0) {
    SUCCEED("git is not installed");
    return;
  }
  const auto dir = std::filesystem::temp_directory_path() / ("gpurent-gitidx-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "src" / std::string(120, 'n'));
  const std::map<std::string, std::string> env{{"HOME", dir.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  const std::vector<std::string> names = {"a.txt", "src/main.py", "src/" + std::string(120, 'n') + "/deep.txt", "z z", "\xC3\xBC.txt",
                                          "src/main.pyc"};
  for (const auto& n : names) {
    std::ofstream(dir / n) << n;
  }
  REQUIRE(gpurent::testing::run_sh("git init -q --template= . && git add . && git add -N later.txt 2>/dev/null; true", {}, dir, env).status ==
          0);
  std::ofstream(dir / "later.txt") << "x";
  REQUIRE(gpurent::testing::run_sh("git add -N later.txt", {}, dir, env).status == 0);  // intent-to-add: an extended entry (v3)
  for (const char* version : {"3", "4", "2"}) {
    if (std::string(version) == "2") {
      REQUIRE(gpurent::testing::run_sh("git rm -q --cached later.txt && git update-index --index-version 2", {}, dir, env).status == 0);
    } else {
      REQUIRE(gpurent::testing::run_sh(std::string("git update-index --index-version ") + version, {}, dir, env).status == 0);
    }
    const auto listed = gpurent::testing::run_sh("git ls-files -z", {}, dir, env);
    const auto parsed = parse_git_index(slurp(dir / ".git" / "index"));
    INFO("index version " << version);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == split_nul(listed.out));
  }
  // Skip-worktree entries (sparse checkout) are not in the working tree: left out.
  REQUIRE(gpurent::testing::run_sh("git update-index --index-version 3 && git update-index --skip-worktree a.txt", {}, dir, env).status == 0);
  const auto sparse = parse_git_index(slurp(dir / ".git" / "index"));
  REQUIRE(sparse.has_value());
  CHECK(std::find(sparse->begin(), sparse->end(), "a.txt") == sparse->end());
  CHECK(std::find(sparse->begin(), sparse->end(), "src/main.py") != sparse->end());

  // Every cut is an error; damaged bytes never crash it.
  const std::string bytes = slurp(dir / ".git" / "index");
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    CHECK_FALSE(parse_git_index(bytes.substr(0, n)).has_value());
  }
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string damaged = bytes;
    for (int k = 0; k < 3; ++k) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    (void)parse_git_index(damaged);
  }
  CHECK_FALSE(parse_git_index("DIRC\0\0\0\x09\0\0\0\0").has_value());
  CHECK_FALSE(parse_git_index("not an index").has_value());
  std::filesystem::remove_all(dir);
}

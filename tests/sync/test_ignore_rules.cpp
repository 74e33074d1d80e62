// SPDX-License-Identifier: MIT
// The .gitignore rules (sync/ignore_rules.hpp): wildmatch and pattern cases from gitignore(5),
// then the property that matters: on generated trees with nested .gitignore files, the files
// `gpurent push` would send are exactly those `git ls-files -o --exclude-standard` lists.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "fakes/local_shell.hpp"
#include "sync/ignore_rules.hpp"
#include "sync/local_tree.hpp"

using namespace gpurent;

TEST_CASE("wildmatch: *, ?, sets, classes, escapes and ** as git has them", "[sync][ignore]")
{
  CHECK(wildmatch("*.log", "a.log", true));
  CHECK_FALSE(wildmatch("*.log", "a/b.log", true));
  CHECK(wildmatch("*.log", "a/b.log", false));
  CHECK(wildmatch("a?c", "abc", true));
  CHECK_FALSE(wildmatch("a?c", "a/c", true));
  CHECK(wildmatch("[ab]x", "bx", true));
  CHECK_FALSE(wildmatch("[!ab]x", "bx", true));
  CHECK(wildmatch("[^ab]x", "cx", true));
  CHECK(wildmatch("[a-c]", "b", true));
  CHECK(wildmatch("[]]", "]", true));
  CHECK(wildmatch("[a-]", "-", true));
  CHECK(wildmatch("[[:digit:]]x", "7x", true));
  CHECK_FALSE(wildmatch("[[:digit:]]x", "ax", true));
  CHECK_FALSE(wildmatch("[[:nope:]]", "a", true));
  CHECK_FALSE(wildmatch("[/]", "/", true));
  CHECK(wildmatch("\\*", "*", true));
  CHECK_FALSE(wildmatch("\\*", "a", true));
  CHECK(wildmatch("\\!x", "!x", true));
  CHECK_FALSE(wildmatch("a\\", "a", true));
  CHECK_FALSE(wildmatch("[ab", "a", true));
  // ** between slashes or at either end: any number of directories.
  CHECK(wildmatch("**/foo", "foo", true));
  CHECK(wildmatch("**/foo", "a/b/foo", true));
  CHECK(wildmatch("a/**/b", "a/b", true));
  CHECK(wildmatch("a/**/b", "a/x/y/b", true));
  CHECK(wildmatch("a/**", "a/x/y", true));
  CHECK_FALSE(wildmatch("a/**", "a", true));
  CHECK(wildmatch("**", "a/b/c", true));
  // Elsewhere ** is a *.
  CHECK(wildmatch("a**b", "axxb", true));
  CHECK_FALSE(wildmatch("a**b", "a/b", true));
  CHECK(wildmatch("*/b", "a/b", true));
  CHECK_FALSE(wildmatch("*/b", "a/c/b", true));
  // Long inputs stay fast (no exponential backtracking).
  CHECK_FALSE(wildmatch("*a*a*a*a*a*a*a*a*a*a*a*b", std::string(200, 'a'), true));
  std::string deep(100, 'a');
  deep += "/y";
  CHECK_FALSE(wildmatch("**/**/**/**/**/**/x", deep, true));
}

TEST_CASE("parse_ignore_file: comments, trailing spaces, CRLF, negation, directories, anchoring", "[sync][ignore]")
{
  const auto p = parse_ignore_file("\xEF\xBB\xBF# comment\n\n*.log   \nbuild/\r\n!keep.log\n/top\na/b\nsp\\ \n\\#hash\n\\!bang\n", "sub", "sub/.gitignore");
  REQUIRE(p.size() == 8);
  CHECK(p[0].pattern == "*.log");
  CHECK(p[0].basename_only);
  CHECK(p[0].origin == "sub/.gitignore:3");
  CHECK(p[1].pattern == "build");
  CHECK(p[1].dir_only);
  CHECK(p[2].negated);
  CHECK(p[2].pattern == "keep.log");
  CHECK_FALSE(p[3].basename_only);
  CHECK(p[5].pattern == "sp\\ ");
  CHECK(p[6].pattern == "\\#hash");
  CHECK(p[7].pattern == "\\!bang");
  CHECK_FALSE(p[7].negated);
  CHECK(pattern_matches(p[0], "sub/x/y.log", false));
  CHECK(pattern_matches(p[1], "sub/build", true));
  CHECK_FALSE(pattern_matches(p[1], "sub/build", false));
  CHECK(pattern_matches(p[3], "sub/top", false));
  CHECK_FALSE(pattern_matches(p[3], "sub/x/top", false));
  CHECK_FALSE(pattern_matches(p[3], "top", false));  // anchored to the file's directory
  CHECK(pattern_matches(p[4], "sub/a/b", false));
  CHECK(pattern_matches(p[5], "sub/sp ", false));
  CHECK(pattern_matches(p[6], "sub/#hash", false));
  CHECK(pattern_matches(p[7], "sub/!bang", false));
  const auto ex = exclude_pattern("data/");
  CHECK(ex.dir_only);
  CHECK(ex.origin == "--exclude data/");
}

TEST_CASE("IgnoreMatcher: deeper files and .gpurentignore win, --exclude wins over all", "[sync][ignore]")
{
  IgnoreMatcher m;
  m.push_dir(parse_ignore_file("*.bin\nlogs/\n", "", ".gitignore"), parse_ignore_file("!weights.bin\n", "", ".gpurentignore"));
  m.push_dir(parse_ignore_file("!*.bin\nweights.bin\n", "d", "d/.gitignore"), {});
  CHECK(m.ignored("a.bin", false));
  CHECK_FALSE(m.ignored("d/a.bin", false));          // d/.gitignore re-includes
  CHECK_FALSE(m.ignored("d/weights.bin", false));    // .gpurentignore outranks every .gitignore
  CHECK(m.ignored("logs", true));
  CHECK_FALSE(m.ignored("logs", false));
  CHECK(m.decide("a.bin", false)->origin == ".gitignore:1");
  CHECK(m.decide(".git", true, false) == nullptr);
  m.set_excludes({exclude_pattern("d/a.bin")});
  CHECK(m.ignored("d/a.bin", false));
  m.pop_dir();
  CHECK(m.ignored("d/a.bin", false));
}

namespace {

const char* const k_names[] = {"a", "b", "c", "ab", "x.log", "y.txt", "build", "out", ".hidden", "data.csv", "A", "z z", "keep.log"};
const char* const k_patterns[] = {
    "*.log", "build/", "/a", "a/", "b/**", "**/c", "!x.log", "a/*", "[ab]*", "?", "**/build", "a/**/y.txt", "*.csv",
    "!data.csv", "/out/", "!keep.log", "\\!x", "#c", "x.log ", "!*/", "ab", "*/y.txt", "!build/", "/*", "!/a", "[!a]*",
    "a?", "A", "b/", "!b/c", "out", "*.txt", "!a/*.txt", "**/z z", "c/", "!c", "/b/a", "**"};

struct GenTree {
  std::vector<std::string> files;
  std::map<std::string, std::string> ignores;  // directory ("" = root) -> .gitignore text
};

void gen_dir(std::mt19937& rng, const std::string& dir, int depth, GenTree& t)
{
  const int entries = std::uniform_int_distribution<int>(1, 5)(rng);
  std::set<std::string> used;
  for (int i = 0; i < entries; ++i) {
    const std::string name = k_names[rng() % std::size(k_names)];
    if (!used.insert(name).second) {
      continue;
    }
    const std::string path = dir.empty() ? name : dir + "/" + name;
    if (depth < 3 && rng() % 3 == 0) {
      gen_dir(rng, path, depth + 1, t);
    } else {
      t.files.push_back(path);
    }
  }
  if (rng() % 2 == 0) {
    std::string text;
    const int n = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int i = 0; i < n; ++i) {
      text += std::string(k_patterns[rng() % std::size(k_patterns)]) + "\n";
    }
    t.ignores[dir] = text;
  }
}

}  // namespace

TEST_CASE("the files push sends are exactly the ones git lists as not ignored (generated trees)", "[sync][ignore][property]")
{
  if (::system("git --version >/dev/null 2>&1") != 0) {
    SUCCEED("git is not installed");
    return;
  }
  // 200 generated trees side by side in one repository (t0/, t1/, ...: each with its own
  // .gitignore files, none above them), so git runs once.
  const auto root = std::filesystem::temp_directory_path() / ("gpurent-ignore-prop-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto repo = root / "repo";
  std::filesystem::create_directories(repo);
  const std::map<std::string, std::string> env{{"HOME", root.string()},
                                               {"XDG_CONFIG_HOME", (root / "cfg").string()},
                                               {"GIT_CONFIG_NOSYSTEM", "1"}};
  std::mt19937 rng(20261130);
  std::vector<std::string> specs;
  for (int round = 0; round < 200; ++round) {
    const std::string top = "t" + std::to_string(round);
    GenTree t;
    gen_dir(rng, "", 0, t);
    std::string spec;
    for (const auto& f : t.files) {
      std::filesystem::create_directories((repo / top / f).parent_path());
      std::ofstream(repo / top / f) << f;
      spec += f + "\n";
    }
    for (const auto& [dir, text] : t.ignores) {
      std::filesystem::create_directories(repo / top / dir);
      std::ofstream(repo / top / dir / ".gitignore") << text;
      spec += "[" + dir + "/.gitignore]\n" + text;
    }
    specs.push_back(spec);
  }
  const auto git = gpurent::testing::run_sh("git init -q --template= . && git ls-files -o --exclude-standard -z", {}, repo, env);
  REQUIRE(git.status == 0);
  std::map<std::string, std::set<std::string>> expected;  // tree -> files
  std::stringstream ss(git.out);
  for (std::string f; std::getline(ss, f, '\0');) {
    expected[f.substr(0, f.find('/'))].insert(f);
  }
  const auto walked = walk_local_tree(repo, WalkOptions{});
  REQUIRE(walked.has_value());
  std::map<std::string, std::set<std::string>> sent;
  for (const auto& e : walked->entries) {
    if (e.kind == EntryKind::file && !e.path.starts_with(".git/")) {
      sent[e.path.substr(0, e.path.find('/'))].insert(e.path);
    }
  }
  for (int round = 0; round < 200; ++round) {
    const std::string top = "t" + std::to_string(round);
    INFO("tree " << top << ":\n" << specs[static_cast<std::size_t>(round)]);
    CHECK(sent[top] == expected[top]);
  }
  std::filesystem::remove_all(root);
}

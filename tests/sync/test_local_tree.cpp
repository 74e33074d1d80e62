// SPDX-License-Identifier: MIT
// The local tree walk of `gpurent push` (sync/local_tree.hpp) on a real repository: nested
// .gitignore files with negation, .gpurentignore above .gitignore, --exclude above both, files
// git tracks although ignored, .git itself (sent only with --with-git), a subdirectory of a
// repository, special files, and the report of what was left out. The git-specific cases
// (global excludes, nested repositories, the index's extensions) are in test_push_git.cpp.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/local_tree.hpp"

using namespace gpurent;

namespace {

std::set<std::string> files_of(const LocalTree& t, bool with_git = false)
{
  std::set<std::string> out;
  for (const auto& e : t.entries) {
    if (e.kind != EntryKind::directory && (with_git || (e.path != ".git" && !e.path.starts_with(".git/")))) {
      out.insert(e.path);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("walk_local_tree: gitignore rules, overrides, tracked files, .git and the skipped report", "[sync][push][walk]")
{
  const auto root = std::filesystem::temp_directory_path() / ("gpurent-walk-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto repo = root / "repo";
  gpurent::testing::write_file(repo / ".gitignore", "build/\n*.log\n!keep.log\ndata/*\n!data/wanted.csv\n");
  gpurent::testing::write_file(repo / ".gpurentignore", "secrets/\n!x.log\n");
  gpurent::testing::write_file(repo / "sub" / ".gitignore", "!debug.log\n");
  gpurent::testing::write_file(repo / "build" / "a.o", std::string(5000, 'o'));
  gpurent::testing::write_file(repo / "build" / "deep" / "b.o", std::string(7000, 'o'));
  gpurent::testing::write_file(repo / "build" / "tracked.o", "t");
  gpurent::testing::write_file(repo / "x.log", "x");
  gpurent::testing::write_file(repo / "y.log", "y");
  gpurent::testing::write_file(repo / "keep.log", "k");
  gpurent::testing::write_file(repo / "sub" / "debug.log", "d");
  gpurent::testing::write_file(repo / "sub" / "other.log", "o");
  gpurent::testing::write_file(repo / "data" / "big.bin", std::string(20000, 'b'));
  gpurent::testing::write_file(repo / "data" / "wanted.csv", "w");
  gpurent::testing::write_file(repo / "secrets" / "key", "s");
  gpurent::testing::write_file(repo / "src" / "main.py", "print(1)\n");
  gpurent::testing::write_file(repo / "src" / "scratch.tmp", "tmp");
  std::filesystem::create_symlink("src/main.py", repo / "main-link");
  REQUIRE(::mkfifo((repo / "fifo").c_str(), 0600) == 0);
  const std::map<std::string, std::string> env{{"HOME", root.string()}, {"GIT_CONFIG_NOSYSTEM", "1"}};
  // The git gpurent runs reads the same (no global excludes of the machine running the tests).
  ::setenv("HOME", root.c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (root / "config").c_str(), 1);
  ::setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
  REQUIRE(gpurent::testing::run_sh("git init -q --template= . && git add -f build/tracked.o src/main.py", {}, repo, env).status == 0);

  WalkOptions opts;
  opts.excludes = {"src/*.tmp"};
  const auto t = walk_local_tree(repo, opts);
  REQUIRE(t.has_value());
  CHECK(files_of(*t) == std::set<std::string>{".gitignore", ".gpurentignore", "build/tracked.o", "data/wanted.csv", "keep.log",
                                             "main-link", "src/main.py", "sub/.gitignore", "sub/debug.log", "x.log"});
  // .git stays home, its size said; with --with-git it goes along whole (no pattern applies inside it).
  CHECK_FALSE(files_of(*t, true).contains(".git/HEAD"));
  REQUIRE(t->git_dirs.size() == 1);
  CHECK(t->git_dirs[0].path == ".git");
  CHECK(t->git_dirs[0].bytes > 0);
  CHECK_FALSE(t->git_dirs_sent);
  CHECK(t->git);
  CHECK_FALSE(t->git_commit.has_value());  // nothing committed yet
  WalkOptions with_git = opts;
  with_git.with_git = true;
  const auto whole = walk_local_tree(repo, with_git);
  REQUIRE(whole.has_value());
  CHECK(files_of(*whole, true).contains(".git/index"));
  CHECK(files_of(*whole, true).contains(".git/HEAD"));
  CHECK(whole->git_dirs_sent);
  // Directories come before what they hold.
  std::set<std::string> seen_dirs;
  for (const auto& e : t->entries) {
    const auto slash = e.path.rfind('/');
    if (slash != std::string::npos) {
      CHECK(seen_dirs.contains(e.path.substr(0, slash)));
    }
    if (e.kind == EntryKind::directory) {
      seen_dirs.insert(e.path);
    }
  }
  // What was left out, and why; build/ is entered only for its tracked file.
  std::map<std::string, SkippedPath> skipped;
  for (const auto& s : t->skipped) {
    skipped[s.path] = s;
  }
  CHECK(skipped.at("build/a.o").reason == ".gitignore:1: build/");
  CHECK(skipped.at("build/deep").directory);
  CHECK(skipped.at("build/deep").bytes == 7000);
  CHECK(skipped.at("data/big.bin").bytes == 20000);
  CHECK(skipped.at("y.log").reason == ".gitignore:2: *.log");
  CHECK(skipped.at("sub/other.log").reason == ".gitignore:2: *.log");
  CHECK(skipped.at("secrets").reason == ".gpurentignore:1: secrets/");
  CHECK(skipped.at("src/scratch.tmp").reason == "--exclude src/*.tmp: src/*.tmp");
  CHECK(skipped.at("fifo").reason == "not a regular file, directory or symbolic link");
  CHECK(t->skipped_files == 8);
  CHECK(t->skipped_bytes == 5000 + 7000 + 20000 + 1 + 1 + 1 + 3);
  const auto largest = largest_skipped(*t, 2);
  REQUIRE(largest.size() == 2);
  CHECK(largest[0].path == "data/big.bin");
  CHECK(largest[1].path == "build/deep");

  // --exclude and .gpurentignore can leave out .git itself, even with --with-git.
  WalkOptions no_git;
  no_git.with_git = true;
  no_git.excludes = {".git"};
  CHECK_FALSE(files_of(*walk_local_tree(repo, no_git), true).contains(".git/HEAD"));

  // A subdirectory of the repository: the .gitignore files above it still apply.
  const auto sub = walk_local_tree(repo / "sub", WalkOptions{});
  REQUIRE(sub.has_value());
  CHECK(files_of(*sub) == std::set<std::string>{".gitignore", "debug.log"});

  // The measuring budget makes sizes lower bounds.
  WalkOptions tight;
  tight.measure_limit = 1;
  const auto rough = walk_local_tree(repo, tight);
  REQUIRE(rough.has_value());
  bool inexact = false;
  for (const auto& s : rough->skipped) {
    inexact = inexact || !s.exact;
  }
  CHECK(inexact);

  CHECK(walk_local_tree(repo / "x.log", WalkOptions{}).error().code == Errc::usage);
  std::filesystem::remove_all(root);
}

TEST_CASE("walk_local_tree: gpurent's own state and backups directories are never pushed", "[sync][push][walk]")
{
  const auto root = std::filesystem::temp_directory_path() / ("gpurent-walk-never-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto tree = root / "proj";
  gpurent::testing::write_file(tree / "train.py", "print(1)\n");
  // GPURENT_STATE_DIR and XDG_DATA_HOME pointed into the project.
  gpurent::testing::write_file(tree / ".state" / "state.db", std::string(4096, 's'));
  gpurent::testing::write_file(tree / "data" / "gpurent" / "backups" / "box" / "ckpt.pt", std::string(100, 'b'));
  WalkOptions o;
  o.never = {tree / ".state", root / "proj" / "data" / "gpurent" / "backups"};
  const auto t = walk_local_tree(tree, o);
  REQUIRE(t.has_value());
  CHECK(files_of(*t) == std::set<std::string>{"train.py"});
  std::set<std::string> said;
  for (const auto& s : t->skipped) {
    if (s.reason.find("gpurent's own state or backups") != std::string::npos) {
      said.insert(s.path);
    }
  }
  CHECK(said == std::set<std::string>{".state", "data/gpurent/backups"});
  // A path that does not exist is no rule at all.
  o.never = {root / "nowhere"};
  const auto all = walk_local_tree(tree, o);
  REQUIRE(all.has_value());
  CHECK(files_of(*all).size() == 3);
  std::filesystem::remove_all(root);
}

TEST_CASE("walk_local_tree: a directory gpurent backed up into is never pushed back", "[sync][push][walk]")
{
  const auto root = std::filesystem::temp_directory_path() / ("gpurent-walk-backup-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto tree = root / "proj";
  gpurent::testing::write_file(tree / "train.py", "print(1)\n");
  // `run --then backup:checkpoints` wrote ./gpurent-backups/box/ inside the project.
  gpurent::testing::write_file(tree / "gpurent-backups" / "box" / ".gpurent-manifest.json", "{}");
  gpurent::testing::write_file(tree / "gpurent-backups" / "box" / "step-100.pt", std::string(3000, 'w'));
  ::setenv("HOME", root.c_str(), 1);
  ::setenv("XDG_CONFIG_HOME", (root / "config").c_str(), 1);
  for (const bool git : {false, true}) {
    if (git) {
      REQUIRE(gpurent::testing::run_sh("git init -q --template= .", {}, tree, {{"HOME", root.string()}}).status == 0);
    }
    const auto t = walk_local_tree(tree, WalkOptions{});
    REQUIRE(t.has_value());
    CHECK(files_of(*t) == std::set<std::string>{"train.py"});
    bool said = false;
    for (const auto& s : t->skipped) {
      said = said || (s.path == "gpurent-backups/box" && s.reason.find("gpurent backup") != std::string::npos && s.bytes == 3002);
    }
    CHECK(said);
  }
  std::filesystem::remove_all(root);
}

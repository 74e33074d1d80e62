// SPDX-License-Identifier: MIT
// `push --delete` (sync/push_delete.hpp): what is deleted and what is always kept, the names
// as the remote command receives them, and the command itself run by the local /bin/sh.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <random>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/push_delete.hpp"

using namespace gpurent;
using namespace std::string_literals;

namespace {

LocalEntry local_file(std::string p)
{
  return LocalEntry{std::move(p), EntryKind::file, 1, 0, 0644, {}};
}
LocalEntry local_dir(std::string p)
{
  return LocalEntry{std::move(p), EntryKind::directory, 0, 0, 0755, {}};
}
RemoteEntry remote(std::string p, EntryKind k = EntryKind::file)
{
  RemoteEntry r;
  r.path = std::move(p);
  r.kind = k;
  return r;
}
SkippedPath skipped(std::string p, bool dir)
{
  SkippedPath s;
  s.path = std::move(p);
  s.directory = dir;
  return s;
}

}  // namespace

TEST_CASE("plan_push_deletions: what the local tree lost, top-most only", "[sync][push][delete]")
{
  const std::vector<LocalEntry> local = {local_dir("src"), local_file("src/a.py"), local_file("README.md")};
  const std::vector<RemoteEntry> there = {
      remote("src", EntryKind::directory), remote("src/a.py"), remote("src/old.py"), remote("README.md"),
      remote("gone", EntryKind::directory), remote("gone/x"), remote("gone/deeper", EntryKind::directory),
      remote("gone/deeper/y"), remote("secret.env"), remote("link", EntryKind::symlink)};
  CHECK(plan_push_deletions(local, {}, there) == std::vector<std::string>{"gone", "link", "secret.env", "src/old.py"});
  CHECK(plan_push_deletions(local, {}, {}).empty());
  CHECK(plan_push_deletions({}, {}, {remote("only")}) == std::vector<std::string>{"only"});
}

TEST_CASE("plan_push_deletions: .git, bookkeeping, left-out paths and their directories are kept", "[sync][push][delete]")
{
  const std::vector<LocalEntry> local = {local_file("keep/deep/file.txt")};
  const std::vector<SkippedPath> left_out = {skipped("build", true), skipped("logs/run1.txt", false),
                                             skipped("data/cache", true)};
  const std::vector<RemoteEntry> there = {
      remote(".git", EntryKind::directory), remote(".git/HEAD"), remote("sub/.git", EntryKind::directory), remote("sub/.git/x"),
      remote("big.bin.gpurent-partial"), remote("big.bin.gpurent-partial.ranges"),
      remote("build", EntryKind::directory), remote("build/model.o"),
      remote("logs", EntryKind::directory), remote("logs/run1.txt"), remote("logs/run2.txt"),
      remote("data", EntryKind::directory), remote("data/cache", EntryKind::directory), remote("data/cache/blob"),
      remote("keep", EntryKind::directory), remote("keep/deep", EntryKind::directory), remote("keep/deep/file.txt"),
      remote("keep/deep/stale.txt")};
  // `sub` holds a .git: the directory stays (only its other contents could go: none here).
  CHECK(plan_push_deletions(local, left_out, there) == std::vector<std::string>{"keep/deep/stale.txt", "logs/run2.txt"});
}

TEST_CASE("plan_push_deletions: never a path that is not inside the directory", "[sync][push][delete]")
{
  const std::vector<RemoteEntry> there = {remote("../outside"), remote("/etc/passwd"), remote("a/../../b"), remote("./x"),
                                          remote(""), remote("ok"), remote("a//b"), remote("dir/")};
  CHECK(plan_push_deletions({}, {}, there) == std::vector<std::string>{"ok"});
}

TEST_CASE("push_delete_input: './' before each name, NUL after, and names outside refused", "[sync][push][delete]")
{
  CHECK(push_delete_input({"-rf", "a b/c", "x\ny"}) == "./-rf\0./a b/c\0./x\ny\0"s);
  CHECK(push_delete_input({}) == ""s);
  for (const char* bad : {"../x", "/abs", "", "a/./b", "a/..", "a//b"}) {
    CHECK(push_delete_input({"fine", bad}).error().code == Errc::invalid_input);
  }
}

TEST_CASE("parse_push_delete: the status, the missing directory, garbage", "[sync][push][delete]")
{
  CHECK(parse_push_delete("gpurent-delete\0"s "0\0"s) == 0);
  CHECK(parse_push_delete("gpurent-delete\0"s "1\0"s) == 1);
  CHECK(parse_push_delete("gpurent-agent-error\0cd\0"s).error().code == Errc::unavailable);
  CHECK(parse_push_delete("").error().code == Errc::invalid_input);
  CHECK(parse_push_delete("gpurent-delete\0x\0"s).error().code == Errc::invalid_input);
  CHECK(parse_push_delete("gpurent-delete\0"s "0"s).error().code == Errc::invalid_input);
}

TEST_CASE("push_delete_command: removes exactly the names given, under the directory, run by /bin/sh", "[sync][push][delete]")
{
  const auto root = std::filesystem::temp_directory_path() / ("gpurent-pushdelete-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const auto dir = root / "proj";
  using gpurent::testing::write_file;
  write_file(dir / "-rf", "dash");
  write_file(dir / "a b" / "c", "space");
  write_file(dir / "gone" / "deep" / "x", "x");
  write_file(dir / "kept", "kept");
  write_file(root / "outside", "outside");
  std::filesystem::create_directory_symlink(root, dir / "link-out");
  const auto input = push_delete_input({"-rf", "a b/c", "gone", "link-out"});
  REQUIRE(input);
  const auto run = gpurent::testing::run_sh(push_delete_command(dir.string()), *input);
  CHECK(parse_push_delete(run.out) == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "-rf"));
  CHECK_FALSE(std::filesystem::exists(dir / "a b" / "c"));
  CHECK(std::filesystem::is_directory(dir / "a b"));
  CHECK_FALSE(std::filesystem::exists(dir / "gone"));
  CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dir / "link-out")));
  CHECK(std::filesystem::exists(dir / "kept"));
  CHECK(std::filesystem::exists(root / "outside"));  // the link went, not what it pointed at
  const auto missing = gpurent::testing::run_sh(push_delete_command((root / "nope").string()), *input);
  CHECK(parse_push_delete(missing.out).error().code == Errc::unavailable);
  std::filesystem::remove_all(root);
}

TEST_CASE("parse_push_delete and push_delete_input over random input: a value or an error, never more", "[sync][push][delete][property]")
{
  std::mt19937 rng(45);
  const std::string alphabet = "gpurent-dl\0" "0123456789/.a";
  for (int round = 0; round < 5000; ++round) {
    std::string s;
    const auto len = rng() % 24;
    for (std::uint32_t i = 0; i < len; ++i) {
      s.push_back(alphabet[rng() % alphabet.size()]);
    }
    const auto status = parse_push_delete(s);
    if (status) {
      CHECK(s.starts_with("gpurent-delete\0"s));
    }
    // A name that comes through is inside the directory: no '/' at its ends, no "." or "..".
    const auto input = push_delete_input({s});
    if (input) {
      CHECK(*input == "./" + s + std::string(1, '\0'));
      CHECK_FALSE(s.empty());
      CHECK(s.front() != '/');
      CHECK(s.find("/../") == std::string::npos);
      CHECK_FALSE(s.starts_with("../"));
      CHECK(s != "..");
      CHECK(s.find('\0') == std::string::npos);
    }
  }
}

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
#include "sync/push_record.hpp"

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

// A record that names every remote path: the rule as if gpurent had pushed all of them.
PathSet all_of(const std::vector<RemoteEntry>& there)
{
  PathSet out;
  for (const auto& r : there) {
    out.insert(r.path);
  }
  return out;
}

std::vector<std::string> doomed(const std::vector<LocalEntry>& local, const std::vector<SkippedPath>& left_out,
                                const std::vector<RemoteEntry>& there)
{
  return plan_push_deletions(local, left_out, there, all_of(there)).doomed;
}

}  // namespace

TEST_CASE("plan_push_deletions: what the local tree lost, top-most only", "[sync][push][delete]")
{
  const std::vector<LocalEntry> local = {local_dir("src"), local_file("src/a.py"), local_file("README.md")};
  const std::vector<RemoteEntry> there = {
      remote("src", EntryKind::directory), remote("src/a.py"), remote("src/old.py"), remote("README.md"),
      remote("gone", EntryKind::directory), remote("gone/x"), remote("gone/deeper", EntryKind::directory),
      remote("gone/deeper/y"), remote("secret.env"), remote("link", EntryKind::symlink)};
  CHECK(doomed(local, {}, there) == std::vector<std::string>{"gone", "link", "secret.env", "src/old.py"});
  CHECK(doomed(local, {}, {}).empty());
  CHECK(doomed({}, {}, {remote("only")}) == std::vector<std::string>{"only"});
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
  CHECK(doomed(local, left_out, there) == std::vector<std::string>{"keep/deep/stale.txt", "logs/run2.txt"});
}

TEST_CASE("plan_push_deletions: never a path that is not inside the directory", "[sync][push][delete]")
{
  const std::vector<RemoteEntry> there = {remote("../outside"), remote("/etc/passwd"), remote("a/../../b"), remote("./x"),
                                          remote(""), remote("ok"), remote("a//b"), remote("dir/")};
  CHECK(doomed({}, {}, there) == std::vector<std::string>{"ok"});
}

TEST_CASE("plan_push_deletions: only what an earlier push sent, job outputs are kept and the directories holding them",
          "[sync][push][delete][record]")
{
  const std::vector<LocalEntry> local = {local_dir("src"), local_file("src/a.py")};
  const std::vector<RemoteEntry> there = {
      remote("src", EntryKind::directory), remote("src/a.py"), remote("src/old.py"),   // old.py: pushed, deleted locally
      remote("src/job.log"),                                                            // written by the job
      remote("ckpt", EntryKind::directory), remote("ckpt/step1.pt"), remote("ckpt/step2.pt"),  // a job's directory
      remote("data", EntryKind::directory), remote("data/in.csv"), remote("data/out.csv"),     // pushed dir, job file inside
      remote("gone", EntryKind::directory), remote("gone/x")};                          // pushed, deleted locally
  const PathSet pushed = {"src", "src/a.py", "src/old.py", "data", "data/in.csv", "gone", "gone/x", "never/there"};
  const auto plan = plan_push_deletions(local, {}, there, pushed);
  CHECK(plan.recorded);
  CHECK(plan.doomed == std::vector<std::string>{"data/in.csv", "gone", "src/old.py"});
  CHECK(plan.never_pushed == std::vector<std::string>{"ckpt", "data/out.csv", "src/job.log"});

  // No record: nothing is deleted, everything not local is reported as kept.
  const auto first = plan_push_deletions(local, {}, there, std::nullopt);
  CHECK_FALSE(first.recorded);
  CHECK(first.doomed.empty());
  CHECK(first.never_pushed == std::vector<std::string>{"ckpt", "data", "gone", "src/job.log", "src/old.py"});
  // An empty record is a record: still nothing of the server's is gpurent's.
  CHECK(plan_push_deletions(local, {}, there, PathSet{}).doomed.empty());
}

TEST_CASE("plan_push_deletions over random trees: never a path that was not pushed, local, or above a kept one",
          "[sync][push][delete][record][property]")
{
  std::mt19937 rng(4545);
  const std::vector<std::string> names = {"a", "b", "c", ".git", "x.gpurent-partial"};
  for (int round = 0; round < 400; ++round) {
    // Random remote tree up to three levels, each path with its directories.
    PathSet all;
    const auto n = 1 + rng() % 12;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string p;
      const auto depth = 1 + rng() % 3;
      for (std::uint32_t d = 0; d < depth; ++d) {
        p += (d ? "/" : "") + names[rng() % names.size()];
        all.insert(p);
      }
    }
    std::vector<RemoteEntry> there;
    std::vector<LocalEntry> local;
    PathSet pushed;
    PathSet locals;
    for (const auto& p : all) {
      there.push_back(remote(p));
      if (rng() % 3 == 0) {
        pushed.insert(p);
      }
      if (rng() % 4 == 0) {
        local.push_back(local_file(p));
        locals.insert(p);
      }
    }
    const auto plan = plan_push_deletions(local, {}, there, pushed);
    for (const auto& d : plan.doomed) {
      CHECK(pushed.contains(d));
      CHECK_FALSE(locals.contains(d));
      CHECK(d.find(".git") == std::string::npos);
      // Everything below a doomed path is pushed and not local: rm -rf takes only gpurent's.
      for (const auto& p : all) {
        if (p.starts_with(d + "/")) {
          CHECK(pushed.contains(p));
          CHECK_FALSE(locals.contains(p));
        }
      }
    }
    for (const auto& k : plan.never_pushed) {
      CHECK_FALSE(pushed.contains(k));
      CHECK_FALSE(locals.contains(k));
    }
    CHECK(plan_push_deletions(local, {}, there, std::nullopt).doomed.empty());
  }
}

TEST_CASE("push record: written and read back, another server or directory is not this record", "[sync][push][record]")
{
  const PathSet paths = {"a", "a/b c", "x\ny", "-rf", "dir/.hidden"};
  const auto text = write_push_record("server 7 gpu1", "~/gpurent/proj", paths);
  REQUIRE(text);
  CHECK(read_push_record(*text, "server 7 gpu1", "~/gpurent/proj") == paths);
  CHECK(read_push_record(*text, "server 8 gpu1", "~/gpurent/proj").error().code == Errc::not_found);
  CHECK(read_push_record(*text, "server 7 gpu1", "~/gpurent/other").error().code == Errc::not_found);
  const auto empty = write_push_record("k", "d", {});
  REQUIRE(empty);
  CHECK(read_push_record(*empty, "k", "d") == PathSet{});
  CHECK(push_record_file_name("server 7 gpu1", "~/gpurent/proj").size() == 5 + 16);
  CHECK(push_record_file_name("server 7 gpu1", "~/gpurent/proj") != push_record_file_name("server 7 gpu1", "~/gpurent/pro"));
  // Never a path outside the directory, nor a NUL in the key.
  for (const char* bad : {"../x", "/abs", "", "a/./b", "a/..", "a//b", "dir/"}) {
    CHECK(write_push_record("k", "d", PathSet{"ok", bad}).error().code == Errc::invalid_input);
  }
  CHECK(write_push_record("k\0"s, "d", {}).error().code == Errc::invalid_input);
}

TEST_CASE("push record: damaged text is an error, never a partial record", "[sync][push][record]")
{
  const auto text = write_push_record("k", "d", PathSet{"a", "b", "c/d"});
  REQUIRE(text);
  // Every truncation.
  for (std::size_t n = 0; n < text->size(); ++n) {
    CHECK(read_push_record(text->substr(0, n), "k", "d").error().code == Errc::invalid_input);
  }
  CHECK_FALSE(read_push_record(*text + "x", "k", "d"));
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "2\0k\0d\0" "0\0end\0"s, "k", "d"));      // unknown version
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "2\0b\0a\0end\0"s, "k", "d"));  // unsorted
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "2\0a\0a\0end\0"s, "k", "d"));  // repeated
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "1\0../x\0end\0"s, "k", "d"));   // outside
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "-1\0end\0"s, "k", "d"));
  CHECK_FALSE(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "99999999999\0end\0"s, "k", "d"));
  CHECK(read_push_record("gpurent-push-record\0" "1\0k\0d\0" "1\0a\0end\0"s, "k", "d") == PathSet{"a"});
}

TEST_CASE("push record over random bytes and flipped records: a record of safe paths or an error", "[sync][push][record][property]")
{
  std::mt19937 rng(46);
  const auto good = write_push_record("k", "d", PathSet{"a", "a/b", "c"});
  REQUIRE(good);
  const std::string alphabet = std::string("gpurent-cord\0" "0123/.abk", 22);
  for (int round = 0; round < 5000; ++round) {
    std::string s = *good;
    if (round % 2 == 0) {
      const auto flips = 1 + rng() % 3;
      for (std::uint32_t i = 0; i < flips; ++i) {
        s[rng() % s.size()] = alphabet[rng() % alphabet.size()];
      }
    } else {
      s.clear();
      const auto len = rng() % 48;
      for (std::uint32_t i = 0; i < len; ++i) {
        s.push_back(alphabet[rng() % alphabet.size()]);
      }
    }
    const auto read = read_push_record(s, "k", "d");
    if (read) {
      for (const auto& p : *read) {
        CHECK_FALSE(p.empty());
        CHECK(p.front() != '/');
        CHECK(p.back() != '/');
        CHECK(p.find("//") == std::string::npos);
        CHECK(p != "..");
        CHECK_FALSE(p.starts_with("../"));
        CHECK(p.find("/../") == std::string::npos);
        CHECK(p.find('\0') == std::string::npos);
      }
      // What reads back writes back the same.
      CHECK(write_push_record("k", "d", *read) == s);
    }
  }
}

TEST_CASE("next_push_record: the local entries, plus what was pushed before and is still there, less what was deleted",
          "[sync][push][record]")
{
  const std::vector<LocalEntry> local = {local_dir("src"), local_file("src/a.py")};
  const std::vector<RemoteEntry> there = {remote("src", EntryKind::directory), remote("src/a.py"), remote("src/old.py"),
                                          remote("gone", EntryKind::directory), remote("gone/x"), remote("out.log")};
  const PathSet before = {"src", "src/old.py", "gone", "gone/x", "vanished"};
  CHECK(next_push_record(local, there, before, {}) == PathSet{"gone", "gone/x", "src", "src/a.py", "src/old.py"});
  CHECK(next_push_record(local, there, before, {"gone", "src/old.py"}) == PathSet{"src", "src/a.py"});
  CHECK(next_push_record(local, there, std::nullopt, {}) == PathSet{"src", "src/a.py"});
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

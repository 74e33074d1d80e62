// SPDX-License-Identifier: MIT
// What `down --destroy` backs up (cli/destroy_backup_plan.hpp): every directory push/run used,
// the workspace and --path, once each; the refusals; the resume command, quoted for the shell.
#include <algorithm>
#include <catch2/catch.hpp>

#include <random>

#include "cli/destroy_backup_plan.hpp"
#include "fakes/local_shell.hpp"

using namespace gpurent;

namespace {

RemotePathSize has(std::uint64_t files, std::uint64_t bytes = 100)
{
  return RemotePathSize{true, files == 0 ? 0 : bytes, files};
}
const RemotePathSize k_missing{false, 0, 0};

}  // namespace

TEST_CASE("destroy backup: push dirs, job dirs, workspace and --path, each once with every origin", "[cli][destroy_backup]")
{
  const auto s = gather_backup_sources({"~/gpurent/train", "/data/run/"}, {"~/gpurent/train", "gpurent/eval"}, "/workspace",
                                       {"/data/run", "bigckpt"});
  REQUIRE(s.size() == 5);
  CHECK(s[0].path == "~/gpurent/train");
  CHECK(s[0].origins == std::vector<BackupOrigin>{BackupOrigin::push, BackupOrigin::job});
  CHECK(s[1].path == "/data/run/");
  CHECK(s[1].origins == std::vector<BackupOrigin>{BackupOrigin::push, BackupOrigin::given});
  CHECK(s[2].path == "gpurent/eval");
  CHECK(s[3].path == "/workspace");
  CHECK(s[3].origins == std::vector<BackupOrigin>{BackupOrigin::workspace});
  CHECK_FALSE(s[3].users());
  CHECK(s[4].path == "bigckpt");
  for (const auto& x : s) {
    CHECK_FALSE(x.inside);
  }
  // "~" as the workspace (no volume path of its own: the home directory) only when nothing else is known.
  CHECK(gather_backup_sources({"~/gpurent/a"}, {}, "~", {}).size() == 1);
  CHECK(gather_backup_sources({}, {}, "~", {"/ckpt"}).size() == 1);
  const auto home = gather_backup_sources({}, {}, "~", {});
  REQUIRE(home.size() == 1);
  CHECK(home[0].path == "~");
  CHECK(home[0].origins == std::vector<BackupOrigin>{BackupOrigin::workspace});
  CHECK(gather_backup_sources({}, {}, "", {}).size() == 1);  // none recorded: the same
}

TEST_CASE("destroy backup: a path below another is copied with it, and still named", "[cli][destroy_backup]")
{
  auto s = gather_backup_sources({"/workspace/src", "~/gpurent/a"}, {}, "/workspace", {"~"});
  REQUIRE(s.size() == 4);
  CHECK(s[0].inside == std::optional<std::size_t>{2});  // /workspace/src inside /workspace
  CHECK(s[1].inside == std::optional<std::size_t>{3});  // ~/gpurent/a inside ~
  CHECK_FALSE(s[2].inside);
  CHECK_FALSE(s[3].inside);
  for (auto& x : s) {
    x.size = has(1);
  }
  CHECK(paths_to_copy(s) == std::vector<std::string>{"/workspace", "~"});
  CHECK(source_line(s[0]) == "/workspace/src (push): 100 B in 1 file");
  // "/workspace2" is not inside "/workspace".
  const auto t = gather_backup_sources({"/workspace2"}, {}, "/workspace", {});
  CHECK_FALSE(t[0].inside);
}

TEST_CASE("destroy backup: what is refused before anything is copied", "[cli][destroy_backup]")
{
  SECTION("the jobs' directories are all missing or empty: the workspace's README is not a backup of them")
  {
    auto s = gather_backup_sources({"~/gpurent/train"}, {"~/gpurent/train2"}, "/workspace", {});
    s[0].size = k_missing;
    s[1].size = has(0);
    s[2].size = has(1);
    const auto why = backup_refusal(s);
    REQUIRE(why);
    CHECK(why->find("nothing your jobs wrote") != std::string::npos);
    CHECK(why->find("~/gpurent/train (NOT on the server)") != std::string::npos);
    CHECK(why->find("~/gpurent/train2 (no files)") != std::string::npos);
    CHECK(why->find("/workspace (100 B in 1 file)") != std::string::npos);
    // One of them holds files: backed up, the missing one named and skipped.
    s[1].size = has(3);
    CHECK_FALSE(backup_refusal(s));
    CHECK(paths_to_copy(s) == std::vector<std::string>{"~/gpurent/train2", "/workspace"});
    CHECK(source_line(s[0]) == "~/gpurent/train (push): NOT on the server");
  }
  SECTION("a --path with files counts as the user's")
  {
    auto s = gather_backup_sources({"~/gpurent/train"}, {}, "/workspace", {"/ckpt"});
    s[0].size = k_missing;
    s[1].size = has(1);
    s[2].size = has(2);
    CHECK_FALSE(backup_refusal(s));
  }
  SECTION("a --path that is not on the server")
  {
    auto s = gather_backup_sources({}, {}, "/workspace", {"bigckpt"});
    s[0].size = has(1);
    s[1].size = k_missing;
    const auto why = backup_refusal(s);
    REQUIRE(why);
    CHECK(why->find("--path bigckpt is not on the server") != std::string::npos);
  }
  SECTION("no jobs recorded: the workspace alone, unless it holds nothing")
  {
    auto s = gather_backup_sources({}, {}, "/workspace", {});
    s[0].size = has(4);
    CHECK_FALSE(backup_refusal(s));
    s[0].size = k_missing;
    REQUIRE(backup_refusal(s));
    CHECK(backup_refusal(s)->find("no files to back up") != std::string::npos);
    CHECK(backup_refusal({})->find("nothing to back up") != std::string::npos);
  }
  SECTION("two paths that would land in the same place")
  {
    auto s = gather_backup_sources({"~/gpurent/train"}, {}, "/workspace/train", {});
    s[0].size = has(1);
    s[1].size = has(1);
    const auto why = backup_refusal(s);
    REQUIRE(why);
    CHECK(why->find("both be backed up as train/") != std::string::npos);
  }
}

TEST_CASE("destroy backup: the resume command repeats every flag, quoted for the shell", "[cli][destroy_backup]")
{
  DownFlags f;
  f.name = "train5";
  f.mode = "destroy";
  f.paths = {"bigckpt", "/data/my ckpt", "it's"};
  f.to = "/home/me/bk $HOME";
  f.ssh.identity = "/keys/id";
  f.ssh.known_hosts = "/k h";
  f.yes = true;
  CHECK(down_command_line(f) ==
        "gpurent down train5 --destroy --path bigckpt --path '/data/my ckpt' --path 'it'\\''s' --to '/home/me/bk $HOME' "
        "--identity /keys/id --known-hosts '/k h' --yes");
  f = DownFlags{};
  f.name = "a";
  f.mode = "destroy";
  f.no_backup = true;
  f.json = true;
  f.verbose = true;
  f.ssh.host = "root@10.0.0.1:2222";
  f.ssh.accept_new_host_key = true;
  CHECK(down_command_line(f) == "gpurent down a --destroy --no-backup --host root@10.0.0.1:2222 --accept-new-host-key --json --verbose");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("~/x") == "'~/x'");  // the server's home, not the local one
}

TEST_CASE("destroy backup: property: a quoted word reads back as itself in /bin/sh", "[cli][destroy_backup]")
{
  std::mt19937_64 rng(45);
  const std::string alphabet = std::string("aZ09 _-./~'\"$`\\!*?[]{}();&|<>#%@=:,\t\n") + "\xc3\xa9";
  for (int round = 0; round < 40; ++round) {
    std::vector<std::string> words;
    std::string script = "printf '%s\\0'";
    for (int w = 0; w < 4; ++w) {
      std::string word(rng() % 8, 'x');
      for (auto& c : word) {
        c = alphabet[rng() % alphabet.size()];
      }
      words.push_back(word);
      script += " " + shell_word(word);
    }
    const auto run = gpurent::testing::run_sh(script);
    REQUIRE(run.status == 0);
    std::string want;
    for (const auto& w : words) {
      want += w + '\0';
    }
    CHECK(run.out == want);
  }
}

TEST_CASE("destroy backup: a job's absolute directory under the server's home is the push's ~/ path", "[cli][destroy_backup]")
{
  using gpurent::home_relative;
  CHECK(home_relative("/root/gpurent/proj", "/root") == "~/gpurent/proj");
  CHECK(home_relative("/root/gpurent/proj", "/root/") == "~/gpurent/proj");
  CHECK(home_relative("/root", "/root") == "~");
  CHECK(home_relative("/rootfs/x", "/root") == "/rootfs/x");  // not below it: a name that only begins alike
  CHECK(home_relative("/workspace/ckpt", "/root") == "/workspace/ckpt");
  CHECK(home_relative("~/gpurent/proj", "/root") == "~/gpurent/proj");
  CHECK(home_relative("/x", "/") == "/x");  // a home of "/" names nothing
  CHECK(home_relative("/root/x", "") == "/root/x");
  // Gathered together, the two spellings are one source with both origins.
  const auto sources = gpurent::gather_backup_sources({home_relative("~/gpurent/proj", "/home/u")},
                                                      {home_relative("/home/u/gpurent/proj", "/home/u")}, "/workspace", {});
  const auto proj = std::count_if(sources.begin(), sources.end(), [](const auto& s) { return s.path == "~/gpurent/proj"; });
  CHECK(proj == 1);
}

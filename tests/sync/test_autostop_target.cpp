// SPDX-License-Identifier: MIT
// The autostop backup target: `--backup-to` in both spellings (and anything else refused with a
// usage error, property-tested on random text), the file names of one arming, and the check
// gpurent runs at the target once the server is stopped, run here with the local /bin/sh on real
// files: a release needs the newest tar of this arming to still have the SHA-256 the server
// verified.
#include <catch2/catch.hpp>

#include <random>

#include "sync/autostop_release.hpp"
#include "sync/autostop_target.hpp"
#include "sync/backup_target.hpp"
#include "tests/fakes/local_shell.hpp"
#include "tests/fakes/temp_dir.hpp"

using namespace gpurent;

TEST_CASE("backup target: USER@HOST:PATH and ssh://USER@HOST:PORT/PATH", "[autostop]")
{
  auto t = parse_backup_target("me@203.0.113.9:ckpt");
  REQUIRE(t);
  CHECK(t->user == "me");
  CHECK(t->host == "203.0.113.9");
  CHECK(t->port == 0);
  CHECK(t->path == "ckpt");
  CHECK(t->ssh_destination() == "me@203.0.113.9");
  CHECK(t->ssh_target() == SshTarget{"me", "203.0.113.9", 22});

  t = parse_backup_target("ssh://backup@store.example.com:2222/srv/ckpt");
  REQUIRE(t);
  CHECK(t->host == "store.example.com");
  CHECK(t->port == 2222);
  CHECK(t->path == "/srv/ckpt");
  CHECK(t->ssh_destination() == "ssh://backup@store.example.com:2222");
  CHECK(t->ssh_target() == SshTarget{"backup", "store.example.com", 2222});

  CHECK(parse_backup_target("ssh://me@h/~/runs/a")->path == "runs/a");
  CHECK(parse_backup_target("me@h:~/runs")->path == "runs");
  CHECK(parse_backup_target("me@h:~")->path == ".");
  CHECK(parse_backup_target("ssh://me@h:22/~")->path == ".");
  t = parse_backup_target("me@[2001:db8::1]:/data");
  REQUIRE(t);
  CHECK(t->host == "2001:db8::1");
  CHECK(t->path == "/data");
  t = parse_backup_target("ssh://me@[::1]:2200/data");
  REQUIRE(t);
  CHECK(t->ssh_destination() == "ssh://me@[::1]:2200");
}

TEST_CASE("backup target: what ssh would misread or cannot reach is a usage error", "[autostop]")
{
  for (const char* bad : {"", "host:path", "me@host", "me@host:", "-oProxyCommand=x@h:p", "me@-oProxyCommand=x:p",
                          "ssh://me@host", "ssh://me@host:0/p", "ssh://me@host:65536/p", "ssh://me@host:22x/p",
                          "me@ho st:p", "me@h;rm:p", "me@[zz]:p", "me@[::1:p", "me@h:pa\nth", "ssh://@h/p", "me@h:2222/p/x:y\x01"}) {
    INFO(bad);
    const auto t = parse_backup_target(bad);
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::usage);
    CHECK(t.error().message.find("USER@HOST:PATH") != std::string::npos);
    // One "; " only, before the hint: the JSON error splits the message there.
    CHECK(t.error().message.find("; ") == t.error().message.find("; write it as"));
  }
}

TEST_CASE("backup target on random text: never more than a usage error, what it accepts is plain", "[autostop][property]")
{
  std::mt19937 rng(20261201);
  const std::string alphabet = "ab-_.:@/[]~ 0129\n\x01;'$";
  for (int i = 0; i < 20000; ++i) {
    std::string text = (i % 3 == 0 ? "ssh://" : "") + std::string();
    const auto n = rng() % 24;
    for (std::uint32_t k = 0; k < n; ++k) {
      text += alphabet[rng() % alphabet.size()];
    }
    const auto t = parse_backup_target(text);
    if (!t) {
      REQUIRE(t.error().code == Errc::usage);
      continue;
    }
    INFO(text);
    REQUIRE(!t->user.empty());
    REQUIRE(t->user.front() != '-');
    REQUIRE(t->host.front() != '-');
    REQUIRE(t->user.find_first_of(" ;'$\n\x01@:/") == std::string::npos);
    REQUIRE(t->host.find_first_of(" ;'$\n\x01@/[]") == std::string::npos);
    REQUIRE(!t->path.empty());
    REQUIRE(t->path.find_first_of("\n\x01") == std::string::npos);
  }
}

TEST_CASE("the backup names of one arming: the provider's id made file-safe, and the arming's time", "[autostop]")
{
  CHECK(autostop_backup_stem("abc123xyz", 1764600000) == "gpurent-autostop-abc123xyz-1764600000-");
  CHECK(autostop_backup_stem("a/b c;$", 5) == "gpurent-autostop-a_b_c__-5-");
  CHECK(autostop_backup_stem("", 5) == "gpurent-autostop-server-5-");
}

namespace {

const std::string k_stem = "gpurent-autostop-pod1-1000-";

std::string sha256_of(const std::filesystem::path& f)
{
  const auto r = gpurent::testing::run_sh("sha256sum < '" + f.string() + "' | cut -c1-64 | tr -d '\\n'");
  return r.out;
}

TargetBackupCheck check_in(const test::TempDir& dir, const std::string& path = "backups")
{
  const auto target = parse_backup_target("me@h:" + path);
  REQUIRE(target);
  const auto ran = gpurent::testing::run_sh(autostop_target_check_command(*target, k_stem), {}, dir.path());
  REQUIRE(ran.status == 0);
  return parse_autostop_target_check(ran.out, *target, k_stem);
}

// A tar and its checksum file as the watchdog writes them.
void backed_up(const test::TempDir& dir, std::int64_t started, const std::string& bytes)
{
  const std::string tar = k_stem + std::to_string(started) + ".tar";
  const auto f = dir.write("backups/" + tar, bytes);
  dir.write("backups/" + tar + ".sha256", sha256_of(f) + "  " + tar + "\n");
}

}  // namespace

TEST_CASE("the check at the target: the newest tar of this arming with the SHA-256 the server verified", "[autostop]")
{
  test::TempDir dir("autostop-target");
  backed_up(dir, 4990, "older backup");
  backed_up(dir, 5002, "newest backup");
  dir.write("backups/gpurent-autostop-pod2-1000-9999.tar.sha256", "another server's");
  dir.write("backups/gpurent-autostop-pod1-999-9999.tar.sha256", "an earlier arming's");

  auto c = check_in(dir);
  REQUIRE(c.verified);
  CHECK(c.verified->kind == "backup");
  CHECK(c.verified->ok);
  CHECK(c.verified->at == 5002);
  CHECK(c.verified->detail == "sha256=" + sha256_of(dir.path() / "backups" / (k_stem + "5002.tar")) + ":backups/" + k_stem + "5002.tar");
  CHECK(autostop_backup_file(*c.verified) == c.verified->detail);

  SECTION("changed since: refused, with the file named")
  {
    dir.write("backups/" + k_stem + "5002.tar", "newest backup, truncated");
    c = check_in(dir);
    CHECK_FALSE(c.verified);
    CHECK(c.why.find("no longer has the SHA-256") != std::string::npos);
    CHECK(c.why.find(k_stem + "5002.tar") != std::string::npos);
  }
  SECTION("the tar is gone")
  {
    std::filesystem::remove(dir.path() / "backups" / (k_stem + "5002.tar"));
    c = check_in(dir);
    CHECK_FALSE(c.verified);
    CHECK(c.why.find("is gone") != std::string::npos);
  }
  SECTION("a checksum file that is not the tar's")
  {
    dir.write("backups/" + k_stem + "5002.tar.sha256", std::string(64, 'a') + "  other.tar\n");
    CHECK_FALSE(check_in(dir).verified);
  }
  SECTION("no backup of this arming, no directory")
  {
    std::filesystem::remove_all(dir.path() / "backups");
    c = check_in(dir);
    CHECK_FALSE(c.verified);
    CHECK(c.why.find("no directory") != std::string::npos);
    std::filesystem::create_directories(dir.path() / "backups");
    c = check_in(dir);
    CHECK_FALSE(c.verified);
    CHECK(c.why.find("no verified backup of this arming") != std::string::npos);
  }
  SECTION("a path with a space and a quote")
  {
    backed_up(dir, 5002, "x");
    std::filesystem::rename(dir.path() / "backups", dir.path() / "it's here");
    c = check_in(dir, "it's here");
    REQUIRE(c.verified);
    CHECK(c.verified->detail.ends_with(":it's here/" + k_stem + "5002.tar"));
  }
}

TEST_CASE("the check's output cut short or garbled never proves a backup", "[autostop][property]")
{
  const auto target = parse_backup_target("me@h:b");
  REQUIRE(target);
  const std::string hex(64, 'c');
  const std::string good = std::string("ok\0", 3) + k_stem + "5002.tar.sha256" + '\0' + hex + "  " + k_stem + "5002.tar\n" + '\0' +
                           hex + '\0' + "end" + '\0';
  REQUIRE(parse_autostop_target_check(good, *target, k_stem).verified);
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    INFO(cut);
    CHECK_FALSE(parse_autostop_target_check(good.substr(0, cut), *target, k_stem).verified);
  }
  std::mt19937 rng(7);
  const auto newline = good.find('\n');
  for (int i = 0; i < 5000; ++i) {
    std::string g = good;
    const auto at = rng() % g.size();
    g[at] = static_cast<char>(rng() % 256);
    if (parse_autostop_target_check(g, *target, k_stem).verified) {
      // Only the checksum line's end (a newline, a CR or a space, all trimmed) is not part of the proof.
      CHECK((g == good || at == newline));
    }
  }
}

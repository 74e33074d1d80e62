// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <random>

#include "sync/backup_plan.hpp"

using namespace gpurent;

namespace {
RemoteEntry file(std::string path, std::uint64_t size = 10, std::int64_t mtime = 1000)
{
  return RemoteEntry{std::move(path), EntryKind::file, size, mtime, 0644, {}};
}
RemoteEntry dir(std::string path)
{
  return RemoteEntry{std::move(path), EntryKind::directory, 0, 0, 0755, {}};
}
RemoteEntry slink(std::string path, std::string target)
{
  return RemoteEntry{std::move(path), EntryKind::symlink, 0, 0, 0777, std::move(target)};
}
std::map<std::string, ActionKind> kinds(const BackupPlan& p)
{
  std::map<std::string, ActionKind> out;
  for (const auto& a : p.actions) {
    out[a.entry.path] = a.kind;
  }
  return out;
}
}  // namespace

TEST_CASE("is_safe_relative_path: rejects anything that could leave the destination", "[sync][plan]")
{
  for (const char* ok : {"a", "a/b", "a b/c\nd", ".hidden", "..dots", "a/...", "ü/x"}) {
    CHECK(is_safe_relative_path(ok));
  }
  for (const char* bad : {"", "/a", "a/../b", "..", "../a", "a/..", "./a", "a/./b", "a//b", "a/"}) {
    CHECK_FALSE(is_safe_relative_path(bad));
  }
  CHECK_FALSE(is_safe_relative_path(std::string("a\0b", 3)));
}

TEST_CASE("link_stays_inside: lexical resolution of symlink targets", "[sync][plan]")
{
  CHECK(link_stays_inside("l", "a/b"));
  CHECK(link_stays_inside("d/l", "../x"));
  CHECK(link_stays_inside("d/e/l", "../../x"));
  CHECK_FALSE(link_stays_inside("d/e/l", "../../../x"));
  CHECK_FALSE(link_stays_inside("l", "../x"));
  CHECK_FALSE(link_stays_inside("l", "/etc/passwd"));
  CHECK_FALSE(link_stays_inside("l", "a/../../x"));
  CHECK(link_stays_inside("l", "a/../b"));
}

TEST_CASE("glob_match: *, **, ? and escapes", "[sync][plan][glob]")
{
  CHECK(glob_match("*.pt", "model.pt"));
  CHECK_FALSE(glob_match("*.pt", "a/model.pt"));
  CHECK(glob_match("**/*.pt", "a/b/model.pt"));
  CHECK(glob_match("ckpt-??", "ckpt-12"));
  CHECK_FALSE(glob_match("ckpt-??", "ckpt-1"));
  CHECK_FALSE(glob_match("a?b", "a/b"));
  CHECK(glob_match("\\*", "*"));
  CHECK_FALSE(glob_match("\\*", "x"));
  CHECK(glob_match("**", "any/thing/at/all"));
  std::string many_a(5000, 'a');  // appended, not +: GCC 12 warns falsely (-Warray-bounds) on the + form
  many_a += "bcdefgh";
  CHECK(glob_match("a*b*c*d*e*f*g*h", many_a));
  CHECK(path_matches("wandb", "runs/wandb/file"));
  CHECK(path_matches("*.log", "x/y/z.log"));
  CHECK(path_matches("checkpoints/step-*", "checkpoints/step-100/model.bin"));
  CHECK_FALSE(path_matches("checkpoints/step-*", "other/checkpoints/step-1"));
}

TEST_CASE("glob_match: properties over random names", "[sync][plan][glob]")
{
  std::mt19937 rng(3);
  const std::string alphabet = "ab/.-_x";
  for (int i = 0; i < 500; ++i) {
    std::string s;
    const auto n = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int k = 0; k < n; ++k) {
      s.push_back(alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)]);
    }
    CHECK(glob_match(s, s));                       // a literal matches itself
    CHECK(glob_match("**", s));                    // ** matches everything
    CHECK(glob_match("*", s) == (s.find('/') == std::string::npos));
    CHECK(glob_match(s + "*", s + "tail"));
    std::string any(s.size(), '?');
    CHECK(glob_match(any, s) == (s.find('/') == std::string::npos));
  }
}

TEST_CASE("plan_backup: new, unchanged, changed, locally missing and forgotten files", "[sync][plan]")
{
  Manifest m;
  m.entries["same"] = ManifestEntry{EntryKind::file, 10, 1000, 0644, "h", {}};
  m.entries["grown"] = ManifestEntry{EntryKind::file, 10, 1000, 0644, "h", {}};
  m.entries["touched"] = ManifestEntry{EntryKind::file, 10, 1000, 0644, "h", {}};
  m.entries["lost_locally"] = ManifestEntry{EntryKind::file, 10, 1000, 0644, "h", {}};
  m.entries["gone"] = ManifestEntry{EntryKind::file, 10, 1000, 0644, "h", {}};
  std::map<std::string, LocalFile> local{{"same", {10, 1000}}, {"grown", {10, 1000}}, {"touched", {10, 1000}}, {"gone", {10, 1000}}};
  const std::vector<RemoteEntry> remote{file("same"), file("grown", 11), file("touched", 10, 2000), file("lost_locally"), file("new")};
  const auto p = plan_backup(remote, m, local, {});
  const auto k = kinds(p);
  CHECK(k.at("same") == ActionKind::skip);
  CHECK(k.at("grown") == ActionKind::copy);
  CHECK(k.at("touched") == ActionKind::copy);
  CHECK(k.at("lost_locally") == ActionKind::copy);
  CHECK(k.at("new") == ActionKind::copy);
  CHECK(p.forgotten == std::vector<std::string>{"gone"});
  CHECK(p.files_total == 5);
  CHECK(p.files_to_copy == 4);
  CHECK(p.bytes_to_copy == 41);
}

TEST_CASE("plan_backup: unsafe names, reserved names and entries under non-directories are rejected", "[sync][plan]")
{
  const std::vector<RemoteEntry> remote{file("../x"), file("/abs"), file("a//b"), dir("d"), file("d/ok"),
                                        slink("l", "/"), file("l/through"), file("x.gpurent-partial"),
                                        file(".gpurent-manifest.json"), file("orphan/f")};
  const auto p = plan_backup(remote, {}, {}, {});
  const auto k = kinds(p);
  CHECK(k.size() == 3);  // d, d/ok, l
  CHECK(k.at("d") == ActionKind::make_dir);
  CHECK(k.at("d/ok") == ActionKind::copy);
  CHECK(k.at("l") == ActionKind::make_symlink);
  CHECK(p.rejected.size() == 7);
  for (const auto& a : p.actions) {
    if (a.entry.path == "l") {
      CHECK(a.link_outside);
    }
  }
}

TEST_CASE("plan_backup: directories come before their contents, filters apply", "[sync][plan]")
{
  const std::vector<RemoteEntry> remote{file("a/b/c.pt"), dir("a/b"), dir("a"), file("a/log.txt"), dir("wandb"), file("wandb/x.pt")};
  const auto p = plan_backup(remote, {}, {}, Filters{{"*.pt"}, {"wandb"}});
  std::vector<std::string> order;
  for (const auto& a : p.actions) {
    order.push_back(a.entry.path);
  }
  CHECK(order == std::vector<std::string>{"a", "a/b", "a/b/c.pt"});
}

TEST_CASE("same_listed_mtime: exact, or the same second when one listing had whole seconds only", "[sync][backup]")
{
  constexpr std::int64_t s = 1'000'000'000;
  CHECK(same_listed_mtime(1796492403091560525, 1796492403091560525));
  CHECK(same_listed_mtime(1796492403 * s, 1796492403091560525));  // SFTP stat against find
  CHECK(same_listed_mtime(1796492403091560525, 1796492403 * s));
  CHECK_FALSE(same_listed_mtime(1796492404 * s, 1796492403091560525));  // another second
  CHECK_FALSE(same_listed_mtime(1796492403091560525, 1796492403091560526));  // both precise: exact
  CHECK(same_listed_mtime(-s, -1));  // before 1970: the second below
  CHECK_FALSE(same_listed_mtime(0, -1));
}

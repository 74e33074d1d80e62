// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "fakes/files.hpp"
#include "fakes/memory_transport.hpp"
#include "sync/backup.hpp"
#include "sync/manifest.hpp"

using namespace gpurent;
using gpurent::testing::MemoryTransport;

using gpurent::testing::slurp;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir()
  {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent-sync-test.XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::string pattern(std::size_t n, unsigned seed)
{
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 1103515245U + 12345U;
    s[i] = static_cast<char>(seed >> 16);
  }
  return s;
}

MemoryTransport sample_server()
{
  MemoryTransport t;
  t.add_dir("/data");
  t.add_file("/data/a.txt", "hello\n");
  t.add_dir("/data/ckpt");
  t.add_file("/data/ckpt/model.bin", pattern(100'000, 1), 1'700'000'000'123'456'789LL, 0600);
  t.add_file("/data/ckpt/new\nline", "nl");
  t.add_link("/data/link_in", "ckpt/model.bin");
  t.add_link("/data/link_out", "/etc/passwd");
  return t;
}

BackupReport run(MemoryTransport& t, const std::filesystem::path& dest, std::vector<std::string> paths = {"/data"})
{
  BackupRequest req;
  req.remote_paths = std::move(paths);
  req.dest = dest;
  NullBackupObserver obs;
  auto r = run_backup(t, req, obs);
  REQUIRE(r.has_value());
  return *r;
}

}  // namespace

TEST_CASE("run_backup: copies a tree, keeps modes, times and links, and verifies", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  const auto r = run(t, tmp.path);
  CHECK(r.files_total == 3);
  CHECK(r.files_copied == 3);
  CHECK(r.bytes_copied == 100'000 + 6 + 2);
  CHECK(r.verified);
  CHECK(r.failed.empty());
  CHECK(slurp(tmp.path / "ckpt/model.bin") == t.nodes["/data/ckpt/model.bin"].content);
  CHECK(slurp(tmp.path / "ckpt/new\nline") == "nl");
  struct stat st {};
  REQUIRE(::stat((tmp.path / "ckpt/model.bin").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_mtim.tv_sec == 1'700'000'000);
  CHECK(st.st_mtim.tv_nsec == 123'456'789);
  CHECK(std::filesystem::read_symlink(tmp.path / "link_out") == "/etc/passwd");
  CHECK(std::filesystem::read_symlink(tmp.path / "link_in") == "ckpt/model.bin");
  bool warned_outside = false;
  for (const auto& w : r.warnings) {
    warned_outside |= w.find("link_out") != std::string::npos;
  }
  CHECK(warned_outside);
  const auto m = load_manifest(tmp.path / k_manifest_name);
  REQUIRE(m.has_value());
  CHECK(m->entries.at("ckpt/model.bin").sha256 == sha256_hex(t.nodes["/data/ckpt/model.bin"].content));
}

TEST_CASE("run_backup: a re-run without changes copies nothing, a change copies one file", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  run(t, tmp.path);
  t.reads.clear();
  auto r = run(t, tmp.path);
  CHECK(r.files_copied == 0);
  CHECK(r.files_skipped == 3);
  CHECK(t.reads.empty());

  t.add_file("/data/a.txt", "changed!\n", 1'700'000'100'000'000'000LL);
  t.nodes.erase("/data/ckpt/new\nline");
  r = run(t, tmp.path);
  CHECK(r.files_copied == 1);
  CHECK(slurp(tmp.path / "a.txt") == "changed!\n");
  CHECK(std::filesystem::exists(tmp.path / "ckpt/new\nline"));  // kept locally
  const auto m = load_manifest(tmp.path / k_manifest_name);
  CHECK_FALSE(m->entries.contains("ckpt/new\nline"));

  SECTION("a local copy that was deleted is copied again")
  {
    std::filesystem::remove(tmp.path / "ckpt/model.bin");
    r = run(t, tmp.path);
    CHECK(r.files_copied == 1);
    CHECK(slurp(tmp.path / "ckpt/model.bin") == t.nodes["/data/ckpt/model.bin"].content);
  }
}

TEST_CASE("run_backup: a lost connection leaves a partial file that the next run resumes", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.have_tar = false;  // per-file reads, so the cut lands inside model.bin
  t.cut_after_bytes = 50'000;
  BackupRequest req;
  req.remote_paths = {"/data"};
  req.dest = tmp.path;
  NullBackupObserver obs;
  const auto failed = run_backup(t, req, obs);
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().code == Errc::unavailable);
  CHECK_FALSE(std::filesystem::exists(tmp.path / k_manifest_name));
  CHECK(std::filesystem::file_size(tmp.path / ("ckpt/model.bin" + std::string(k_partial_suffix))) == 50'000 - 6);
  t.reads.clear();
  const auto r = run(t, tmp.path);
  CHECK(r.verified);
  bool resumed = false;
  for (const auto& rd : t.reads) {
    resumed |= rd.path == "/data/ckpt/model.bin" && rd.offset == 50'000 - 6;
  }
  CHECK(resumed);
  CHECK(slurp(tmp.path / "ckpt/model.bin") == t.nodes["/data/ckpt/model.bin"].content);
  CHECK_FALSE(std::filesystem::exists(tmp.path / ("ckpt/model.bin" + std::string(k_partial_suffix))));
}

TEST_CASE("run_backup: a file that changes during its copy is copied again", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.have_tar = false;
  t.change_after_read["/data/a.txt"] = "newer content\n";
  const auto r = run(t, tmp.path);
  CHECK(r.failed.empty());
  CHECK(slurp(tmp.path / "a.txt") == "newer content\n");
  CHECK(r.verified);
}

TEST_CASE("run_backup: a hash mismatch that persists is reported and nothing is published", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.wrong_hash["/data/a.txt"] = std::string(64, '0');
  const auto r = run(t, tmp.path);
  REQUIRE(r.failed.size() == 1);
  CHECK(r.failed[0].path == "a.txt");
  CHECK_FALSE(r.verified);
  CHECK_FALSE(std::filesystem::exists(tmp.path / "a.txt"));
  CHECK(r.files_copied == 2);
}

TEST_CASE("run_backup: without a hashing tool on the server the copy is size-checked and says so", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.have_hash_tool = false;
  const auto r = run(t, tmp.path);
  CHECK(r.files_copied == 3);
  CHECK_FALSE(r.verified);
  CHECK(r.verify_method == "size-only");
}

TEST_CASE("run_backup: hostile remote names never write outside the destination", "[sync][backup]")
{
  TempDir tmp;
  const auto dest = tmp.path / "dest";
  MemoryTransport t;
  t.add_dir("/data");
  t.add_file("/data/../escape.txt", "x");
  t.add_file("/data//abs", "x");
  t.add_file("/data/ok.txt", "fine");
  t.add_link("/data/evil", "/");
  t.add_file("/data/evil/owned.txt", "through the link");   // parent is a symlink in the listing
  t.add_file("/data/sneaky" + std::string(k_partial_suffix), "x");
  const auto r = run(t, dest);
  CHECK(r.files_copied == 1);
  CHECK(r.warnings.size() >= 4);
  CHECK_FALSE(std::filesystem::exists(tmp.path / "escape.txt"));
  CHECK_FALSE(std::filesystem::exists("/owned.txt"));
  CHECK(slurp(dest / "ok.txt") == "fine");
  CHECK(std::filesystem::is_symlink(dest / "evil"));
}

TEST_CASE("run_backup: several remote paths go to subdirectories, include/exclude filter", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.add_dir("/logs");
  t.add_file("/logs/run.log", "log");
  BackupRequest req;
  req.remote_paths = {"/data", "/logs/"};
  req.dest = tmp.path;
  req.include = {"*.bin", "*.log"};
  req.exclude = {"link*"};
  NullBackupObserver obs;
  const auto r = run_backup(t, req, obs);
  REQUIRE(r.has_value());
  CHECK(r->files_copied == 2);
  CHECK(std::filesystem::exists(tmp.path / "data/ckpt/model.bin"));
  CHECK(std::filesystem::exists(tmp.path / "logs/run.log"));
  CHECK_FALSE(std::filesystem::exists(tmp.path / "data/a.txt"));
}

TEST_CASE("run_backup: a missing remote path is an error", "[sync][backup]")
{
  TempDir tmp;
  MemoryTransport t;
  BackupRequest req;
  req.remote_paths = {"/nope"};
  req.dest = tmp.path;
  NullBackupObserver obs;
  const auto r = run_backup(t, req, obs);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::not_found);
}

TEST_CASE("run_backup: through the tar stream a file that changes while read is copied again", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  t.change_after_read["/data/a.txt"] = "newer content\n";
  const auto r = run(t, tmp.path);
  CHECK(r.failed.empty());
  CHECK(slurp(tmp.path / "a.txt") == "newer content\n");
  CHECK(r.verified);
  CHECK(t.list_calls >= 3);  // the first listing, the check after tar's warning, and the retry's
}

TEST_CASE("run_backup: a clean streamed run lists the server once, a resume goes by SFTP from its offset", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  const auto clean = run(t, tmp.path);
  CHECK(clean.verified);
  CHECK(clean.verify_method == "sha256sum");
  CHECK(t.list_calls == 1);  // tar saw no change and every hash matched: no second listing
  CHECK(t.reads.empty());

  // A partial copy left by an interrupted run: only that file is read by SFTP, from its end.
  TempDir again;
  const std::string content = t.nodes["/data/ckpt/model.bin"].content;
  std::filesystem::create_directories(again.path / "ckpt");
  {
    std::ofstream partial(again.path / ("ckpt/model.bin" + std::string(k_partial_suffix)), std::ios::binary);
    partial << content.substr(0, 30'000);
  }
  t.reads.clear();
  t.list_calls = 0;
  const auto resumed = run(t, again.path);
  CHECK(resumed.verified);
  REQUIRE(t.reads.size() == 1);
  CHECK(t.reads[0].path == "/data/ckpt/model.bin");
  CHECK(t.reads[0].offset == 30'000);
  CHECK(t.list_calls == 2);  // an SFTP read has no change check of its own: list again
  CHECK(slurp(again.path / "ckpt/model.bin") == content);
}

TEST_CASE("run_backup: small files travel in one stream, without tar each is read alone", "[sync][backup]")
{
  TempDir tmp;
  auto t = sample_server();
  for (int i = 0; i < 20; ++i) {
    t.add_file("/data/ckpt/small-" + std::to_string(i), pattern(100 + static_cast<std::size_t>(i), static_cast<unsigned>(i)));
  }
  SECTION("stream")
  {
    const auto r = run(t, tmp.path);
    CHECK(r.files_copied == 23);
    CHECK(t.stream_calls == 1);
    CHECK(t.reads.empty());
    CHECK(r.verified);
    CHECK(slurp(tmp.path / "ckpt/small-7") == pattern(107, 7));
  }
  SECTION("fallback")
  {
    t.have_tar = false;
    const auto r = run(t, tmp.path);
    CHECK(r.files_copied == 23);
    CHECK(t.reads.size() == 23);
    CHECK(slurp(tmp.path / "ckpt/small-7") == pattern(107, 7));
  }
}

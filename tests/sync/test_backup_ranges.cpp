// SPDX-License-Identifier: MIT
// run_backup's byte ranges over several connections (sync/backup_ranges.cpp) against a real
// sshd, with a session that damages the data of chosen ranges on their way in: a range whose
// SHA-256 differs from the server's is fetched again alone; one that never arrives intact fails
// its file and nothing wrong is published.
#include <catch2/catch.hpp>

#include <atomic>
#include <random>

#include "fakes/files.hpp"
#include "fakes/forwarding_session.hpp"
#include "fakes/sshd_fixture.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/backup.hpp"

using namespace gpurent;
using gpurent::testing::SshdFixture;

namespace {

// Flips one byte of the first chunk of the range reads it is told to damage.
struct Damage {
  std::atomic<int> left{0};      // how many range reads still to damage
  std::atomic<int> damaged{0};
  std::atomic<int> range_reads{0};
};

class DamagingStream final : public ExecStream {
public:
  DamagingStream(std::unique_ptr<ExecStream> inner, Damage* d) : m_inner(std::move(inner)), m_damage(d) {}
  Result<void> read_until(const DataSink& on_out, const std::function<bool()>& done) override { return m_inner->read_until(on_out, done); }
  Result<ExecStreamEnd> finish(const DataSource& in, const DataSink& on_out, const DataSink& on_err,
                               const std::function<bool()>& stop) override
  {
    if (m_damage == nullptr) {
      return m_inner->finish(in, on_out, on_err, stop);
    }
    bool first = true;
    return m_inner->finish(
        in,
        [&](const char* p, std::size_t n) -> Result<void> {
          if (first && n > 0) {
            first = false;
            std::string copy(p, n);
            copy[n / 2] = static_cast<char>(copy[n / 2] ^ 0x5a);
            ++m_damage->damaged;
            return on_out(copy.data(), n);
          }
          return on_out(p, n);
        },
        on_err, stop);
  }

private:
  std::unique_ptr<ExecStream> m_inner;
  Damage* m_damage;
};

class DamagingSession final : public testing::ForwardingSession {
public:
  DamagingSession(std::unique_ptr<SshSession> inner, Damage& d) : ForwardingSession(std::move(inner)), m_damage(d) {}
  LinkTimes link_times() const override { return {}; }  // nothing measured: the streams asked for
  Result<std::unique_ptr<ExecStream>> open_exec(const std::string& command, std::uint32_t window = 0) override
  {
    TRY_ASSIGN(auto inner_stream, inner().open_exec(command, window));
    Damage* d = nullptr;
    if (command.find("gpurent-range") != std::string::npos) {
      ++m_damage.range_reads;
      if (m_damage.left.fetch_sub(1) > 0) {
        d = &m_damage;
      }
    }
    return std::make_unique<DamagingStream>(std::move(inner_stream), d);
  }

private:
  Damage& m_damage;
};

// Backs up `remote` over `streams` connections, each damaging the first `damaged` range reads.
Result<BackupReport> backup_damaging(const SshdFixture& sshd, const std::filesystem::path& remote, const std::filesystem::path& dest,
                                     std::size_t streams, Damage& damage)
{
  auto first = sshd.connect();
  REQUIRE(first);
  DamagingSession main(std::move(*first), damage);
  BackupRequest req;
  req.remote_paths = {remote.string()};
  req.dest = dest;
  req.streams = streams;
  req.range_threshold = 16 * 1024 * 1024;
  req.more_sessions = [&]() -> Result<std::unique_ptr<SshSession>> {
    TRY_ASSIGN(auto s, sshd.connect());
    return std::make_unique<DamagingSession>(std::move(s), damage);
  };
  NullBackupObserver quiet;
  return run_backup(main, req, quiet);
}

// The bytes every connection carried, counted again where a range was fetched again.
std::uint64_t carried(const BackupReport& r)
{
  std::uint64_t n = 0;
  for (const auto& st : r.per_stream) {
    n += st.bytes;
  }
  return n;
}

}  // namespace

TEST_CASE("run_backup ranges: a range that arrives damaged is fetched again alone", "[sync][backup][ranges][ssh]")
{
  SshdFixture sshd;
  test::TempDir remote;
  test::TempDir dest;
  const std::string big = testing::random_bytes(40 * 1024 * 1024, 28);
  testing::write_file(remote.path() / "ckpt.bin", big);
  Damage damage;
  damage.left = 2;
  const auto r = backup_damaging(sshd, remote.path(), dest.path(), 3, damage);
  REQUIRE(r);
  CHECK(r->failed.empty());
  CHECK(r->verified);
  CHECK(damage.damaged == 2);
  // 40 MiB over 3 connections: pieces of 8 MiB (5), plus the 2 fetched again.
  CHECK(damage.range_reads == 7);
  CHECK(carried(*r) == big.size() + 2 * 8 * 1024 * 1024);
  CHECK(testing::slurp(dest.path() / "ckpt.bin") == big);
}

TEST_CASE("run_backup ranges: a range that never arrives intact fails its file, nothing wrong is published",
          "[sync][backup][ranges][ssh]")
{
  SshdFixture sshd;
  test::TempDir remote;
  test::TempDir dest;
  testing::write_file(remote.path() / "ckpt.bin", testing::random_bytes(20 * 1024 * 1024, 29));
  testing::write_file(remote.path() / "small.txt", "kept\n");
  Damage damage;
  damage.left = 1000;
  const auto r = backup_damaging(sshd, remote.path(), dest.path(), 2, damage);
  REQUIRE(r);
  REQUIRE(r->failed.size() == 1);
  CHECK(r->failed[0].path == "ckpt.bin");
  CHECK(r->failed[0].error.find("differs") != std::string::npos);
  CHECK_FALSE(r->verified);
  CHECK_FALSE(std::filesystem::exists(dest.path() / "ckpt.bin"));
  CHECK(testing::slurp(dest.path() / "small.txt") == "kept\n");
}

TEST_CASE("run_backup ranges: a single file given as the remote path is copied once, not \"changed\" and again",
          "[sync][backup][ranges][ssh]")
{
  // The check after the copy lists a single-file root by SFTP stat (whole seconds) where the first
  // listing had nanoseconds: compared exactly, every such backup was copied twice with a warning.
  SshdFixture sshd;
  test::TempDir remote;
  test::TempDir dest;
  const std::string big = testing::random_bytes(24 * 1024 * 1024, 30);
  testing::write_file(remote.path() / "ckpt.bin", big);
  Damage none;
  const auto r = backup_damaging(sshd, remote.path() / "ckpt.bin", dest.path(), 2, none);
  REQUIRE(r);
  CHECK(r->failed.empty());
  CHECK(r->verified);
  CHECK(r->warnings.empty());
  CHECK(carried(*r) == big.size());
  CHECK(none.range_reads == 3);  // 24 MiB in pieces of 8 MiB, each once
  CHECK(testing::slurp(dest.path() / "ckpt.bin") == big);
}

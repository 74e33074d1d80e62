// SPDX-License-Identifier: MIT
// The libssh2 SshSession against a real local sshd (tests/fakes/sshd_fixture.hpp).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <fstream>

#include "fakes/sshd_fixture.hpp"
#include "sync/sha256.hpp"
#include "sync/transport.hpp"

using namespace gpurent;
using gpurent::testing::SshdFixture;

namespace {
Result<std::unique_ptr<SshSession>> connect(const SshTarget& t, const SshOptions& o)
{
  Result<std::unique_ptr<SshSession>> out = std::unexpected(Error{});
  gpurent_ssh_connect(&t, &o, &out);
  return out;
}
// One server for the whole file (key generation costs ~1 s); stopped at exit.
SshdFixture& server()
{
  static SshdFixture f;
  return f;
}
}  // namespace

TEST_CASE("SshSession: connects, runs commands, lists, reads ranges and hashes", "[sync][ssh]")
{
  SshdFixture& sshd = server();
  auto s = connect(sshd.target(), sshd.options());
  REQUIRE(s.has_value());
  auto& session = **s;
  CHECK(session.host_key_fingerprint() == sshd.var("SSHD_FINGERPRINT"));

  const auto r = session.exec("echo out; echo err >&2; cat; exit 3", "from stdin");
  REQUIRE(r.has_value());
  CHECK(r->out == "out\nfrom stdin");
  CHECK(r->err == "err\n");
  CHECK(r->exit_status == 3);

  const auto root = sshd.dir() / "tree";
  std::filesystem::create_directories(root / "sub");
  std::string data(3 * 1024 * 1024 + 17, 'x');
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>((i * 131) >> 3);
  }
  std::ofstream(root / "sub" / "data.bin", std::ios::binary) << data;
  std::ofstream(root / "odd\nname") << "x";
  std::filesystem::create_symlink("/etc", root / "link");

  const auto listing = session.list_tree(root.string());
  REQUIRE(listing.has_value());
  std::map<std::string, RemoteEntry> by;
  for (const auto& e : *listing) {
    by[e.path] = e;
  }
  CHECK(by.at("sub").kind == EntryKind::directory);
  CHECK(by.at("sub/data.bin").size == data.size());
  CHECK(by.at("odd\nname").kind == EntryKind::file);
  CHECK(by.at("link").link_target == "/etc");

  std::string got;
  const auto n = session.read_file((root / "sub" / "data.bin").string(), 1000, [&](const char* p, std::size_t k) -> Result<void> {
    got.append(p, k);
    return {};
  });
  REQUIRE(n.has_value());
  CHECK(*n == data.size() - 1000);
  CHECK(got == data.substr(1000));

  auto job = session.start_sha256(root.string(), {"sub/data.bin", "odd\nname", "missing"});
  REQUIRE(job.has_value());
  const auto hashes = (*job)->wait();
  REQUIRE(hashes.has_value());
  CHECK(hashes->tool == "openssl");  // preferred on this machine: Debian 12 ships openssl
  CHECK(hashes->sums.at("sub/data.bin") == sha256_hex(data));
  CHECK(hashes->sums.at("odd\nname") == sha256_hex("x"));
  CHECK_FALSE(hashes->sums.contains("missing"));

  const auto missing = session.list_tree((root / "nope").string());
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == Errc::not_found);
}

TEST_CASE("SshSession: host key and authentication failures are clear", "[sync][ssh]")
{
  SshdFixture& sshd = server();
  SECTION("unknown host key without TOFU")
  {
    auto o = sshd.options();
    o.known_hosts = sshd.dir() / "none";
    const auto s = connect(sshd.target(), o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == Errc::refused);
    CHECK(s.error().message.find(sshd.var("SSHD_FINGERPRINT")) != std::string::npos);
  }
  SECTION("TOFU records the key, which is then accepted")
  {
    auto o = sshd.options();
    o.known_hosts = sshd.dir() / "state" / "known_hosts";
    o.accept_new_host_key = true;
    REQUIRE(connect(sshd.target(), o).has_value());
    o.accept_new_host_key = false;
    CHECK(connect(sshd.target(), o).has_value());
  }
  SECTION("a changed key names both fingerprints")
  {
    auto o = sshd.options();
    o.known_hosts = sshd.var("SSHD_WRONG_KNOWN_HOSTS");
    const auto s = connect(sshd.target(), o);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == Errc::refused);
    CHECK(s.error().message.find("CHANGED") != std::string::npos);
    CHECK(s.error().message.find(sshd.var("SSHD_FINGERPRINT")) != std::string::npos);
  }
  SECTION("an expected fingerprint from the state store overrides the files")
  {
    auto o = sshd.options();
    o.known_hosts = sshd.dir() / "none";
    o.expected_host_key = sshd.var("SSHD_FINGERPRINT");
    CHECK(connect(sshd.target(), o).has_value());
    o.expected_host_key = "SHA256:AAAA";
    CHECK(connect(sshd.target(), o).error().code == Errc::refused);
  }
  SECTION("keys: unauthorized, RSA, passphrase")
  {
    CHECK(connect(sshd.target(), sshd.options("SSHD_KEY_OTHER")).error().code == Errc::unauthorized);
    CHECK(connect(sshd.target(), sshd.options("SSHD_KEY_RSA")).has_value());
    auto o = sshd.options("SSHD_KEY_PASS");
    CHECK(connect(sshd.target(), o).error().code == Errc::unauthorized);
    const std::string pass = sshd.var("SSHD_PASSPHRASE");
    o.passphrase = [pass](const std::filesystem::path&) { return std::optional<std::string>(pass); };
    CHECK(connect(sshd.target(), o).has_value());
  }
  SECTION("refused connection")
  {
    auto t = sshd.target();
    t.port = 1;
    const auto s = connect(t, sshd.options());
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error().code == Errc::unavailable);
    CHECK(s.error().message.find("connection refused") != std::string::npos);
  }
}

TEST_CASE("SshSession: a killed connection is reported as lost", "[sync][ssh]")
{
  SshdFixture& sshd = server();
  auto s = connect(sshd.target(), sshd.options());
  REQUIRE(s.has_value());
  sshd.kill_connections();
  const auto r = (*s)->exec("true", {});
  REQUIRE_FALSE(r.has_value());
  CHECK((r.error().code == Errc::unavailable || r.error().code == Errc::timeout));
}

TEST_CASE("SshSession::open_exec: input streamed from a source, stdout and stderr to sinks, early exits, stop", "[sync][ssh]")
{
  SshdFixture& sshd = server();
  auto s = connect(sshd.target(), sshd.options());
  REQUIRE(s.has_value());
  auto& session = **s;

  // 5 MiB through `cat` and back, pulled in pieces: more than any window, never whole in memory.
  std::string data(5 * 1024 * 1024 + 3, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) {
    data[i] = static_cast<char>((i * 7919) >> 5);
  }
  std::size_t pos = 0;
  std::string out;
  std::string err;
  auto ch = session.open_exec("cat; echo done >&2");
  REQUIRE(ch.has_value());
  const auto end = (*ch)->finish(
      [&](char* buf, std::size_t cap) -> Result<std::size_t> {
        const std::size_t n = std::min(cap, data.size() - pos);
        std::memcpy(buf, data.data() + pos, n);
        pos += n;
        return n;
      },
      [&](const char* p, std::size_t n) -> Result<void> {
        out.append(p, n);
        return {};
      },
      [&](const char* p, std::size_t n) -> Result<void> {
        err.append(p, n);
        return {};
      },
      {});
  REQUIRE(end.has_value());
  CHECK(end->exit_status == 0);
  CHECK_FALSE(end->stopped);
  CHECK(out == data);
  CHECK(err == "done\n");

  // A command that answers first, then reads (read_until), and one that exits without reading.
  auto talk = session.open_exec("echo ready; cat > /dev/null; echo bye");
  REQUIRE(talk.has_value());
  std::string first;
  REQUIRE((*talk)->read_until([&](const char* p, std::size_t n) -> Result<void> {
    first.append(p, n);
    return {};
  }, [&] { return first.find('\n') != std::string::npos; }));
  CHECK(first == "ready\n");
  std::string rest;
  const std::string small = "some input";
  bool given = false;
  const auto talk_end = (*talk)->finish(
      [&](char* buf, std::size_t) -> Result<std::size_t> {
        if (given) {
          return std::size_t{0};
        }
        given = true;
        std::memcpy(buf, small.data(), small.size());
        return small.size();
      },
      [&](const char* p, std::size_t n) -> Result<void> {
        rest.append(p, n);
        return {};
      },
      {}, {});
  REQUIRE(talk_end.has_value());
  CHECK(rest == "bye\n");

  auto early = session.open_exec("echo no thanks >&2; exit 5");
  REQUIRE(early.has_value());
  std::uint64_t offered = 0;
  const auto early_end = (*early)->finish(
      [&](char* buf, std::size_t cap) -> Result<std::size_t> {
        if (offered > (64ULL << 20)) {
          return std::size_t{0};
        }
        std::memset(buf, 'x', cap);
        offered += cap;
        return cap;
      },
      {}, {}, {});
  REQUIRE(early_end.has_value());
  CHECK(early_end->exit_status == 5);
  CHECK(early_end->err == "no thanks\n");

  // stop() closes a long command at once.
  auto slow = session.open_exec("sleep 30");
  REQUIRE(slow.has_value());
  const auto t0 = std::chrono::steady_clock::now();
  const auto stopped = (*slow)->finish({}, {}, {}, [&] { return std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(300); });
  REQUIRE(stopped.has_value());
  CHECK(stopped->stopped);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  // The session still works afterwards.
  CHECK(session.exec("echo ok", {})->out == "ok\n");
}

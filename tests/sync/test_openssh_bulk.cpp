// SPDX-License-Identifier: MIT
// A backup's bytes through OpenSSH's `ssh` (sync/openssh_bulk.hpp, sync/local_child.hpp): the
// command line, then against a real local sshd (tests/fakes/sshd_fixture.hpp): the same files and
// hashes as libssh2, a host key other than the verified one refused (never a fallback), the
// fallback to libssh2 when `ssh` is not on PATH or cannot unlock the key, the child always reaped.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include "fakes/eventually.hpp"
#include "fakes/files.hpp"
#include "fakes/sshd_fixture.hpp"
#include "sync/base64.hpp"
#include "sync/local_child.hpp"
#include "sync/local_process.hpp"
#include "sync/openssh_bulk.hpp"
#include "sync/sha256.hpp"
#include "sync/transport.hpp"

using namespace gpurent;
using gpurent::testing::SshdFixture;

namespace {

SshdFixture& server()
{
  static SshdFixture f("", true);  // its sessions' TMPDIR is f.remote_tmpdir()
  return f;
}

Result<std::unique_ptr<SshSession>> connect(const SshOptions& o)
{
  Result<std::unique_ptr<SshSession>> out = std::unexpected(Error{});
  const auto t = server().target();
  gpurent_ssh_connect(&t, &o, &out);
  return out;
}

// A temporary directory as TMPDIR (where the known_hosts file for ssh goes), restored after.
struct TmpDir {
  std::filesystem::path dir;
  std::string old;
  bool had = false;
  explicit TmpDir(const std::string& name) : dir(server().dir() / name)
  {
    std::filesystem::create_directories(dir);
    if (const char* t = std::getenv("TMPDIR")) {
      had = true;
      old = t;
    }
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpDir()
  {
    if (had) {
      ::setenv("TMPDIR", old.c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  [[nodiscard]] bool empty() const { return std::filesystem::is_empty(dir); }
};

// The fixture's verified host key as the session would give it to ssh.
OpenSshCommand command_for(const std::string& pub_file)
{
  std::ifstream in(pub_file);
  std::string type;
  std::string b64;
  in >> type >> b64;
  OpenSshCommand c;
  c.target = server().target();
  c.host_key_type = type;
  c.host_key_base64 = b64;
  c.identities = {server().var("SSHD_KEY")};
  c.connect_timeout = std::chrono::seconds(10);
  return c;
}

}  // namespace

TEST_CASE("openssh_argv: strict host key, batch mode, no config, the session's keys, no secret", "[sync][openssh]")
{
  OpenSshCommand c;
  c.target = SshTarget{"ubuntu", "10.0.0.5", 2222};
  c.host_key_type = "ssh-ed25519";
  c.host_key_base64 = "AAAAC3NzaC1lZDI1NTE5AAAAIExample";
  c.identities = {"/k/id_ed25519", "/k/id_rsa", "/k/100%"};
  c.connect_timeout = std::chrono::seconds(15);
  c.keepalive = std::chrono::seconds(30);
  const auto a = openssh_argv(c, "/tmp/kh", "echo hi\nexit 0");
  const auto has = [&](const std::string& s) { return std::find(a.begin(), a.end(), s) != a.end(); };
  REQUIRE(a.size() > 4);
  CHECK(a.front() == "ssh");
  CHECK(a[1] == "-F");
  CHECK(a[2] == "/dev/null");
  for (const std::string& o : std::vector<std::string>{"BatchMode=yes", "StrictHostKeyChecking=yes", "UserKnownHostsFile=/tmp/kh", "GlobalKnownHostsFile=/dev/null",
                        "HostKeyAlgorithms=ssh-ed25519", "ConnectTimeout=15", "ServerAliveInterval=30", "IdentitiesOnly=yes",
                        "IdentityAgent=none", "UpdateHostKeys=no", "KexAlgorithms=" + std::string(k_openssh_kex)}) {
    CHECK(has(o));
  }
  CHECK(has("-T"));
  CHECK(has("/k/id_ed25519"));
  CHECK(has("/k/id_rsa"));
  CHECK(has("/k/100%%"));  // ssh expands % in IdentityFile
  // -p PORT -l USER, then "--", the host and the command as one argument, last.
  CHECK(std::adjacent_find(a.begin(), a.end(), [](const auto& x, const auto& y) { return x == "-p" && y == "2222"; }) != a.end());
  CHECK(std::adjacent_find(a.begin(), a.end(), [](const auto& x, const auto& y) { return x == "-l" && y == "ubuntu"; }) != a.end());
  CHECK(a[a.size() - 3] == "--");
  CHECK(a[a.size() - 2] == "10.0.0.5");
  CHECK(a.back() == "echo hi\nexit 0");
  CHECK(verified_known_hosts_line(c) == "[10.0.0.5]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample");
  c.target.port = 22;
  CHECK(verified_known_hosts_line(c) == "10.0.0.5 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExample");
  CHECK(host_key_algorithms("ssh-rsa") == "rsa-sha2-512,rsa-sha2-256,ssh-rsa");
  CHECK(host_key_algorithms("ecdsa-sha2-nistp256") == "ecdsa-sha2-nistp256");
  CHECK(std::none_of(a.begin(), a.end(), [](const std::string& s) { return s.starts_with("Ciphers="); }));  // OpenSSH's order
  c.prefer_aes_gcm = true;
  const auto g = openssh_argv(c, "/tmp/kh", "true");
  CHECK(std::any_of(g.begin(), g.end(), [](const std::string& s) { return s.starts_with("Ciphers=aes128-gcm@openssh.com,"); }));
  c.agent_socket = "/run/agent.sock";
  const auto b = openssh_argv(c, "/tmp/kh", "true");
  CHECK(std::find(b.begin(), b.end(), "IdentitiesOnly=no") != b.end());  // the agent's keys, as the session offers them
  CHECK(std::find(b.begin(), b.end(), "IdentityAgent=none") == b.end());
  CHECK(std::none_of(b.begin(), b.end(), [](const std::string& s) { return s.find("agent.sock") != std::string::npos; }));
}

TEST_CASE("LocalChild: pipes both ways, exit status, and a child still running is ended and reaped", "[sync][openssh]")
{
  LocalChildRequest shell;
  shell.argv = {"sh", "-c", "cat; echo oops >&2; exit 5"};
  auto c = LocalChild::start(shell);
  REQUIRE(c.has_value());
  std::string out;
  const auto r = (*c)->pump("hello", true, [&](const char* p, std::size_t n) -> Result<void> {
    out.append(p, n);
    return {};
  }, {});
  REQUIRE(r.has_value());
  CHECK_FALSE(*r);
  CHECK(out == "hello");
  CHECK((*c)->wait() == 5);
  CHECK((*c)->err() == "oops\n");

  pid_t pid = 0;
  {
    LocalChildRequest sleeper;
    sleeper.argv = {"sleep", "30"};
    auto s = LocalChild::start(sleeper);
    REQUIRE(s.has_value());
    pid = (*s)->pid();
    CHECK(::kill(pid, 0) == 0);
  }
  errno = 0;
  CHECK(::kill(pid, 0) == -1);  // gone and reaped: no zombie keeps the pid
  CHECK(errno == ESRCH);

  LocalChildRequest absent;
  absent.argv = {"gpurent-no-such-program"};
  const auto missing = LocalChild::start(absent);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == Errc::not_found);
}

TEST_CASE("run_local_process: one run on LocalChild, in its directory, with its input, output, errors and limit", "[sync][openssh]")
{
  LocalProcessRequest req;
  req.argv = {"sh", "-c", "pwd; cat; echo warn >&2; exit 3"};
  req.cwd = "/";
  req.input = "fed";
  auto r = run_local_process(req);
  REQUIRE(r.has_value());
  CHECK(r->out == "/\nfed");
  CHECK(r->err == "warn\n");
  CHECK(r->status == 3);
  // More output than allowed: an error naming the program, and the child is ended.
  req.argv = {"sh", "-c", "yes"};
  req.input.clear();
  req.max_output = 100000;
  r = run_local_process(req);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().message == "sh printed more than 100000 bytes");
  req.argv = {"gpurent-no-such-program"};
  r = run_local_process(req);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::not_found);
}

TEST_CASE("OpenSSH bulk: a backup channel through ssh gives the same files and hashes", "[sync][openssh]")
{
  TmpDir tmp("tmp-same");
  const auto root = server().dir() / "bulk-tree";
  std::filesystem::create_directories(root / "sub");
  const std::string big = testing::random_bytes(5 * 1024 * 1024 + 3, 1);
  std::ofstream(root / "sub" / "big.bin", std::ios::binary) << big;
  std::ofstream(root / "a b.txt") << "small\n";
  auto o = server().options();
  o.bulk = BulkPath::openssh;
  std::vector<std::string> notes;
  o.note = [&](const std::string& t) { notes.push_back(t); };
  auto s = connect(o);
  REQUIRE(s.has_value());
  auto ch = (*s)->open_backup_channel(root.string());
  REQUIRE(ch.has_value());
  const auto listing = (*ch)->listing();  // over libssh2
  REQUIRE(listing.has_value());
  CHECK(listing->size() == 3);
  CHECK(notes.empty());
  testing::CollectFiles got;
  const auto rep = (*ch)->copy({"sub/big.bin", "a b.txt"}, got);  // through ssh
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("OpenSSH's ssh") != std::string::npos);
  CHECK(tmp.empty());  // the known_hosts file went once the agent answered
  REQUIRE(rep.has_value());
  CHECK(got.files.at("sub/big.bin") == big);
  CHECK(got.files.at("a b.txt") == "small\n");
  CHECK(rep->hashes.sums.at("sub/big.bin") == sha256_hex(big));
  CHECK_FALSE(rep->stream.changed_while_read);
}

TEST_CASE("OpenSSH bulk: a host key other than the verified one is refused, not a reason to fall back", "[sync][openssh]")
{
  TmpDir tmp("tmp-wrong");
  const auto dir = std::filesystem::path(server().var("SSHD_DIR"));
  // As if another server answered ssh's connection than the one the session verified.
  const auto opened = start_openssh_backup_channel(command_for((dir / "host_other.pub").string()), server().dir().string())->open();
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == Errc::refused);
  CHECK(opened.error().message.find("host key") != std::string::npos);
  CHECK(tmp.empty());
  // The right key opens it.
  const auto right = start_openssh_backup_channel(command_for((dir / "host_ed25519.pub").string()), server().dir().string())->open();
  REQUIRE(right.has_value());
  CHECK(right->channel != nullptr);
}

TEST_CASE("OpenSSH bulk: no ssh on PATH, or a key only gpurent could unlock: libssh2 carries it", "[sync][openssh]")
{
  TmpDir tmp("tmp-fallback");
  const auto root = server().dir() / "fallback-tree";
  std::filesystem::create_directories(root);
  std::ofstream(root / "f.txt") << "fallback\n";
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  std::vector<std::string> notes;
  auto o = server().options();
  o.bulk = BulkPath::openssh;  // ssh whatever the size and round trip
  o.note = [&](const std::string& t) { notes.push_back(t); };
  testing::CollectFiles got;

  SECTION("no ssh on PATH")
  {
    auto s = connect(o);
    REQUIRE(s.has_value());
    ::setenv("PATH", (server().dir() / "empty-path").c_str(), 1);  // ssh is started beside the listing
    auto ch = (*s)->open_backup_channel(root.string());
    REQUIRE(ch.has_value());
    const auto rep = (*ch)->copy({"f.txt"}, got);
    ::setenv("PATH", old_path.c_str(), 1);
    REQUIRE(rep.has_value());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("libssh2") != std::string::npos);
    CHECK(notes[0].find("no `ssh` on PATH") != std::string::npos);
    CHECK(got.files.at("f.txt") == "fallback\n");
    CHECK(rep->hashes.sums.at("f.txt") == sha256_hex("fallback\n"));
  }
  SECTION("ssh cannot log in (a key the server does not know, and so does not the session's: ssh alone is refused)")
  {
    auto s = connect(o);
    REQUIRE(s.has_value());
    // Take the key away from the server between the two logins (ssh's starts beside the
    // listing): ssh's fails, before the agent.
    const auto keys = std::filesystem::path(server().var("SSHD_DIR")) / "authorized_keys";
    std::filesystem::rename(keys, keys.string() + ".away");
    auto ch = (*s)->open_backup_channel(root.string());
    REQUIRE(ch.has_value());
    const auto rep = (*ch)->copy({"f.txt"}, got);
    std::filesystem::rename(keys.string() + ".away", keys);
    REQUIRE(rep.has_value());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("could not run the backup") != std::string::npos);
    CHECK(notes[0].find("Permission denied") != std::string::npos);
    CHECK(got.files.at("f.txt") == "fallback\n");
  }
  SECTION("an encrypted key unlocked by gpurent's passphrase")
  {
    auto p = server().options("SSHD_KEY_PASS");
    p.bulk = BulkPath::openssh;
    p.note = o.note;
    p.passphrase = [](const std::filesystem::path&) { return std::optional<std::string>(server().var("SSHD_PASSPHRASE")); };
    auto s = connect(p);
    REQUIRE(s.has_value());
    auto ch = (*s)->open_backup_channel(root.string());
    REQUIRE(ch.has_value());
    REQUIRE((*ch)->copy({"f.txt"}, got).has_value());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("passphrase") != std::string::npos);
    CHECK(got.files.at("f.txt") == "fallback\n");
  }
  SECTION("libssh2 forced, and a small copy in auto mode")
  {
    for (const auto mode : {BulkPath::libssh2, BulkPath::automatic}) {
      o.bulk = mode;
      got.files.clear();
      auto s = connect(o);
      REQUIRE(s.has_value());
      auto ch = (*s)->open_backup_channel(root.string());
      REQUIRE(ch.has_value());
      REQUIRE((*ch)->copy({"f.txt"}, got).has_value());
      CHECK(got.files.at("f.txt") == "fallback\n");
    }
    REQUIRE(notes.size() == 1);  // the automatic one says why: the copy is small
    CHECK(notes[0].find("go through libssh2 (round trip") != std::string::npos);
  }
  CHECK(tmp.empty());
}

TEST_CASE("openssh_pays: a large copy on a short round trip", "[sync][openssh]")
{
  using std::chrono::microseconds;
  CHECK(openssh_pays(k_openssh_min_bytes, microseconds(500)));
  CHECK(openssh_pays(std::uint64_t{10} << 30, k_openssh_max_round_trip));
  CHECK_FALSE(openssh_pays(k_openssh_min_bytes - 1, microseconds(500)));         // the second connection costs more
  CHECK_FALSE(openssh_pays(std::uint64_t{10} << 30, microseconds(50'000)));      // ssh's 2 MiB window: 40 MB/s at 50 ms
  CHECK_FALSE(openssh_pays(std::uint64_t{10} << 30, std::nullopt));
}

TEST_CASE("OpenSSH bulk: a connection cut mid-stream is an error naming the connection, and ssh is reaped", "[sync][openssh]")
{
  TmpDir tmp("tmp-cut");
  const auto root = server().dir() / "cut-tree";
  std::filesystem::create_directories(root);
  std::ofstream(root / "big.bin", std::ios::binary) << testing::random_bytes(64 * 1024 * 1024, 2);
  auto o = server().options();
  o.bulk = BulkPath::openssh;
  auto s = connect(o);
  REQUIRE(s.has_value());
  auto ch = (*s)->open_backup_channel(root.string());
  REQUIRE(ch.has_value());
  REQUIRE((*ch)->listing().has_value());
  struct Cut final : FileStreamHandler {
    std::size_t seen = 0;
    bool cut = false;
    Result<void> begin_file(const std::string&, std::uint64_t) override { return {}; }
    Result<void> file_data(const char*, std::size_t n) override
    {
      seen += n;
      if (!cut && seen > 4 * 1024 * 1024) {
        cut = true;
        server().kill_connections();
      }
      return {};
    }
    Result<void> end_file() override { return {}; }
  } handler;
  const auto rep = (*ch)->copy({"big.bin"}, handler);
  REQUIRE_FALSE(rep.has_value());
  CHECK(rep.error().code == Errc::unavailable);
  CHECK(rep.error().message.find("connection") != std::string::npos);
  int status = 0;
  CHECK(::waitpid(-1, &status, WNOHANG) <= 0);  // no child left unreaped
}

namespace {

std::size_t entries_in(const std::filesystem::path& dir)
{
  std::error_code ec;
  std::size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("OpenSSH bulk: ssh starts beside the listing where it may carry the copy, and is ended, leaving nothing, where not",
          "[sync][openssh]")
{
  TmpDir tmp("tmp-early");
  const auto remote_tmp = server().remote_tmpdir();
  REQUIRE(testing::eventually([&] { return entries_in(remote_tmp) == 0; }));  // nothing left by the tests before
  const auto small = server().dir() / "early-small";
  const auto large = server().dir() / "early-large";
  for (const auto& d : {small, large}) {
    std::filesystem::create_directories(d);
    std::ofstream(d / "s.txt") << "small\n";
  }
  std::ofstream(large / "sparse.bin").close();
  std::filesystem::resize_file(large / "sparse.bin", k_openssh_min_bytes);  // sparse: listed at its size, never copied here
  std::vector<std::string> notes;
  auto o = server().options();
  o.note = [&](const std::string& t) { notes.push_back(t); };
  testing::CollectFiles got;

  // A session in `mode` and a backup channel of `root` (destroyed in that order's reverse).
  const auto open = [&](BulkPath mode, const std::filesystem::path& root) {
    o.bulk = mode;
    auto s = connect(o);
    REQUIRE(s.has_value());
    auto ch = (*s)->open_backup_channel(root.string());
    REQUIRE(ch.has_value());
    return std::pair{std::move(*s), std::move(*ch)};
  };

  SECTION("ssh for every copy: started at the listing, it carries the copy")
  {
    auto [s, ch] = open(BulkPath::openssh, small);
    CHECK_FALSE(tmp.empty());  // the started ssh's known_hosts file: it has not been read yet
    const auto rep = ch->copy({"s.txt"}, got);
    REQUIRE(rep.has_value());
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("go through OpenSSH's ssh") != std::string::npos);
    CHECK(got.files.at("s.txt") == "small\n");
    CHECK(tmp.empty());
  }
  SECTION("a channel dropped before its copy: ssh is ended and reaped, the agents remove their files")
  {
    auto [s, ch] = open(BulkPath::openssh, small);
    // Both agents (libssh2's and ssh's) have listed and made their temporary file.
    REQUIRE(testing::eventually([&] { return entries_in(remote_tmp) == 2; }));
    ch.reset();
    CHECK(tmp.empty());
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) <= 0);  // no child left unreaped
    CHECK(testing::eventually([&] { return entries_in(remote_tmp) == 0; }));
    CHECK(notes.empty());
  }
  SECTION("automatic: a listing too small for ssh ends it at once; a large one keeps it until the copy says")
  {
    {
      auto [s, ch] = open(BulkPath::automatic, small);
      CHECK(tmp.empty());
      REQUIRE(ch->copy({"s.txt"}, got).has_value());
    }
    auto [s, ch] = open(BulkPath::automatic, large);
    const auto rtt = s->link_times().round_trip;
    REQUIRE(rtt.has_value());
    if (*rtt <= k_openssh_max_round_trip) {  // a loaded machine may measure more: then no ssh at all
      CHECK_FALSE(tmp.empty());
    }
    got.files.clear();
    REQUIRE(ch->copy({"s.txt"}, got).has_value());  // 6 bytes of the 128 MiB: libssh2 copies
    CHECK(got.files.at("s.txt") == "small\n");
    CHECK(tmp.empty());
    int status = 0;
    CHECK(::waitpid(-1, &status, WNOHANG) <= 0);
    REQUIRE(notes.size() == 2);
    CHECK(notes[1].find("go through libssh2 (round trip") != std::string::npos);
  }
  CHECK(testing::eventually([&] { return entries_in(remote_tmp) == 0; }));
}

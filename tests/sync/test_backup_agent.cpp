// SPDX-License-Identifier: MIT
// The one-channel backup protocol (sync/backup_agent.hpp): its readers over crafted streams cut
// at random places, and the script itself run by the local /bin/sh (dash on Debian, so the
// script is held to POSIX sh) over a real directory tree, with GNU find, tar and openssl.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "fakes/files.hpp"
#include "fakes/tar_builder.hpp"
#include "sync/backup_agent.hpp"
#include "sync/remote_listing.hpp"
#include "sync/sha256.hpp"

using namespace gpurent;
using namespace std::string_literals;

namespace {

using Collect = gpurent::testing::CollectFiles;

// Feeds `bytes` to `feed` in random pieces.
template <class Feed>
void feed_in_pieces(const std::string& bytes, std::mt19937& rng, Feed feed)
{
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const std::size_t n = std::min<std::size_t>(bytes.size() - pos, 1 + rng() % 700);
    feed(bytes.substr(pos, n));
    pos += n;
  }
}

std::vector<RemoteEntry> sample_entries()
{
  return {RemoteEntry{"a.txt", EntryKind::file, 5, 1'700'000'000'123'456'789LL, 0644, {}},
          RemoteEntry{"dir", EntryKind::directory, 4096, 1'700'000'000'000'000'000LL, 0755, {}},
          RemoteEntry{"dir/END", EntryKind::file, 3, 1'700'000'001'000'000'000LL, 0600, {}},
          RemoteEntry{"dir/new\nline", EntryKind::symlink, 5, 1'700'000'002'000'000'000LL, 0777, "a.txt"}};
}

}  // namespace

TEST_CASE("AgentListingReader: the listing in any pieces, errors from the agent map to codes", "[sync][agent]")
{
  std::mt19937 rng(3);
  const auto entries = sample_entries();
  const std::string stream = "gpurent-agent-1\0d\0"s + render_find_listing(entries) + "END\0"s + "0\0"s;
  for (int round = 0; round < 50; ++round) {
    AgentListingReader r;
    feed_in_pieces(stream, rng, [&](const std::string& piece) {
      REQUIRE_FALSE(r.done());
      REQUIRE(r.feed(piece).has_value());
    });
    REQUIRE(r.done());
    CHECK_FALSE(r.root_is_file());
    const auto got = r.result();
    REQUIRE(got.has_value());
    CHECK(*got == entries);
  }
  {
    AgentListingReader r;
    REQUIRE(r.feed("gpurent-agent-1\0f\0"s + render_find_listing({entries[0]}) + "END\0" "0\0"s).has_value());
    CHECK(r.root_is_file());
    CHECK(r.result()->size() == 1);
  }
  {
    AgentListingReader r;
    REQUIRE(r.feed("gpurent-agent-error\0tar\0"s).has_value());
    REQUIRE(r.done());
    CHECK(r.result().error().code == Errc::unsupported);
  }
  {
    AgentListingReader r;
    REQUIRE(r.feed("gpurent-agent-error\0missing\0"s).has_value());
    CHECK(r.result().error().code == Errc::not_found);
  }
  // The marker's word on its own (the push agent's trailer reads it too): whole, or nothing.
  CHECK(agent_error_word("gpurent-agent-error\0mkdir\0"s) == "mkdir");
  CHECK(agent_error_word("gpurent-agent-error\0mkd"s) == std::nullopt);
  CHECK(agent_error_word("gpurent-agent-1\0d\0"s) == std::nullopt);
  CHECK(agent_error_word("gpurent-agent-errorX\0mkdir\0"s) == std::nullopt);
  {
    AgentListingReader r;  // cut before END: not done, and the result says the listing ended early
    REQUIRE(r.feed("gpurent-agent-1\0d\0"s + render_find_listing(entries)).has_value());
    CHECK_FALSE(r.done());
    CHECK(r.result().error().code == Errc::unavailable);
  }
  {
    AgentListingReader r;  // a chatty .bashrc on stdout
    CHECK_FALSE(r.feed("Welcome to the GPU box! Have fun.\n\0"s).has_value());
  }
}

TEST_CASE("AgentListingReader: random bytes never crash it and never claim a listing", "[sync][agent][property]")
{
  std::mt19937 rng(5);
  for (int round = 0; round < 500; ++round) {
    std::string junk;
    const int n = static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      junk.push_back(static_cast<char>(rng() % 4 == 0 ? '\0' : rng() % 256));
    }
    AgentListingReader r;
    (void)r.feed(junk);
    if (r.done()) {
      CHECK_FALSE(r.result().has_value());  // only the agent's greeting can start a listing
    }
  }
}

TEST_CASE("AgentCopyReader: the archive, tar's padding, then the trailer with tar's status and the hashes", "[sync][agent]")
{
  std::mt19937 rng(9);
  const std::vector<std::pair<std::string, std::string>> files{{"a.txt", "hello"}, {"dir/new\nline", std::string(3000, 'x')}};
  std::string archive = gpurent::testing::make_tar(files);
  archive.append((10240 - archive.size() % 10240) % 10240, '\0');
  const std::string h1 = sha256_hex("hello");
  const std::string h2 = sha256_hex(std::string(3000, 'x'));
  const std::vector<std::string> asked{"a.txt", "dir/new\nline"};
  const std::string sums = "openssl\0"s + h1 + " *a.txt\n\\" + h2 + " *dir/new\\nline\n";
  for (const char* status : {"0", "1"}) {
    Collect c;
    AgentCopyReader r(c);
    feed_in_pieces(archive + "gpurent-sums\0"s + status + "\0"s + sums, rng,
                   [&](const std::string& piece) { REQUIRE(r.feed(piece.data(), piece.size()).has_value()); });
    const auto report = r.finish(asked);
    REQUIRE(report.has_value());
    CHECK(report->stream.changed_while_read == (std::string(status) == "1"));
    CHECK(report->hashes.tool == "openssl");
    CHECK(report->hashes.sums.at("a.txt") == h1);
    CHECK(report->hashes.sums.at("dir/new\nline") == h2);
    CHECK(c.files.at("dir/new\nline") == std::string(3000, 'x'));
  }
  {
    Collect c;  // the archive stops early: the connection or tar stopped
    AgentCopyReader r(c);
    REQUIRE(r.feed(archive.data(), 700).has_value());
    CHECK(r.finish(asked).error().code == Errc::unavailable);
  }
  {
    Collect c;  // a complete archive without the trailer
    AgentCopyReader r(c);
    REQUIRE(r.feed(archive.data(), archive.size()).has_value());
    CHECK(r.finish(asked).error().code == Errc::invalid_input);
  }
}

namespace {

// Starts the agent script with /bin/sh in `home` (its TMPDIR `tmp` unless empty), in a process
// group of its own, SIGPIPE at its default, stderr dropped (printf's "I/O error" on a broken pipe).
struct StartedAgent {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout
};

StartedAgent start_agent(const std::filesystem::path& home, const std::filesystem::path& tmp, const std::string& root)
{
  int in[2];
  int out[2];
  REQUIRE(::pipe(in) == 0);
  REQUIRE(::pipe(out) == 0);
  const std::string script = backup_agent_command(root);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(::open("/dev/null", O_WRONLY), 2);
    ::close(in[1]);
    ::close(out[0]);
    if (!tmp.empty()) {
      ::setenv("TMPDIR", tmp.c_str(), 1);
    }
    if (::chdir(home.c_str()) != 0) {
      ::_exit(126);
    }
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  return StartedAgent{pid, in[1], out[0]};
}

// Runs the agent script with /bin/sh in `home`: reads its listing, sends `paths`, reads the rest.
struct AgentRun {
  std::string listing;
  std::string rest;
  int status = -1;
};

AgentRun run_agent_locally(const std::filesystem::path& home, const std::string& root, const std::vector<std::string>& paths)
{
  const auto agent = start_agent(home, {}, root);
  AgentRun run;
  AgentListingReader reader;
  char buf[65536];
  while (!reader.done()) {
    const auto n = ::read(agent.out, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    REQUIRE(reader.feed(std::string_view(buf, static_cast<std::size_t>(n))).has_value());
    run.listing.append(buf, static_cast<std::size_t>(n));
  }
  std::string list;
  for (const auto& p : paths) {
    list += p;
    list.push_back('\0');
  }
  ::signal(SIGPIPE, SIG_IGN);  // an agent that failed has exited: its stdin is gone
  (void)!::write(agent.in, list.data(), list.size());
  ::close(agent.in);
  while (true) {
    const auto n = ::read(agent.out, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    run.rest.append(buf, static_cast<std::size_t>(n));
  }
  ::close(agent.out);
  int st = 0;
  ::waitpid(agent.pid, &st, 0);
  run.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return run;
}

}  // namespace

TEST_CASE("backup_agent_command: run by /bin/sh over a real tree, a single file and a missing path", "[sync][agent]")
{
  const auto home = std::filesystem::temp_directory_path() / ("gpurent-agent-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  std::filesystem::create_directories(home / "tree dir" / "sub");
  std::ofstream(home / "tree dir" / "sub" / "a.bin") << "alpha";
  std::ofstream(home / "tree dir" / "-dash") << "gamma";
  std::ofstream(home / "tree dir" / "two\nlines") << "beta";
  std::ofstream(home / "single file.bin") << "just one";

  SECTION("a directory: listing, then tar and hashes of what was asked")
  {
    const std::vector<std::string> asked{"sub/a.bin", "two\nlines", "-dash", "vanished"};
    const auto run = run_agent_locally(home, "~/tree dir", asked);
    AgentListingReader listing;
    REQUIRE(listing.feed(run.listing).has_value());
    REQUIRE(listing.done());
    const auto entries = listing.result();
    REQUIRE(entries.has_value());
    CHECK(entries->size() == 4);  // sub, sub/a.bin, -dash, two\nlines
    Collect c;
    AgentCopyReader copy(c);
    REQUIRE(copy.feed(run.rest.data(), run.rest.size()).has_value());
    const auto report = copy.finish(asked);
    REQUIRE(report.has_value());
    CHECK(c.files.at("sub/a.bin") == "alpha");
    CHECK(c.files.at("two\nlines") == "beta");
    CHECK(c.files.at("-dash") == "gamma");
    CHECK(report->stream.changed_while_read);  // "vanished" made tar exit non-zero
    CHECK(report->hashes.tool == "openssl");
    CHECK(report->hashes.sums.at("two\nlines") == sha256_hex("beta"));
    CHECK(report->hashes.sums.at("-dash") == sha256_hex("gamma"));
    CHECK_FALSE(report->hashes.sums.contains("vanished"));
  }
  SECTION("a single file: one entry named after it, streamed from its directory")
  {
    const auto run = run_agent_locally(home, (home / "single file.bin").string(), {"single file.bin"});
    AgentListingReader listing;
    REQUIRE(listing.feed(run.listing).has_value());
    REQUIRE(listing.root_is_file());
    const auto entries = listing.result();
    REQUIRE(entries.has_value());
    REQUIRE(entries->size() == 1);
    CHECK((*entries)[0].path == "single file.bin");
    CHECK((*entries)[0].size == 8);
    Collect c;
    AgentCopyReader copy(c);
    REQUIRE(copy.feed(run.rest.data(), run.rest.size()).has_value());
    const auto report = copy.finish({"single file.bin"});
    REQUIRE(report.has_value());
    CHECK_FALSE(report->stream.changed_while_read);
    CHECK(c.files.at("single file.bin") == "just one");
  }
  SECTION("nothing to copy: the agent exits without tar")
  {
    const auto run = run_agent_locally(home, "~/tree dir", {});
    CHECK(run.status == 0);
    CHECK(run.rest.empty());
  }
  SECTION("a missing path")
  {
    const auto run = run_agent_locally(home, "~/nope", {});
    AgentListingReader listing;
    REQUIRE(listing.feed(run.listing).has_value());
    CHECK(listing.result().error().code == Errc::not_found);
    CHECK(run.status == 3);
  }
  std::filesystem::remove_all(home);
}

TEST_CASE("the fuzz seeds in tests/data/agent are valid agent output", "[sync][agent]")
{
  const auto slurp = [](const std::string& name) {
    std::ifstream in(std::string(GPURENT_TEST_DATA) + "/agent/" + name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string s = ss.str();
    REQUIRE(s.size() > 1);
    return s.substr(1);  // the first byte seeds the fuzz target's chunking
  };
  AgentListingReader listing;
  REQUIRE(listing.feed(slurp("listing.bin")).has_value());
  REQUIRE(listing.done());
  CHECK(listing.result()->size() == 3);
  Collect c;
  AgentCopyReader copy(c);
  const std::string rest = slurp("copy.bin");
  REQUIRE(copy.feed(rest.data(), rest.size()).has_value());
  const auto report = copy.finish({"a", "b/c"});
  REQUIRE(report.has_value());
  CHECK(report->hashes.sums.at("a") == sha256_hex("hello"));
  CHECK(c.files.at("b/c") == "xyz");
}

namespace {

// The agent's first bytes (its hello), as a client that then goes would read them.
std::string read_hello(int fd)
{
  std::string got;
  char buf[64];
  while (got.size() < 16) {
    const auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

// Reads the agent's output up to the end of its listing (it then waits for the paths).
void read_through_listing(int fd)
{
  std::string all;
  char buf[65536];
  while (!all.ends_with("END"s + '\0' + "0"s + '\0')) {
    const auto n = ::read(fd, buf, sizeof buf);
    REQUIRE(n > 0);
    all.append(buf, static_cast<std::size_t>(n));
  }
}

int wait_status(pid_t pid)
{
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

TEST_CASE("backup_agent_command: a client that goes at any point leaves no temporary file on the server", "[sync][agent]")
{
  const auto home = std::filesystem::temp_directory_path() / ("gpurent-agent-gone-" + std::to_string(::getpid()));
  std::filesystem::remove_all(home);
  const auto tmp = home / "tmp";
  std::filesystem::create_directories(tmp);
  // A listing larger than a pipe holds, so that the agent is still writing it when the client goes.
  for (int d = 0; d < 20; ++d) {
    const auto dir = home / "tree" / ("directory-with-a-long-name-" + std::to_string(d));
    std::filesystem::create_directories(dir);
    for (int f = 0; f < 100; ++f) {
      std::ofstream(dir / ("file-with-a-long-name-to-make-the-listing-large-" + std::to_string(f) + ".bin")) << f;
    }
  }
  ::signal(SIGPIPE, SIG_IGN);

  SECTION("the connection ends while the listing is written: the output's pipe breaks")
  {
    const auto a = start_agent(home, tmp, "~/tree");
    CHECK(read_hello(a.out).starts_with("gpurent-agent-1"s + '\0'));
    ::close(a.out);  // the listing (some 200 KB) no longer fits: the agent's next write fails
    ::close(a.in);
    CHECK(wait_status(a.pid) == 141);
  }
  SECTION("the connection ends while the agent waits for the paths: its input ends")
  {
    const auto a = start_agent(home, tmp, "~/tree");
    read_through_listing(a.out);
    CHECK(std::filesystem::directory_iterator(tmp) != std::filesystem::directory_iterator());  // its list file, waiting
    ::close(a.in);
    CHECK(wait_status(a.pid) == 0);
    ::close(a.out);
  }
  SECTION("a hangup or a termination of its process group while it waits")
  {
    for (const int sig : {SIGHUP, SIGTERM, SIGINT}) {
      const auto a = start_agent(home, tmp, "~/tree");
      CHECK(read_hello(a.out).starts_with("gpurent-agent-1"s + '\0'));
      read_through_listing(a.out);  // so that the agent reaches its wait for the paths, then signal
      // As when the connection goes: the signal, and the input ends (the agent may not have started
      // its `cat` of the paths yet, so the signal alone would not end that).
      ::kill(-a.pid, sig);
      ::close(a.in);
      CHECK(wait_status(a.pid) == 128 + sig);
      ::close(a.out);
    }
  }
  CHECK(std::filesystem::directory_iterator(tmp) == std::filesystem::directory_iterator());
  std::filesystem::remove_all(home);
}

// SPDX-License-Identifier: MIT
// run_push (sync/push.hpp) against a real local sshd: small files through tar streams and large
// ones as byte ranges over several connections, verified; a no-change re-push sends nothing; a
// changed file alone is sent again; a file the server cannot write is reported, not hidden.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "fakes/eventually.hpp"
#include "fakes/files.hpp"
#include "fakes/forwarding_session.hpp"
#include "fakes/sshd_fixture.hpp"
#include "sync/push.hpp"

using namespace gpurent;
using gpurent::testing::SshdFixture;
using gpurent::testing::slurp;
using gpurent::testing::write_file;

namespace {

struct Quiet final : PushObserver {
  void on_progress(std::uint64_t, std::uint64_t) override {}
  void on_warning(std::string_view w) override { warnings.emplace_back(w); }
  std::vector<std::string> warnings;
};

std::string random_bytes(std::size_t n, std::mt19937& rng)
{
  std::string s(n, '\0');
  for (auto& c : s) {
    c = static_cast<char>(rng());
  }
  return s;
}

// The first connection, more of them counted, and a request into remote/NAME.
struct PushSetup {
  explicit PushSetup(SshdFixture& sshd, const std::string& name) : session(sshd.connect())
  {
    REQUIRE(session.has_value());
    more = [this, &sshd]() {
      ++opened;
      return sshd.connect();
    };
    req.local_root = sshd.dir() / "src";
    req.remote_dir = (sshd.dir() / "remote" / name).string();
  }
  Result<std::unique_ptr<SshSession>> session;
  int opened = 0;
  SessionFactory more;
  PushRequest req;
};

// The real session, reporting a 50 ms round trip: what a push decides from the link, on loopback.
class FarSession final : public testing::ForwardingSession {
public:
  using ForwardingSession::ForwardingSession;
  LinkTimes link_times() const override
  {
    LinkTimes t = ForwardingSession::link_times();
    if (t.round_trip) {
      t.round_trip = std::chrono::milliseconds(50);  // as measured: after the first channel's opening
    }
    return t;
  }
};

}  // namespace

TEST_CASE("run_push over a real sshd: a first push over a long round trip opens its other connections beside the listing",
          "[sync][push][ssh]")
{
  SshdFixture sshd;
  const auto src = sshd.dir() / "src";
  std::mt19937 rng(4);
  const std::string big = random_bytes(24 * 1024 * 1024, rng);  // 24 MiB: 0.6 s through one 2 MiB window at 50 ms
  write_file(src / "w.bin", big);
  for (int i = 0; i < 30; ++i) {
    write_file(src / "small" / ("f" + std::to_string(i)), std::string(2000U + static_cast<std::size_t>(i), 'y'));
  }
  PushSetup setup(sshd, "far");
  auto& [session, opened, more, req] = setup;
  req.big_threshold = 8 * 1024 * 1024;
  req.streams = 2;  // as --streams 2: the count the chooser would take depends on this machine's load
  Quiet quiet;
  FarSession far(std::move(*session));
  // No record of an earlier push here: everything is to be sent, so the other connections the
  // plan will want are opened while the server lists the directory, and carry the ranges.
  const auto first = run_push(far, more, req, quiet);
  REQUIRE(first.has_value());
  CHECK(first->failed.empty());
  CHECK(first->verified);
  CHECK(first->sessions == 2);
  CHECK(opened == 1);
  CHECK(slurp(sshd.dir() / "remote" / "far" / "w.bin") == big);
  REQUIRE(first->record.has_value());

  // The same tree again, without the record (pushed by other means): the early connections are
  // opened, then closed unused, and nothing is sent.
  opened = 0;
  const auto unrecorded = run_push(far, more, req, quiet);
  REQUIRE(unrecorded.has_value());
  CHECK(unrecorded->files_sent == 0);
  CHECK(unrecorded->sessions == 1);
  CHECK(opened == 1);

  // With the record, a re-push is taken to send little: none before the listing says what.
  opened = 0;
  req.pushed_before = first->record;
  const auto again = run_push(far, more, req, quiet);
  REQUIRE(again.has_value());
  CHECK(again->files_sent == 0);
  CHECK(opened == 0);
}

TEST_CASE("run_push over a real sshd: a file where the remote directory should be is a refusal that names it", "[sync][push][ssh]")
{
  SshdFixture sshd;
  write_file(sshd.dir() / "src" / "a.txt", "a");
  write_file(sshd.dir() / "remote" / "blocked", "a file");
  PushSetup setup(sshd, "blocked");
  Quiet quiet;
  const auto r = run_push(**setup.session, setup.more, setup.req, quiet);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.error().code == Errc::refused);
  CHECK(r.error().message == "push to " + setup.req.remote_dir +
                                 ": the server could not create the remote directory (a file in its way, or no permission); move "
                                 "what is in its way on the server, or push to another directory with --to");
  CHECK(slurp(sshd.dir() / "remote" / "blocked") == "a file");
}

TEST_CASE("run_push over a real sshd: a no-change re-push waits for no close, and leaves no agent running", "[sync][push][ssh]")
{
  SshdFixture sshd;
  write_file(sshd.dir() / "src" / "a.txt", "a");
  const std::string name = "noop-" + std::to_string(::getpid());  // in the agent's command line
  {
    PushSetup setup(sshd, name);
    Quiet quiet;
    const auto first = run_push(**setup.session, setup.more, setup.req, quiet);
    REQUIRE(first.has_value());
    CHECK(first->files_sent == 1);
  }
  {
    PushSetup setup(sshd, name);
    Quiet quiet;
    const auto again = run_push(**setup.session, setup.more, setup.req, quiet);
    REQUIRE(again.has_value());
    CHECK(again->files_sent == 0);
    CHECK(again->failed.empty());
  }  // the session ends here, its agent's channel with it
  // "[n]oop-..." matches the agent's command line, not that of the shell running pgrep
  CHECK(testing::eventually([&] { return std::system(("pgrep -f -- '[n]" + name.substr(1) + "' > /dev/null").c_str()) != 0; },
                            std::chrono::seconds(5)));
  CHECK(slurp(sshd.dir() / "remote" / name / "a.txt") == "a");
}

TEST_CASE("run_push over a real sshd: several connections, ranges, verification, incremental", "[sync][push][ssh]")
{
  SshdFixture sshd;
  const auto src = sshd.dir() / "src";
  std::mt19937 rng(1);
  for (int i = 0; i < 60; ++i) {
    write_file(src / ("d" + std::to_string(i % 7)) / ("f" + std::to_string(i) + ".txt"), std::string(static_cast<std::size_t>(rng() % 9000), 'a' + static_cast<char>(i % 26)));
  }
  const std::string big = random_bytes(900 * 1024 + 7, rng);
  write_file(src / "weights" / "w1.bin", big);
  write_file(src / "weights" / "w2.bin", big.substr(0, 300 * 1024));
  write_file(src / ".gitignore", "*.tmp\n");
  write_file(src / "junk.tmp", "junk");

  PushSetup setup(sshd, "proj");
  auto& [session, opened, more, req] = setup;
  req.big_threshold = 256 * 1024;
  req.range_size = 200 * 1024;
  req.streams = 3;  // as --streams 3: on loopback the chosen count would be one (the test below)
  Quiet quiet;
  const auto first = run_push(**session, more, req, quiet);
  REQUIRE(first.has_value());
  INFO((first->failed.empty() ? std::string() : first->failed.front().path + ": " + first->failed.front().error));
  CHECK(first->failed.empty());
  CHECK(first->verified);
  CHECK(first->files_sent == 63);
  CHECK(first->files_total == 63);
  CHECK(first->sessions == 3);
  CHECK(opened == 2);
  CHECK(first->tree.skipped_files == 1);
  for (const auto& e : first->tree.entries) {
    if (e.kind == EntryKind::file) {
      CHECK(slurp(sshd.dir() / "remote" / "proj" / e.path) == slurp(src / e.path));
    }
  }
  CHECK_FALSE(std::filesystem::exists(sshd.dir() / "remote" / "proj" / "junk.tmp"));
  CHECK_FALSE(std::filesystem::exists(sshd.dir() / "remote" / "proj" / "weights" / "w1.bin.gpurent-partial"));

  const auto again = run_push(**session, more, req, quiet);
  REQUIRE(again.has_value());
  CHECK(again->files_sent == 0);
  CHECK(again->bytes_sent == 0);
  CHECK(again->verified);
  CHECK(opened == 2);  // nothing to send: no more connections

  // One changed file (another second) is all that goes.
  write_file(src / "d1" / "f1.txt", "changed");
  std::filesystem::last_write_time(src / "d1" / "f1.txt", std::filesystem::file_time_type::clock::now() + std::chrono::seconds(5));
  // The server holds a directory where a file is to go: that file fails, the rest arrives.
  write_file(src / "clash", "file here");
  std::filesystem::create_directories(sshd.dir() / "remote" / "proj" / "clash" / "inside");
  const auto third = run_push(**session, more, req, quiet);
  REQUIRE(third.has_value());
  CHECK(third->files_sent == 1);
  REQUIRE(third->failed.size() == 1);
  CHECK(third->failed.front().path == "clash");
  CHECK_FALSE(third->verified);
  CHECK(slurp(sshd.dir() / "remote" / "proj" / "d1" / "f1.txt") == "changed");
}

TEST_CASE("run_push over a real sshd: without --streams a fast link gets one connection, and says why", "[sync][push][ssh]")
{
  // Another connection costs its handshake and the shell that starts its command; on loopback the
  // window never bounds the transfer, so one connection carries it (choose_push_sessions).
  SshdFixture sshd;
  const auto src = sshd.dir() / "src";
  std::mt19937 rng(2);
  const std::string big = random_bytes(3 * 1024 * 1024, rng);
  write_file(src / "w.bin", big);
  for (int i = 0; i < 20; ++i) {
    write_file(src / "small" / ("f" + std::to_string(i)), std::string(1000U + static_cast<std::size_t>(i), 'x'));
  }
  PushSetup setup(sshd, "one");
  auto& [session, opened, more, req] = setup;
  req.big_threshold = 256 * 1024;
  req.range_size = 256 * 1024;
  Quiet quiet;
  const auto r = run_push(**session, more, req, quiet);
  REQUIRE(r.has_value());
  CHECK(r->failed.empty());
  CHECK(r->verified);
  CHECK(r->sessions == 1);
  CHECK(opened == 0);
  REQUIRE(r->round_trip.has_value());
  REQUIRE(r->connection_setup.has_value());
  CHECK(r->round_trip->count() > 0);
  CHECK(slurp(sshd.dir() / "remote" / "one" / "w.bin") == big);
}

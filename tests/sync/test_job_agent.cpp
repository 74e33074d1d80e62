// SPDX-License-Identifier: MIT
// The job agent (sync/job_agent.hpp): its readers over crafted, cut and random output, and its
// scripts run by the local /bin/sh (dash on Debian: POSIX sh) in a throw-away HOME: a job that
// prints, sleeps and exits 3; stopping one (TERM to its process group, then KILL); following
// its log from an offset; a job whose runner died (lost); the systemd-run branch.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "sync/job_agent.hpp"
#include "sync/remote_listing.hpp"

using namespace gpurent;
using namespace std::string_literals;
using gpurent::testing::run_sh;

namespace {

struct TempHome {
  TempHome()
  {
    dir = std::filesystem::temp_directory_path() / ("gpurent-job-test-" + std::to_string(::getpid()) + "-" + std::to_string(++count));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "work");
  }
  ~TempHome()
  {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TempHome(const TempHome&) = delete;
  TempHome& operator=(const TempHome&) = delete;
  std::map<std::string, std::string> env() const { return {{"HOME", dir.string()}}; }
  std::filesystem::path dir;
  static inline int count = 0;
};

RemoteJob list_one(const TempHome& h, const std::string& id)
{
  const auto r = run_sh(job_list_command(id), {}, h.dir, h.env());
  const auto jobs = parse_job_list(r.out);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  return jobs->front();
}

// Polls the listing until the job is no longer running (at most ~10 s).
RemoteJob wait_ended(const TempHome& h, const std::string& id)
{
  for (int i = 0; i < 200; ++i) {
    auto j = list_one(h, id);
    if (job_state(j) != JobState::running) {
      return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("the job did not end");
  return {};
}

std::string start(const TempHome& h, const std::string& id, const std::string& command,
                  std::vector<std::pair<std::string, std::string>> env = {}, std::map<std::string, std::string> extra_env = {})
{
  const auto script = job_start_command(JobLaunch{id, "~/work", command, std::move(env)});
  REQUIRE(script.has_value());
  auto e = h.env();
  e.insert(extra_env.begin(), extra_env.end());
  const auto r = run_sh(script->command, script->input, h.dir, e);
  INFO(r.err);
  const auto started = parse_job_start(r.out);
  REQUIRE(started.has_value());
  REQUIRE(started->runner_pid.has_value());
  return started->launcher;
}

}  // namespace

TEST_CASE("job ids, command text and environment names", "[sync][job]")
{
  CHECK(make_job_id(1'764'497'700, 0x3fa9) == "20251130-101500-3fa9");
  CHECK(make_job_id(0, 0x1ffff) == "19700101-000000-ffff");
  CHECK(is_valid_job_id("20251130-101500-3fa9"));
  CHECK_FALSE(is_valid_job_id(""));
  CHECK_FALSE(is_valid_job_id("../x"));
  CHECK_FALSE(is_valid_job_id(".hidden"));
  CHECK_FALSE(is_valid_job_id("-rf"));
  CHECK_FALSE(is_valid_job_id("a b"));
  CHECK_FALSE(is_valid_job_id(std::string(65, 'a')));
  CHECK(command_line_text({"python train.py && echo done"}) == "python train.py && echo done");
  CHECK(command_line_text({"python", "-c", "print('a b')"}) == "'python' '-c' 'print('\\''a b'\\'')'");
  CHECK_FALSE(job_start_command(JobLaunch{"bad id", "~", "true", {}}).has_value());
  const auto bad_env = job_start_command(JobLaunch{"ok", "~", "true", {{"1X", "v"}}});
  REQUIRE_FALSE(bad_env.has_value());
  CHECK(bad_env.error().code == Errc::usage);
}

TEST_CASE("parse_job_list: records, unknown keys, cut output and random bytes", "[sync][job][property]")
{
  const std::string one = "gpurent-jobs-1\0job\0j1\0workdir\0/w\0started\0 100\n\0exit\0003\0pid\0"
                          "42\0future\0x\0log_size\0      12\0cmd\0echo hi\nexit 3\0done\0end\0"s;
  const auto jobs = parse_job_list(one);
  REQUIRE(jobs.has_value());
  REQUIRE(jobs->size() == 1);
  const RemoteJob& j = jobs->front();
  CHECK(j.id == "j1");
  CHECK(j.workdir == "/w");
  CHECK(j.started == 100);
  CHECK(j.exit_code == 3);
  CHECK(j.pid == 42);
  CHECK(j.log_size == 12);
  CHECK(j.command == "echo hi\nexit 3");
  CHECK(job_state(j) == JobState::failed);
  CHECK(parse_job_list("gpurent-jobs-1\0end\0"s)->empty());

  // Every strict prefix of a valid listing is an error, never a shorter list.
  const std::string two = one.substr(0, one.size() - 4) + "job\0j2\0alive\0yes\0done\0end\0"s;
  REQUIRE(parse_job_list(two)->size() == 2);
  CHECK(job_state((*parse_job_list(two))[1]) == JobState::running);
  for (std::size_t n = 0; n < two.size(); ++n) {
    CHECK_FALSE(parse_job_list(two.substr(0, n)).has_value());
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string junk = i % 2 == 0 ? two : std::string{};
    const auto len = std::uniform_int_distribution<std::size_t>(0, 80)(rng);
    for (std::size_t k = 0; k < len; ++k) {
      const char pool[] = {'\0', 'j', 'o', 'b', 'e', 'n', 'd', '1', 'x'};
      junk.insert(std::uniform_int_distribution<std::size_t>(0, junk.size())(rng), 1, pool[rng() % sizeof pool]);
    }
    (void)parse_job_list(junk);  // must not crash or hang
  }
  CHECK_FALSE(parse_job_list("noise").has_value());
}

TEST_CASE("parse_job_start, parse_job_kill and FollowControl", "[sync][job]")
{
  const auto ok = parse_job_start("gpurent-job\0started\0setsid\0" "1234\0"s);
  REQUIRE(ok.has_value());
  CHECK(ok->launcher == "setsid");
  CHECK(ok->runner_pid == 1234);
  CHECK(parse_job_start("gpurent-job\0error\0workdir\0"s).error().code == Errc::not_found);
  CHECK(parse_job_start("gpurent-job\0error\0exists\0"s).error().code == Errc::refused);
  CHECK_FALSE(parse_job_start("bash: syntax error").has_value());
  CHECK(parse_job_kill("stopped") == KillOutcome::stopped);
  CHECK(parse_job_kill("killed\n") == KillOutcome::killed);
  CHECK(parse_job_kill("ended") == KillOutcome::already_ended);
  CHECK_FALSE(parse_job_kill("what").has_value());

  FollowControl c;
  c.feed("gpurent-fol");
  CHECK_FALSE(c.started());
  c.feed("low 1\ntick\nti");
  CHECK(c.started());
  CHECK_FALSE(c.end().has_value());
  c.feed("ck\nend exit 3\n");
  REQUIRE(c.end().has_value());
  CHECK(*c.end() == "exit 3");
  CHECK(c.exit_code() == 3);
  FollowControl lost;
  lost.feed("gpurent-follow 1\nend lost\n");
  CHECK(lost.end() == "lost");
  CHECK_FALSE(lost.exit_code().has_value());
  FollowControl missing;
  missing.feed("gpurent-follow missing\n");
  CHECK(missing.missing());
}

TEST_CASE("job scripts under /bin/sh: a job that prints, sleeps and exits 3 survives its starter and is recorded",
          "[sync][job][shell]")
{
  TempHome h;
  const std::string id = "20250101-000000-0001";
  const std::string launcher = start(h, id, "echo \"hello $GREETING\"; echo to-stderr >&2; sleep 0.3; exit 3",
                                     {{"GREETING", "wo rld's"}});
  CHECK((launcher == "setsid" || launcher == "nohup"));
  // The starter has exited: the job runs on, detached.
  const auto running = list_one(h, id);
  CHECK(running.workdir == (h.dir / "work").string());
  const auto j = wait_ended(h, id);
  CHECK(job_state(j) == JobState::failed);
  CHECK(j.exit_code == 3);
  REQUIRE(j.started.has_value());
  REQUIRE(j.ended.has_value());
  CHECK(*j.ended >= *j.started);
  CHECK(j.pid.has_value());
  const std::string log = gpurent::testing::slurp(h.dir / ".gpurent/jobs" / id / "log");
  CHECK(log == "hello wo rld's\nto-stderr\n");
  CHECK(j.log_size == log.size());

  // The log, whole and its last line; a second job with the same id is refused.
  const auto whole = run_sh(job_log_command(id, std::nullopt), {}, h.dir, h.env());
  CHECK(whole.out == log);
  CHECK(parse_log_size(whole.err) == log.size());
  CHECK(run_sh(job_log_command(id, 1), {}, h.dir, h.env()).out == "to-stderr\n");
  CHECK(run_sh(job_log_tail_command(id, 10), {}, h.dir, h.env()).out == "to-stderr\n");
  const auto missing = run_sh(job_log_command("nope", std::nullopt), {}, h.dir, h.env());
  CHECK(missing.status == 3);
  // From an offset (how `run GROUP` polls each node): the rest and the size; nothing at the end.
  for (std::uint64_t off : {std::uint64_t{0}, std::uint64_t{5}, std::uint64_t{log.size() - 1}, std::uint64_t{log.size()}}) {
    const auto from = run_sh(job_log_from_command(id, off), {}, h.dir, h.env());
    CHECK(from.out == log.substr(off));
    CHECK(parse_log_size(from.err) == log.size());
  }
  CHECK(run_sh(job_log_from_command("nope", 0), {}, h.dir, h.env()).status == 3);
  const auto again = run_sh(job_start_command(JobLaunch{id, "~/work", "true", {}})->command, {}, h.dir, h.env());
  CHECK(parse_job_start(again.out).error().code == Errc::refused);
  const auto no_dir = run_sh(job_start_command(JobLaunch{"x1", "~/missing", "true", {}})->command, {}, h.dir, h.env());
  CHECK(parse_job_start(no_dir.out).error().code == Errc::not_found);
  CHECK_FALSE(std::filesystem::exists(h.dir / ".gpurent/jobs/x1"));
}

TEST_CASE("job scripts under /bin/sh: --env values travel on stdin, the job's files are private, the job keeps the user's umask",
          "[sync][job][shell][security]")
{
  TempHome h;
  const std::string id = "20250101-000000-0e0e";
  const std::string secret = "s3cr3t-value 'quoted' $HOME";
  const auto script = job_start_command(JobLaunch{id, "~/work", "printf '%s' \"$TOKEN\" > got; : > made; sleep 0.2", {{"TOKEN", secret}}});
  REQUIRE(script.has_value());
  // Never in the command line (which `ps` shows every user of the server).
  CHECK(script->command.find("s3cr3t-value") == std::string::npos);
  CHECK(script->input.find("s3cr3t-value") != std::string::npos);
  // Started under the common umask 022, as a login shell would be.
  const auto r = run_sh("umask 022\n" + script->command, script->input, h.dir, h.env());
  INFO(r.err);
  REQUIRE(parse_job_start(r.out).has_value());
  const auto j = wait_ended(h, id);
  CHECK(j.exit_code == 0);
  CHECK(gpurent::testing::slurp(h.dir / "work" / "got") == secret);
  const auto mode = [](const std::filesystem::path& p) {
    return static_cast<unsigned>(std::filesystem::status(p).permissions() & std::filesystem::perms::mask);
  };
  const auto dir = h.dir / ".gpurent/jobs" / id;
  CHECK(mode(h.dir / ".gpurent") == 0700U);
  CHECK(mode(h.dir / ".gpurent/jobs") == 0700U);
  CHECK(mode(dir) == 0700U);
  for (const char* f : {"env", "cmd.sh", "run.sh", "log", "workdir", "launcher", "runner", "pid", "started", "ended", "exit"}) {
    INFO(f);
    CHECK(mode(dir / f) == 0600U);
  }
  // The job's own files get the user's umask, not gpurent's.
  CHECK(mode(h.dir / "work" / "made") == 0644U);
}

TEST_CASE("job scripts under /bin/sh: following the log from an offset until the end", "[sync][job][shell]")
{
  TempHome h;
  const std::string id = "follow-1";
  start(h, id, "for i in 1 2 3 4 5; do echo line $i; sleep 0.1; done");
  const auto whole = run_sh(job_follow_command(id, 0), {}, h.dir, h.env());
  CHECK(whole.out == "line 1\nline 2\nline 3\nline 4\nline 5\n");
  FollowControl c;
  c.feed(whole.err);
  CHECK(c.started());
  CHECK(c.exit_code() == 0);
  // From byte 7 ("line 2" on), after the end: no waiting.
  const auto rest = run_sh(job_follow_command(id, 7), {}, h.dir, h.env());
  CHECK(rest.out == "line 2\nline 3\nline 4\nline 5\n");
  FollowControl none;
  none.feed(run_sh(job_follow_command("nope", 0), {}, h.dir, h.env()).err);
  CHECK(none.missing());
}

TEST_CASE("job scripts under /bin/sh: stopping a job reaches its whole process group", "[sync][job][shell]")
{
  TempHome h;
  const std::string id = "stop-1";
  start(h, id, "sleep 30 & sleep 31; echo not-reached");
  const auto j = list_one(h, id);
  REQUIRE(job_state(j) == JobState::running);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_sh(job_kill_command(id, 2), {}, h.dir, h.env());
  CHECK(parse_job_kill(r.out) == KillOutcome::stopped);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10));
  const auto ended = list_one(h, id);
  CHECK(job_state(ended) == JobState::failed);
  CHECK(ended.exit_code == 143);  // 128 + SIGTERM
  // No process of the job is left (the backgrounded sleep 30 too).
  const auto left = run_sh("kill -0 -- -" + std::to_string(*j.pid) + " 2>/dev/null && echo alive || echo gone");
  CHECK(left.out == "gone\n");
  CHECK(gpurent::testing::slurp(h.dir / ".gpurent/jobs" / id / "log").find("not-reached") == std::string::npos);
  CHECK(parse_job_kill(run_sh(job_kill_command(id, 2), {}, h.dir, h.env()).out) == KillOutcome::already_ended);
  CHECK(parse_job_kill(run_sh(job_kill_command("none", 2), {}, h.dir, h.env()).out) == KillOutcome::missing);
}

TEST_CASE("job scripts under /bin/sh: a job that ignores SIGTERM is killed after the grace period", "[sync][job][shell]")
{
  TempHome h;
  start(h, "stubborn", "trap '' TERM; echo trap-set; sleep 20");
  // Only once the trap is set: a TERM that arrives before it ends the job at once (a race, not the case).
  const auto log = h.dir / ".gpurent/jobs/stubborn/log";
  for (int i = 0; i < 200 && gpurent::testing::slurp(log).find("trap-set") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(gpurent::testing::slurp(log).find("trap-set") != std::string::npos);
  const auto r = run_sh(job_kill_command("stubborn", 1), {}, h.dir, h.env());
  CHECK(parse_job_kill(r.out) == KillOutcome::killed);
  const auto j = wait_ended(h, "stubborn");
  CHECK(j.exit_code == 137);  // 128 + SIGKILL
}

TEST_CASE("job scripts under /bin/sh: a job whose runner died is lost", "[sync][job][shell]")
{
  TempHome h;
  start(h, "gone-1", "sleep 20");
  const auto jd = h.dir / ".gpurent/jobs/gone-1";
  const std::string runner = gpurent::testing::slurp(jd / "runner");
  const std::string pid = gpurent::testing::slurp(jd / "pid");
  // The server "rebooted": the runner and the job are gone without an exit status.
  (void)run_sh("kill -9 " + runner + "; kill -9 -- -" + pid);
  for (int i = 0; i < 100 && job_state(list_one(h, "gone-1")) == JobState::running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(job_state(list_one(h, "gone-1")) == JobState::lost);
  FollowControl c;
  c.feed(run_sh(job_follow_command("gone-1", 0), {}, h.dir, h.env()).err);
  CHECK(c.end() == "lost");
}

TEST_CASE("job scripts under /bin/sh: systemd-run is used where systemd runs and the user is root", "[sync][job][shell]")
{
  if (::geteuid() != 0) {
    SUCCEED("systemd-run is only tried as root");
    return;
  }
  TempHome h;
  // A stand-in systemd-run: records its arguments and starts the unit's command detached, with
  // an empty environment as systemd would (the runner then reads the saved login environment).
  const auto bin = h.dir / "bin";
  std::filesystem::create_directories(bin);
  std::filesystem::create_directories(h.dir / "systemd");
  {
    std::ofstream f(bin / "systemd-run");
    f << "#!/bin/sh\necho \"$@\" > \"$HOME/systemd-run.args\"\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\n"
         "env -i setsid \"$@\" </dev/null >/dev/null 2>&1 &\n";
  }
  std::filesystem::permissions(bin / "systemd-run", std::filesystem::perms::owner_all);
  const std::string path = bin.string() + ":" + std::getenv("PATH");
  const std::string launcher = start(h, "unit-1", "echo \"$MARK\"", {},
                                     {{"PATH", path}, {"GPURENT_SYSTEMD_DIR", (h.dir / "systemd").string()}, {"MARK", "kept"}});
  CHECK(launcher == "systemd-run");
  const auto j = wait_ended(h, "unit-1");
  CHECK(j.exit_code == 0);
  CHECK(gpurent::testing::slurp(h.dir / "systemd-run.args").find("--unit=gpurent-job-unit-1") != std::string::npos);
  CHECK(gpurent::testing::slurp(h.dir / ".gpurent/jobs/unit-1/log") == "kept\n");
}

// SPDX-License-Identifier: MIT
// The autostop watchdog's readers and the idle rule, on a recorded log (tests/data/autostop), and
// the watchdog script itself run once under the local /bin/sh (dash) with an nvidia-smi stand-in.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/autostop_agent.hpp"
#include "sync/autostop_log.hpp"

using namespace gpurent;

namespace {

std::string recorded()
{
  std::ifstream in(std::filesystem::path(GPURENT_TEST_DATA) / "autostop" / "watchdog.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("the idle rule on recorded samples agrees with the watchdog's verdicts", "[autostop]")
{
  const auto log = parse_autostop_log(recorded());
  REQUIRE(log.samples.size() == 9);
  for (const auto& s : log.samples) {
    CHECK(autostop_sample_idle(s, 5) == s.idle);
  }
  CHECK_FALSE(log.samples[0].idle);         // busy
  CHECK_FALSE(log.samples[1].readable);     // nvidia-smi failed: busy
  CHECK(log.samples[1].why == "nvidia-smi-failed");
  CHECK_FALSE(log.samples[2].readable);     // [N/A]: busy
  CHECK(log.samples[3].idle);               // a stalled loop holding 30 GB at 0 %
  CHECK(log.samples[3].gpus.size() == 2);
  CHECK(log.samples[4].idle);               // an idle notebook
  CHECK_FALSE(log.samples[5].idle);         // an interactive session
  CHECK_FALSE(log.samples[6].idle);         // a gpurent job
  CHECK_FALSE(log.samples[7].idle);         // 5 % is not below 5 %
  CHECK(autostop_sample_idle(log.samples[7], 6));
  AutostopSample none;
  none.readable = true;
  none.sessions = 0;
  CHECK_FALSE(autostop_sample_idle(none, 5));  // no GPU seen: busy
  none.gpus = {{0, 0, 0}};
  none.sessions.reset();
  CHECK_FALSE(autostop_sample_idle(none, 5));  // sessions unknown: busy
  const auto done = autostop_billing_action(log);
  REQUIRE(done);
  CHECK(done->what == "stop");
  CHECK(done->at == 1796151183);
}

TEST_CASE("actions of an earlier arming do not count", "[autostop]")
{
  const auto log = parse_autostop_log(recorded() + "start t=1796152000 pid=9 launcher=setsid interval=60 idle=60 then=stop\n");
  CHECK_FALSE(autostop_billing_action(log));
}

TEST_CASE("the config round-trips and the view says what comes next", "[autostop]")
{
  AutostopSettings s;
  s.idle_s = 300;
  s.then = AutostopAction::destroy;
  s.release_after_s = 0;
  s.api = "vast";
  s.on_idle = "curl -d 'it'\\''s idle' https://example.invalid";
  s.armed_at = 1796151150;
  const auto back = parse_autostop_config(autostop_config_text(s));
  REQUIRE(back);
  CHECK(back->idle_s == 300);
  CHECK(back->then == AutostopAction::destroy);
  CHECK(back->api == "vast");
  CHECK(back->on_idle == s.on_idle);
  AutostopRemote r;
  r.configured = true;
  r.alive = true;
  r.config = autostop_config_text(s);
  r.now = 1796151200;
  r.log = "start t=1796151150 pid=1\nsample t=1796151190 r=1 gpus=0:0:0 procs=0 sessions=0 jobs=0 idle=1 since=1796151160\n";
  const auto v = autostop_view(r);
  CHECK(v.armed);
  CHECK(v.can_stop_billing);
  CHECK(v.idle_for_s == 40);
  CHECK(v.next_action == "destroy");
  CHECK(v.next_action_at == 1796151460);
  s.api.clear();
  r.config = autostop_config_text(s);
  CHECK(autostop_view(r).next_action == "mark-idle");
  CHECK_FALSE(autostop_view(r).can_stop_billing);
}

TEST_CASE("malformed log lines are skipped", "[autostop]")
{
  const auto log = parse_autostop_log("sample t=x r=1\nsample t=5 r=1 gpus=0:a:1\naction stage=1\n\n\t\nsample t=7 r=1 gpus=0:1:2 sessions=0\n");
  REQUIRE(log.samples.size() == 1);
  CHECK(log.samples[0].at == 7);
  CHECK(log.events.empty());
  CHECK_FALSE(parse_autostop_state("junk"));
}

TEST_CASE("the watchdog samples once under /bin/sh with an nvidia-smi stand-in", "[autostop]")
{
  gpurent::test::TempDir tmp;
  const auto home = tmp.path() / "home";
  const auto dir = home / ".gpurent" / "autostop";
  std::filesystem::create_directories(dir);
  const auto fake = tmp.path() / "nvidia-smi";
  {
    std::ofstream f(fake);
    f << "#!/bin/sh\ncase \"$1\" in --query-gpu=*) printf '0, 0, 30000\\n1, 3, 12\\n';; esac\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  {
    std::ofstream w(dir / "watchdog.sh");
    w << autostop_watchdog_script();
    AutostopSettings s;
    s.interval_s = 1;
    s.nvidia_smi = fake.string();
    std::ofstream c(dir / "config");
    c << autostop_config_text(s) << "AS_ONCE=1\n";
  }
  const auto r = gpurent::testing::run_sh("sh \"$HOME/.gpurent/autostop/watchdog.sh\" \"$HOME/.gpurent/autostop\" test", {}, home,
                                          {{"HOME", home.string()}});
  CHECK(r.status == 0);
  std::ifstream in(dir / "log");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto log = parse_autostop_log(ss.str());
  REQUIRE(log.samples.size() == 1);
  const auto& s = log.samples[0];
  CHECK(s.readable);
  CHECK(s.gpus == std::vector<AutostopGpu>{{0, 0, 30000}, {1, 3, 12}});
  CHECK(s.processes == 0u);
  // Idle by the rule unless this machine has a terminal session (which the watchdog counts).
  CHECK(s.idle == autostop_sample_idle(s, 5));
}

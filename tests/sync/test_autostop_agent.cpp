// SPDX-License-Identifier: MIT
// The autostop watchdog's handed-over credential (sync/autostop_agent.hpp) lives only as long as
// the watchdog: scripts run by the local /bin/sh (dash) in a throw-away HOME, started with
// setsid as on a server without systemd. Removed by --cancel (also when no watchdog runs), when
// the watchdog exits on its own, and when it is sent SIGTERM.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "fakes/files.hpp"
#include "fakes/local_shell.hpp"
#include "fakes/temp_dir.hpp"
#include "sync/autostop_agent.hpp"
#include "sync/remote_listing.hpp"

using namespace gpurent;
using gpurent::testing::run_sh;

namespace {

struct Server {
  Server()
  {
    home = tmp.path() / "home";
    dir = home / ".gpurent" / "autostop";
    std::filesystem::create_directories(home);
    smi = tmp.write("nvidia-smi", "#!/bin/sh\ncase \"$1\" in --query-gpu=*) printf '0, 90, 30000\\n';; esac\n");  // busy
    std::filesystem::permissions(smi, std::filesystem::perms::owner_all);
  }
  ~Server() { (void)run_sh(autostop_cancel_command(), {}, home, env()); }  // no watchdog outlives its test
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  [[nodiscard]] std::map<std::string, std::string> env() const
  {
    return {{"HOME", home.string()}, {"GPURENT_SYSTEMD_DIR", (tmp.path() / "no-systemd").string()}};
  }
  [[nodiscard]] AutostopSettings settings() const
  {
    AutostopSettings s;
    s.interval_s = 1;
    s.idle_s = 3600;
    s.api = "runpod";
    s.api_url = "http://127.0.0.1:9/v1";
    s.instance_id = "pod1";
    s.credential = "file";
    s.nvidia_smi = smi.string();
    return s;
  }
  // Arms with the key on stdin; the watchdog's PID.
  pid_t arm() const
  {
    const auto r = run_sh(autostop_arm_command(settings(), false), "rp_secret_key", home, env());
    INFO(r.err);
    const auto armed = parse_autostop_arm(r.out);
    REQUIRE(armed.has_value());
    REQUIRE(armed->launcher == "setsid");
    REQUIRE(armed->pid.has_value());
    return static_cast<pid_t>(*armed->pid);
  }
  [[nodiscard]] bool has_credential() const { return std::filesystem::exists(dir / "credential"); }

  gpurent::test::TempDir tmp{"gpurent-autostop-agent"};
  std::filesystem::path home;
  std::filesystem::path dir;
  std::filesystem::path smi;
};

// Ended (a zombie has: where nothing reaps it, it stays one).
bool gone(pid_t pid)
{
  for (int i = 0; i < 200; ++i) {
    const std::string stat = gpurent::testing::slurp("/proc/" + std::to_string(pid) + "/stat");
    const auto paren = stat.rfind(") ");
    if (::kill(pid, 0) != 0 || (paren != std::string::npos && stat.compare(paren + 2, 1, "Z") == 0)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("autostop credential: stored 0600, removed by --cancel", "[autostop][security][shell]")
{
  Server s;
  const pid_t pid = s.arm();
  REQUIRE(s.has_credential());
  CHECK((std::filesystem::status(s.dir / "credential").permissions() & std::filesystem::perms::mask) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  CHECK(gpurent::testing::slurp(s.dir / "credential") == "rp_secret_key");
  CHECK((std::filesystem::status(s.dir).permissions() & std::filesystem::perms::mask) == std::filesystem::perms::owner_all);
  const auto c = run_sh(autostop_cancel_command(), {}, s.home, s.env());
  CHECK(c.out == "ok");
  CHECK(gone(pid));
  CHECK_FALSE(s.has_credential());
}

TEST_CASE("autostop credential: --cancel removes it when no watchdog runs any more", "[autostop][security][shell]")
{
  Server s;
  const pid_t pid = s.arm();
  ::kill(pid, SIGKILL);  // no trap runs: as after a crash or the OOM killer
  REQUIRE(gone(pid));
  REQUIRE(s.has_credential());
  const auto c = run_sh(autostop_cancel_command(), {}, s.home, s.env());
  CHECK(c.out == "none");
  CHECK_FALSE(s.has_credential());
}

TEST_CASE("autostop credential: removed when the watchdog is ended by a signal", "[autostop][security][shell]")
{
  Server s;
  const pid_t pid = s.arm();
  REQUIRE(s.has_credential());
  ::kill(pid, SIGTERM);
  CHECK(gone(pid));
  CHECK_FALSE(s.has_credential());
}

TEST_CASE("autostop credential: removed when the watchdog exits on its own", "[autostop][security][shell]")
{
  Server s;
  std::filesystem::create_directories(s.dir);
  {
    std::ofstream(s.dir / "watchdog.sh") << autostop_watchdog_script();
    std::ofstream(s.dir / "config") << autostop_config_text(s.settings()) << "AS_ONCE=1\n";
    std::ofstream(s.dir / "credential") << "rp_secret_key";
  }
  const auto r = run_sh("sh \"$HOME/.gpurent/autostop/watchdog.sh\" \"$HOME/.gpurent/autostop\" test", {}, s.home, s.env());
  CHECK(r.status == 0);
  CHECK(std::filesystem::exists(s.dir / "log"));
  CHECK_FALSE(s.has_credential());
  // A config it cannot read ends it at once, and the credential with it.
  std::ofstream(s.dir / "credential") << "rp_secret_key";
  std::ofstream(s.dir / "config") << "AS_IDLE='\n";
  const auto bad = run_sh("sh \"$HOME/.gpurent/autostop/watchdog.sh\" \"$HOME/.gpurent/autostop\" test", {}, s.home, s.env());
  CHECK(bad.status != 0);
  CHECK_FALSE(s.has_credential());
}

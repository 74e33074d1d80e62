// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "fakes/fake_clock.hpp"
#include "fakes/scripted_provider.hpp"
#include "providers/lifecycle.hpp"

using namespace gpurent;
using namespace std::chrono_literals;
using gpurent::test::FakeClock;

using gpurent::test::ScriptedProvider;
using gpurent::test::state;

TEST_CASE("Lifecycle: wait_running polls through pending until running", "[providers][lifecycle]")
{
  ScriptedProvider p;
  p.script = {state(InstanceState::pending, "null"), state(InstanceState::pending, "loading"),
              Result<std::optional<Instance>>(std::unexpected(Error{Errc::unavailable, "500"})),
              state(InstanceState::running, "running", "10.0.0.1")};
  FakeClock clock;
  int seen = 0;
  auto r = wait_running(p, clock, "i-1", WaitOptions{10min, 5s, {}}, [&](const Instance&) { ++seen; });
  REQUIRE(r);
  CHECK(r->host == "10.0.0.1");
  CHECK(seen == 3);
  CHECK(clock.slept() == 15s);
}

TEST_CASE("Lifecycle: a 10-minute deadline passes in microseconds", "[providers][lifecycle]")
{
  ScriptedProvider p;
  p.script = {state(InstanceState::pending, "booting")};
  FakeClock clock;
  const auto start = clock.now();
  const auto wall = std::chrono::steady_clock::now();
  auto r = wait_running(p, clock, "i-1", WaitOptions{10min, 5s, {}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::timeout);
  CHECK(r.error().message.find("booting") != std::string::npos);
  CHECK(clock.now() - start == 10min);
  CHECK(clock.sleeps().size() == 120);
  CHECK(std::chrono::steady_clock::now() - wall < 1s);
}

TEST_CASE("Lifecycle: dead ends fail at once", "[providers][lifecycle]")
{
  FakeClock clock;
  for (auto [s, raw] : {std::pair{InstanceState::stopped, "exited"}, std::pair{InstanceState::failed, "offline"},
                        std::pair{InstanceState::terminated, "terminated"}}) {
    ScriptedProvider p;
    p.script = {state(InstanceState::pending, "loading"), state(s, raw)};
    auto r = wait_running(p, clock, "i-1", WaitOptions{10min, 5s, {}});
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find(raw) != std::string::npos);
  }
  ScriptedProvider gone;
  gone.script = {Result<std::optional<Instance>>(std::optional<Instance>{})};
  CHECK(wait_running(gone, clock, "i-1", WaitOptions{}).error().code == Errc::not_found);
  ScriptedProvider denied;
  denied.script = {Result<std::optional<Instance>>(std::unexpected(Error{Errc::unauthorized, "401"}))};
  CHECK(wait_running(denied, clock, "i-1", WaitOptions{}).error().code == Errc::unauthorized);
}

TEST_CASE("Lifecycle: after a start call, stopped is waited through, not a dead end", "[providers][lifecycle][start]")
{
  FakeClock clock;
  ScriptedProvider p;
  p.script = {state(InstanceState::stopped, "EXITED"), state(InstanceState::pending, "RUNNING"),
              state(InstanceState::running, "RUNNING", "10.0.0.2")};
  WaitOptions starting{10min, 5s, {}};
  starting.starting = true;
  auto r = wait_running(p, clock, "pod-1", starting);
  REQUIRE(r);
  CHECK(r->host == "10.0.0.2");
  // A start that never takes ends at the deadline with the last state, not as a dead end.
  ScriptedProvider stuck;
  stuck.script = {state(InstanceState::stopped, "EXITED")};
  auto t = wait_running(stuck, clock, "pod-1", starting);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::timeout);
  CHECK(t.error().message.find("EXITED") != std::string::npos);
  // Terminated is still a dead end.
  ScriptedProvider gone;
  gone.script = {state(InstanceState::stopped, "EXITED"), state(InstanceState::terminated, "TERMINATED")};
  auto g = wait_running(gone, clock, "pod-1", starting);
  REQUIRE_FALSE(g);
  CHECK(g.error().message.find("dead end") != std::string::npos);
}

TEST_CASE("Lifecycle: wait_ssh retries unavailable, stops on unauthorized", "[providers][lifecycle]")
{
  FakeClock clock;
  int calls = 0;
  auto r = wait_ssh([&]() -> Result<std::string> {
    if (++calls < 4) {
      return fail(Errc::unavailable, "connection refused");
    }
    return std::string("SHA256:abc");
  }, clock, WaitOptions{1min, 3s, {}});
  REQUIRE(r);
  CHECK(*r == "SHA256:abc");
  CHECK(clock.slept() == 9s);
  auto denied = wait_ssh([&]() -> Result<std::string> { return fail(Errc::unauthorized, "auth"); }, clock, WaitOptions{});
  CHECK(denied.error().code == Errc::unauthorized);
  auto never = wait_ssh([&]() -> Result<std::string> { return fail(Errc::timeout, "t"); }, clock, WaitOptions{30s, 10s, {}});
  CHECK(never.error().code == Errc::timeout);
}

TEST_CASE("Lifecycle waits: a cancelled wait ends at the next look with an interrupted error", "[providers][lifecycle][signal]")
{
  ScriptedProvider p;
  p.script = {state(InstanceState::pending, "booting")};
  FakeClock clock;
  int asked = 0;
  auto r = wait_running(p, clock, "i-1", WaitOptions{10min, 5s, [&asked] { return ++asked > 2; }});
  REQUIRE_FALSE(r);
  CHECK(r.error().interrupted);
  CHECK(r.error().code == Errc::partial);
  CHECK(r.error().message.find("last state: booting") != std::string::npos);
  CHECK(clock.slept() == 10s);  // two looks, then the third stops before asking
  int probes = 0;
  auto s = wait_ssh([&]() -> Result<std::string> { ++probes; return fail(Errc::unavailable, "refused"); }, clock,
                    WaitOptions{10min, 5s, [&probes] { return probes >= 3; }});
  REQUIRE_FALSE(s);
  CHECK(s.error().interrupted);
  CHECK(probes == 3);
}

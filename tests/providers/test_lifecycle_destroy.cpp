// SPDX-License-Identifier: MIT
// destroy_confirmed: one destroy request, confirmed by get(); "already gone" answers count only
// once get() agrees; a request lost in transit is repeated only after get() shows the server still
// there. find_named: a lost create answer is settled by the provider's list.
#include <catch2/catch.hpp>

#include "fakes/fake_clock.hpp"
#include "fakes/scripted_provider.hpp"
#include "providers/lifecycle.hpp"

using namespace gpurent;
using namespace std::chrono_literals;
using gpurent::test::absent;
using gpurent::test::FakeClock;
using gpurent::test::ScriptedProvider;
using gpurent::test::state;

namespace {

Result<void> answer(Errc code, const char* message) { return std::unexpected(Error{code, message}); }

}  // namespace

TEST_CASE("destroy_confirmed: one request, then get() until gone", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  ScriptedProvider p;
  p.script = {state(InstanceState::terminating, "terminating"), state(InstanceState::terminating, "terminating"), absent()};
  int accepted_hooks = 0;
  DestroyHooks hooks;
  hooks.on_accepted = [&] { ++accepted_hooks; };
  const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}}, hooks);
  CHECK(out.confirmed);
  CHECK(out.accepted);
  CHECK(out.requests == 1);
  CHECK(p.terminate_calls == 1);
  CHECK(accepted_hooks == 1);
  CHECK(clock.slept() == 4s);
}

TEST_CASE("destroy_confirmed: an already-gone answer counts only when get() agrees", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  ScriptedProvider p;
  p.terminate_script = {answer(Errc::not_found, "runpod: HTTP 400 Invalid Pod ID.")};
  SECTION("get() says gone: confirmed, without a second request")
  {
    p.script = {absent()};
    const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
    CHECK(out.confirmed);
    CHECK(p.terminate_calls == 1);
  }
  SECTION("get() still shows it running: not confirmed, and not taken as accepted")
  {
    p.script = {state(InstanceState::running, "RUNNING")};
    const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
    CHECK_FALSE(out.confirmed);
    CHECK_FALSE(out.accepted);
    CHECK(p.terminate_calls == 1);
    CHECK(out.error.message.find("still reports it RUNNING") != std::string::npos);
  }
}

TEST_CASE("destroy_confirmed: a request lost in transit is repeated only after a look", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  ScriptedProvider p;
  SECTION("a 500, the server still runs: sent again, then confirmed")
  {
    p.terminate_script = {answer(Errc::unavailable, "HTTP 500"), Result<void>{}};
    p.script = {state(InstanceState::running, "RUNNING"), absent()};
    const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
    CHECK(out.confirmed);
    CHECK(out.requests == 2);
  }
  SECTION("a 500 that was carried out anyway: get() shows it terminating, no second request")
  {
    p.terminate_script = {answer(Errc::unavailable, "HTTP 500")};
    p.script = {state(InstanceState::terminating, "terminating"), absent()};
    const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
    CHECK(out.confirmed);
    CHECK(out.requests == 1);
  }
  SECTION("a 500 that was carried out anyway: get() shows it gone")
  {
    p.terminate_script = {answer(Errc::timeout, "timed out")};
    p.script = {absent()};
    CHECK(destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}}).confirmed);
    CHECK(p.terminate_calls == 1);
  }
  SECTION("500 every time: at most k_max_destroy_requests, then not confirmed and not accepted")
  {
    p.terminate_script = {answer(Errc::unavailable, "HTTP 500")};
    p.script = {state(InstanceState::running, "RUNNING")};
    const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
    CHECK_FALSE(out.confirmed);
    CHECK_FALSE(out.accepted);
    CHECK(out.requests == k_max_destroy_requests);
    CHECK(out.error.message.find("failed 5 times") != std::string::npos);
  }
}

TEST_CASE("destroy_confirmed: a refusal is final unless the server is gone anyway", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  ScriptedProvider p;
  p.terminate_script = {answer(Errc::unauthorized, "HTTP 401")};
  p.script = {state(InstanceState::running, "active")};
  auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{10min, 2s, {}});
  CHECK_FALSE(out.confirmed);
  CHECK_FALSE(out.accepted);
  CHECK(out.error.code == Errc::unauthorized);
  CHECK(p.terminate_calls == 1);
  ScriptedProvider q;
  q.terminate_script = {answer(Errc::invalid_input, "HTTP 400")};
  q.script = {absent()};
  CHECK(destroy_confirmed(q, clock, "i-1", WaitOptions{10min, 2s, {}}).confirmed);
}

TEST_CASE("destroy_confirmed: accepted but never gone is a timeout, still accepted", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  ScriptedProvider p;
  p.script = {state(InstanceState::running, "running")};
  const auto out = destroy_confirmed(p, clock, "i-1", WaitOptions{1min, 10s, {}});
  CHECK_FALSE(out.confirmed);
  CHECK(out.accepted);
  CHECK(out.requests == 1);
  CHECK(out.error.code == Errc::timeout);
  CHECK(out.error.message.find("accepted") != std::string::npos);
}

TEST_CASE("destroy_confirmed: look_first sends nothing when the provider is already on it", "[providers][lifecycle][destroy]")
{
  FakeClock clock;
  DestroyHooks hooks;
  hooks.look_first = true;
  ScriptedProvider terminating;
  terminating.script = {state(InstanceState::terminating, "terminating"), absent()};
  auto out = destroy_confirmed(terminating, clock, "i-1", WaitOptions{10min, 2s, {}}, hooks);
  CHECK(out.confirmed);
  CHECK(out.requests == 0);
  ScriptedProvider gone;
  gone.script = {absent()};
  CHECK(destroy_confirmed(gone, clock, "i-1", WaitOptions{10min, 2s, {}}, hooks).requests == 0);
  ScriptedProvider running;
  running.script = {state(InstanceState::running, "running"), absent()};
  out = destroy_confirmed(running, clock, "i-1", WaitOptions{10min, 2s, {}}, hooks);
  CHECK(out.confirmed);
  CHECK(out.requests == 1);
}

TEST_CASE("find_named: the list settles a lost create answer", "[providers][lifecycle]")
{
  FakeClock clock;
  ScriptedProvider p;
  Instance a;
  a.id = "a";
  a.name = "train";
  a.state = InstanceState::terminated;
  Instance b = a;
  b.id = "b";
  b.state = InstanceState::pending;
  p.listed = {a};
  auto none = find_named(p, clock, "train", WaitOptions{1min, 1s, {}});
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  p.listed = {a, b};
  auto found = find_named(p, clock, "train", WaitOptions{1min, 1s, {}});
  REQUIRE(found);
  REQUIRE(found->has_value());
  CHECK((*found)->id == "b");
}

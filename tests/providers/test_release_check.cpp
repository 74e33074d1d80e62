// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "providers/release_check.hpp"

using namespace gpurent;
using namespace std::chrono_literals;

TEST_CASE("release_verdict: another host key, or SSH unreachable twice a minute apart", "[providers][release]")
{
  const std::chrono::system_clock::time_point t0{std::chrono::seconds{1'790'000'000}};
  SECTION("the host answers: not released, and the clock is reset")
  {
    const auto v = release_verdict(SshProbe::answered, t0, t0 + 120s);
    CHECK_FALSE(v.released);
    CHECK_FALSE(v.unreachable_since);
  }
  SECTION("another host key at the address: released at once")
  {
    CHECK(release_verdict(SshProbe::other_host_key, std::nullopt, t0).released);
  }
  SECTION("the first unreachable check starts the clock")
  {
    const auto v = release_verdict(SshProbe::unreachable, std::nullopt, t0);
    CHECK_FALSE(v.released);
    CHECK(v.unreachable_since == t0);
  }
  SECTION("a second one under a minute later is not enough; a minute later it is")
  {
    const auto early = release_verdict(SshProbe::unreachable, t0, t0 + 59s);
    CHECK_FALSE(early.released);
    CHECK(early.unreachable_since == t0);
    const auto later = release_verdict(SshProbe::unreachable, t0, t0 + 60s);
    CHECK(later.released);
    CHECK(later.why.find("unreachable at") != std::string::npos);
  }
  SECTION("a first check in the future (clock moved back) starts again")
  {
    const auto v = release_verdict(SshProbe::unreachable, t0 + 300s, t0);
    CHECK_FALSE(v.released);
    CHECK(v.unreachable_since == t0);
  }
}

// SPDX-License-Identifier: MIT
// What `status` shows for a server's state: trouble wins over the billing state while it is up or
// stopped; each lifecycle state that may still bill says so, with the rate and the way out.
#include <catch2/catch.hpp>

#include "cli/server_warnings.hpp"

using namespace gpurent;

namespace {

ServerRecord rec(ServerStatus status, std::string trouble = "")
{
  ServerRecord r;
  r.name = "box";
  r.provider = "lambda";
  r.status = status;
  r.trouble = std::move(trouble);
  r.provider_state = r.trouble;
  return r;
}

bool any_has(const std::vector<std::string>& ws, const std::string& needle)
{
  for (const auto& w : ws) {
    if (w.find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("shown_state: the trouble word while up or stopped, else the ledger's state", "[cli][status]")
{
  CHECK(shown_state(rec(ServerStatus::running, "unhealthy")) == "unhealthy");
  CHECK(shown_state(rec(ServerStatus::stopped, "crashed")) == "crashed");
  CHECK(shown_state(rec(ServerStatus::running)) == "running");
  CHECK(shown_state(rec(ServerStatus::destroy_failed, "unhealthy")) == "destroy_failed");
  CHECK(shown_state(rec(ServerStatus::offline, "offline")) == "offline");
  CHECK(shown_state(rec(ServerStatus::release_pending)) == "release_pending");
}

TEST_CASE("lifecycle_warnings: what still bills, at what rate, and what to do", "[cli][status]")
{
  const MicroUsd rate{1'290'000};
  auto failed = lifecycle_warnings(rec(ServerStatus::destroy_failed), rate, "destroy failed: HTTP 500");
  CHECK(any_has(failed, "DESTROY FAILED (destroy failed: HTTP 500)"));
  CHECK(any_has(failed, "$1.29/h"));
  CHECK(any_has(failed, "gpurent down box --destroy"));
  auto pending = lifecycle_warnings(rec(ServerStatus::release_pending), rate, "");
  CHECK(any_has(pending, "gpurent down box --released"));
  CHECK(any_has(pending, "$1.29/h"));
  auto unhealthy = lifecycle_warnings(rec(ServerStatus::running, "unhealthy"), rate, "");
  REQUIRE(unhealthy.size() == 1);
  CHECK(unhealthy[0].rfind("unhealthy:", 0) == 0);
  CHECK(any_has(unhealthy, "$1.29/h"));
  auto crashed = lifecycle_warnings(rec(ServerStatus::stopped, "crashed"), MicroUsd{4'167}, "");
  CHECK(any_has(crashed, "$0.0042/h (storage)"));
  auto offline = lifecycle_warnings(rec(ServerStatus::offline, "offline"), MicroUsd{0}, "");
  REQUIRE(offline.size() == 1);  // one warning, not a second "trouble" one
  CHECK(any_has(offline, "charges nothing while it is offline"));
  CHECK(lifecycle_warnings(rec(ServerStatus::running), rate, "").empty());
}

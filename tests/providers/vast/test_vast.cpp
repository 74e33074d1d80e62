// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes/fake_http_client.hpp"
#include "providers/vast/vast_api.hpp"
#include "providers/vast/vast_provider.hpp"

using namespace gpurent;
using gpurent::test::FakeHttpClient;
using gpurent::test::read_fixture;

namespace {
const std::string k_base = "http://double/api/v0";
}

TEST_CASE("Vast API: actual_status null -> loading -> running, and its dead ends", "[providers][vast]")
{
  auto null_state = vast::parse_instance(read_fixture("vast/instance_null.json"));
  REQUIRE(null_state);
  REQUIRE(null_state->has_value());
  CHECK((*null_state)->state == InstanceState::pending);
  CHECK((*null_state)->raw_state == "null");
  auto running = vast::parse_instance(read_fixture("vast/instance_running.json"));
  REQUIRE(running);
  CHECK((*running)->state == InstanceState::running);
  CHECK((*running)->host == "203.0.113.5");  // direct SSH preferred over the proxy
  CHECK((*running)->port == 40022);
  CHECK((*running)->id == "4242");
  auto offline = vast::parse_instance(read_fixture("vast/instance_offline.json"));
  CHECK((*offline)->state == InstanceState::failed);
  CHECK(vast::map_status(std::string("exited")) == InstanceState::stopped);
  CHECK(vast::map_status(std::string("something new")) == InstanceState::unknown);
  auto gone = vast::parse_instance(R"({"instances": null})");
  REQUIRE(gone);
  CHECK_FALSE(gone->has_value());
  auto list = vast::parse_instances(read_fixture("vast/instances.json"));
  REQUIRE(list);
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].host == "ssh5.vast.ai");  // proxy when there is no direct port
  CHECK((*list)[0].port == 12345);
  CHECK((*list)[0].card == "a100-40gb");
  CHECK((*list)[1].card == "h200");
  CHECK_FALSE(vast::parse_instances(R"({"instances": {}})"));
}

TEST_CASE("Vast API: bundles keep the cheapest offer per card and GPU count", "[providers][vast]")
{
  auto bundles = vast::parse_bundles(read_fixture("vast/bundles.json"));
  REQUIRE(bundles);
  CHECK(bundles->size() == 4);
  const auto offers = vast::offers_from(*bundles);
  REQUIRE(offers.size() == 2);
  CHECK(offers[0].card == "a100-80gb");
  CHECK(offers[0].gpus == 2);
  CHECK(offers[1].card == "rtx-4090");
  CHECK(offers[1].price_per_hour.n == 389'000);
  CHECK(offers[1].spot_price_per_hour->n == 200'000);
  CHECK(offers[1].region == "Texas, US");
}

TEST_CASE("Vast driver: search, create, stop, destroy requests and errors", "[providers][vast]")
{
  FakeHttpClient http;
  vast::VastProvider p(http, k_base, "vast-key");
  http.on("GET " + k_base + "/instances/", 200, R"({"instances_found": 0, "instances": []})");
  http.on("POST " + k_base + "/bundles/", 200, read_fixture("vast/bundles.json"));
  http.on("PUT " + k_base + "/asks/1002/", 200, read_fixture("vast/create.json"));
  auto in = p.launch(LaunchRequest{"train-3", "rtx-4090", 1, false, "", MicroUsd{400'000}, "ssh-ed25519 AAAA k", ""});
  INFO((in ? std::string() : in.error().message));
  REQUIRE(in);
  CHECK(in->id == "4242");
  const auto search = nlohmann::json::parse(http.requests()[1].body);
  CHECK(search["gpu_name"]["in"][0] == "RTX 4090");
  CHECK(search["num_gpus"]["eq"] == 1);
  CHECK(search["type"] == "on-demand");
  const auto create = nlohmann::json::parse(http.requests().back().body);
  CHECK(create["label"] == "train-3");
  CHECK(create["onstart"].get<std::string>().find("ssh-ed25519 AAAA k") != std::string::npos);
  CHECK_FALSE(create.contains("price"));
  SECTION("max price leaves nothing")
  {
    auto r = p.launch(LaunchRequest{"t", "rtx-4090", 1, false, "", MicroUsd{100'000}, "ssh-ed25519 AAAA k", ""});
    CHECK(r.error().code == Errc::refused);
  }
  SECTION("stop, destroy, 404 on destroy is \"already gone\" (not_found), 429 on destroy is quota")
  {
    http.on("PUT " + k_base + "/instances/4242/", 200, R"({"success": true})");
    REQUIRE(p.stop("4242"));
    CHECK(nlohmann::json::parse(http.requests().back().body)["state"] == "stopped");
    http.on("DELETE " + k_base + "/instances/4242/", 404, R"({"success": false, "error": "not_found"})");
    CHECK(p.terminate("4242").error().code == Errc::not_found);
    CHECK(http.count("DELETE " + k_base + "/instances/4242/") == 1);
    http.on("DELETE " + k_base + "/instances/9/", 429, R"({"success": false, "error": "rate_limit_exceeded"})",
            {{"retry-after", "2"}});
    auto r = p.terminate("9");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    CHECK(r.error().message.find("rate_limit_exceeded") != std::string::npos);
  }
  SECTION("a key with a quote is refused")
  {
    CHECK(p.launch(LaunchRequest{"t", "rtx-4090", 1, false, "", std::nullopt, "ssh-ed25519 AA'AA", ""}).error().code ==
          Errc::invalid_input);
  }
}

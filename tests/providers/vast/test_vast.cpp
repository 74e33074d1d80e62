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
const std::string k_v1 = "http://double/api/v1";
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
  CHECK((*offline)->state == InstanceState::offline);
  CHECK((*offline)->trouble == "offline");
  CHECK(vast::map_status(std::string("exited")) == InstanceState::stopped);
  CHECK(vast::map_status(std::string("stopped")) == InstanceState::stopped);
  CHECK(vast::map_status(std::string("rebooting")) == InstanceState::pending);
  CHECK(vast::map_status(std::string("frozen")) == InstanceState::unknown);
  CHECK(vast::map_status(std::string("something new")) == InstanceState::unknown);
  // "exited: Container process exited unexpectedly" unless the user stopped it.
  CHECK(vast::trouble_of(std::string("exited"), "running") == "crashed");
  CHECK(vast::trouble_of(std::string("exited"), "").empty() == false);
  CHECK(vast::trouble_of(std::string("exited"), "stopped").empty());
  CHECK(vast::trouble_of(std::string("stopped"), "stopped").empty());
  CHECK(vast::trouble_of(std::string("unknown"), "running") == "unknown");
  CHECK(vast::trouble_of(std::string("frozen"), "frozen") == "frozen");
  CHECK(vast::trouble_of(std::string("something new"), "running") == "unknown");
  CHECK(vast::trouble_of(std::nullopt, "running").empty());
  CHECK(vast::trouble_of(std::string("running"), "running").empty());
  auto gone = vast::parse_instance(R"({"instances": null})");
  REQUIRE(gone);
  CHECK_FALSE(gone->has_value());
  auto list = vast::parse_instances(read_fixture("vast/instances.json"));
  REQUIRE(list);
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].host == "ssh5.vast.ai");  // proxy when there is no direct port
  CHECK((*list)[0].port == 12345);
  CHECK((*list)[0].card == "a100-40gb-sxm");
  CHECK((*list)[1].card == "h200");
  CHECK_FALSE(vast::parse_instances(R"({"instances": {}})"));
}

TEST_CASE("Vast API: answers with fields of the wrong type are errors, not exceptions", "[providers][vast]")
{
  // Found by fuzz_vast_api (fuzz/crashes/fuzz_vast_api/): nlohmann's value() throws when the
  // stored type differs from the default's.
  CHECK(vast::parse_create(R"({"success": "yes", "new_contract": 7})").error().code == Errc::invalid_input);
  CHECK(vast::parse_create(R"({"success": 1, "new_contract": 7})").error().code == Errc::invalid_input);
  CHECK(*vast::parse_create(R"({"success": true, "new_contract": 7})") == "7");
  // An empty id would read as "the provider never answered" in the state store.
  CHECK_FALSE(vast::parse_create(R"({"success": true, "new_contract": ""})"));
  CHECK_FALSE(vast::parse_instance(R"({"instances": {"id": ""}})"));
  // gpu_ram out of any integer's range was cast to one (undefined behaviour): no RAM then.
  const auto bundles = vast::parse_bundles(
      R"({"offers": [{"id": 1, "dph_total": 1, "gpu_ram": -1e300, "gpu_name": "A100 SXM4", "num_gpus": 1},
                     {"id": 2, "dph_total": 1, "gpu_ram": 1e300, "gpu_name": "A100 SXM4", "num_gpus": 1}]})");
  REQUIRE(bundles);
  REQUIRE(bundles->size() == 2);
  CHECK((*bundles)[0].gpu_ram_mb == 0);
  CHECK((*bundles)[1].gpu_ram_mb == 0);
  const auto instance = vast::parse_instance(R"({"instances": {"id": 3, "gpu_ram": 1e300, "gpu_name": "A100 SXM4"}})");
  REQUIRE(instance);
  CHECK((*instance)->card == "a100-40gb-sxm");
}

TEST_CASE("Vast API: the paginated list, storage per hour, a crash and a stop", "[providers][vast]")
{
  auto page = vast::parse_instance_page(read_fixture("vast/instances_v1_page1.json"));
  REQUIRE(page);
  CHECK(page->next_token == "eyJ2YWx1ZXMiOiB7ImlkIjogOH19");
  REQUIRE(page->instances.size() == 2);
  const Instance& crashed = page->instances[0];
  CHECK(crashed.state == InstanceState::stopped);
  CHECK(crashed.trouble == "crashed");
  CHECK(crashed.trouble_detail.find("exited with code 137") != std::string::npos);
  CHECK(crashed.price_per_hour.n == 1'002'074);  // dph_total, storage included
  CHECK(crashed.storage_per_hour.n == 2'074);    // instance.diskHour
  auto last = vast::parse_instance_page(read_fixture("vast/instances_v1_page2.json"));
  REQUIRE(last);
  CHECK(last->next_token.empty());
  REQUIRE(last->instances.size() == 1);
  CHECK(last->instances[0].trouble.empty());  // stopped by the user
  // No breakdown, no storage_total_cost: 0.15 $/GB/month x 20 GB / 720 h = 4166.67 -> 4167.
  CHECK(last->instances[0].storage_per_hour.n == 4'167);
  CHECK(vast::instances_query("") ==
        "limit=25&select_filters=%7B%7D&order_by=%5B%7B%22col%22%3A%22id%22%2C%22dir%22%3A%22asc%22%7D%5D");
  CHECK(vast::instances_query("ab=") .ends_with("&after_token=ab%3D"));
  auto keys = vast::parse_ssh_keys(read_fixture("vast/ssh_keys.json"));
  REQUIRE(keys);
  REQUIRE(keys->size() == 1);  // the deleted one is not a key any more
  CHECK((*keys)[0] == "ssh-ed25519 AAAAexisting old-comment");
  CHECK_FALSE(vast::parse_ssh_keys("{}"));
}

TEST_CASE("Vast API: bundles keep the cheapest offer per card and GPU count", "[providers][vast]")
{
  auto bundles = vast::parse_bundles(read_fixture("vast/bundles.json"));
  REQUIRE(bundles);
  CHECK(bundles->size() == 4);
  const auto offers = vast::offers_from(*bundles);
  REQUIRE(offers.size() == 2);
  CHECK(offers[0].card == "a100-80gb-sxm");
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
  const std::string list_url = "GET " + k_v1 + "/instances/?" + vast::instances_query("");
  http.on(list_url, 200, R"({"success": true, "instances_found": 0, "instances": [], "next_token": null})");
  http.on("POST " + k_base + "/bundles/", 200, read_fixture("vast/bundles.json"));
  http.on("GET " + k_base + "/ssh/", 404, R"({"success": false, "error": "not_found"})");  // "No SSH keys found"
  http.on("POST " + k_base + "/ssh/", 200, R"({"success": true, "key": {"id": 1, "public_key": "ssh-ed25519 AAAA k"}})");
  http.on("PUT " + k_base + "/asks/1002/", 200, read_fixture("vast/create.json"));
  auto in = p.launch(LaunchRequest{"train-3", "rtx-4090", 1, false, "", MicroUsd{400'000}, "ssh-ed25519 AAAA k", ""});
  INFO((in ? std::string() : in.error().message));
  REQUIRE(in);
  CHECK(in->id == "4242");
  CHECK(in->price_per_hour.n == 389'000);
  CHECK(http.count("GET " + k_base + "/instances/") == 0);  // the deprecated v0 list is not used
  CHECK(http.count(list_url) == 1);
  const auto search = nlohmann::json::parse(http.requests()[1].body);
  CHECK(search["gpu_name"]["in"][0] == "RTX 4090");
  CHECK(search["num_gpus"]["eq"] == 1);
  CHECK(search["type"] == "on-demand");
  CHECK(search["allocated_storage"] == vast::k_disk_gb);  // so dph_total includes the disk
  // The key is registered on the account before the create, and not put in onstart.
  CHECK(http.count("POST " + k_base + "/ssh/") == 1);
  CHECK(nlohmann::json::parse(http.requests()[3].body)["ssh_key"] == "ssh-ed25519 AAAA k");
  const auto create = nlohmann::json::parse(http.requests().back().body);
  CHECK(create["label"] == "train-3");
  CHECK(create["disk"] == vast::k_disk_gb);
  CHECK_FALSE(create.contains("onstart"));
  CHECK_FALSE(create.contains("price"));
  SECTION("a key the account has (another comment) is not added again")
  {
    FakeHttpClient h2;
    vast::VastProvider p2(h2, k_base, "vast-key");
    h2.on(list_url, 200, R"({"instances": [], "next_token": null})");
    h2.on("POST " + k_base + "/bundles/", 200, read_fixture("vast/bundles.json"));
    h2.on("GET " + k_base + "/ssh/", 200, read_fixture("vast/ssh_keys.json"));
    h2.on("PUT " + k_base + "/asks/1002/", 200, read_fixture("vast/create.json"));
    REQUIRE(p2.launch(LaunchRequest{"t", "rtx-4090", 1, false, "", std::nullopt, "ssh-ed25519 AAAAexisting me@box", ""}));
    CHECK(h2.count("POST " + k_base + "/ssh/") == 0);
  }
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
    http.on("DELETE " + k_base + "/instances/4242/", 404, R"({"success": false, "error": "not_found", "msg": "Instance not found"})");
    CHECK(p.terminate("4242").error().code == Errc::not_found);
    CHECK(http.count("DELETE " + k_base + "/instances/4242/") == 1);
    http.on("DELETE " + k_base + "/instances/9/", 429, R"({"success": false, "error": "rate_limit_exceeded"})");
    auto r = p.terminate("9");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    CHECK_FALSE(r.error().retry_after);  // Vast sends no Retry-After: the HTTP layer backs off
    CHECK(r.error().message.find("rate_limit_exceeded") != std::string::npos);
  }
  SECTION("a key with a newline is refused")
  {
    CHECK(p.launch(LaunchRequest{"t", "rtx-4090", 1, false, "", std::nullopt, "ssh-ed25519 AA\nAA", ""}).error().code ==
          Errc::invalid_input);
  }
}

TEST_CASE("Vast driver: the list follows next_token through every page", "[providers][vast]")
{
  FakeHttpClient http;
  vast::VastProvider p(http, k_base, "vast-key");
  http.on("GET " + k_v1 + "/instances/?" + vast::instances_query(""), 200, read_fixture("vast/instances_v1_page1.json"));
  http.on("GET " + k_v1 + "/instances/?" + vast::instances_query("eyJ2YWx1ZXMiOiB7ImlkIjogOH19"), 200,
          read_fixture("vast/instances_v1_page2.json"));
  auto all = p.list();
  REQUIRE(all);
  REQUIRE(all->size() == 3);
  CHECK((*all)[2].name == "stopped-one");
  SECTION("a page that points to itself is an error, not a loop")
  {
    FakeHttpClient h2;
    vast::VastProvider p2(h2, k_base, "vast-key");
    h2.on("GET " + k_v1 + "/instances/?" + vast::instances_query(""), 200, R"({"instances": [], "next_token": "x"})");
    h2.on("GET " + k_v1 + "/instances/?" + vast::instances_query("x"), 200, R"({"instances": [], "next_token": "x"})");
    CHECK_FALSE(p2.list());
  }
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes/fake_http_client.hpp"
#include "providers/lambda/lambda_api.hpp"
#include "providers/lambda/lambda_provider.hpp"

using namespace gpurent;
using gpurent::test::FakeHttpClient;
using gpurent::test::read_fixture;

namespace {
const std::string k_base = "http://double";
const std::string k_key = "lambda-secret-key-123";
const std::string k_pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAImine me@laptop";
}  // namespace

TEST_CASE("Lambda API: instance types map to offers only for known cards, with capacity regions", "[providers][lambda]")
{
  auto types = lambda::parse_instance_types(read_fixture("lambda/instance_types.json"));
  REQUIRE(types);
  REQUIRE(types->size() == 4);
  const auto offers = lambda::offers_from(*types, "2026-11-30T10:00:00Z");
  REQUIRE(offers.size() == 3);  // "Tesla V100 (16 GB)" names no form factor: no card, no offer
  for (const auto& o : offers) {
    if (o.card == "a100-40gb-sxm") {
      CHECK(o.gpus == 1);
      CHECK(o.price_per_hour.n == 1'290'000);  // 129 cents
      CHECK(o.region == "us-east-1");
    } else if (o.card == "gh200") {
      CHECK(o.gpus == 1);
      CHECK(o.price_per_hour.n == 1'490'000);
      CHECK(o.region == "us-west-1");
    } else {
      CHECK(o.card == "h100-sxm");
      CHECK(o.gpus == 8);
      CHECK(o.price_per_hour.n == 23'920'000);
      CHECK(o.region.empty());  // no capacity anywhere
    }
  }
  CHECK_FALSE(lambda::parse_instance_types(R"({"data": []})"));
  CHECK_FALSE(lambda::parse_instance_types(R"({"data": {"x": {"instance_type": {"price_cents_per_hour": 1.5}}}})"));
  CHECK_FALSE(lambda::parse_instance_types("not json"));
}

TEST_CASE("Lambda API: statuses, booting without an ip, unknown states", "[providers][lambda]")
{
  auto booting = lambda::parse_instance(read_fixture("lambda/instance_booting.json"));
  REQUIRE(booting);
  CHECK(booting->state == InstanceState::pending);
  CHECK(booting->host.empty());
  CHECK(booting->card == "a100-40gb-sxm");
  auto active = lambda::parse_instance(read_fixture("lambda/instance_active.json"));
  REQUIRE(active);
  CHECK(active->state == InstanceState::running);
  CHECK(active->host == "198.51.100.2");
  CHECK(active->user == "ubuntu");
  CHECK(active->price_per_hour.n == 1'290'000);
  auto list = lambda::parse_instances(read_fixture("lambda/instances.json"));
  REQUIRE(list);
  REQUIRE(list->size() == 3);
  CHECK((*list)[1].state == InstanceState::terminated);
  CHECK((*list)[2].state == InstanceState::unknown);
  CHECK((*list)[2].trouble == "unknown");
  CHECK((*list)[2].trouble_detail.find("quantum-flux") != std::string::npos);
  CHECK((*list)[0].trouble.empty());
  CHECK(lambda::map_status("preempted") == InstanceState::terminated);  // Lambda took it back: gone, no longer billed
  CHECK(lambda::map_status("unhealthy") == InstanceState::failed);
  CHECK(lambda::trouble_of("unhealthy") == "unhealthy");
  CHECK(lambda::trouble_of("preempted") == "preempted");
  CHECK(lambda::trouble_of("quantum-flux") == "unknown");
  CHECK(lambda::trouble_of("active").empty());
  CHECK(lambda::trouble_of("booting").empty());
  CHECK(lambda::map_status("unhealthy") == InstanceState::failed);
  CHECK(lambda::card_of("A100 (80 GB SXM4)") == std::optional<std::string>("a100-80gb-sxm"));
  CHECK(lambda::card_of("A100 (40 GB PCIe)") == std::optional<std::string>("a100-40gb-pcie"));
  CHECK(lambda::card_of("H100 (80 GB PCIe)") == std::optional<std::string>("h100-pcie"));
  CHECK(lambda::card_of("H100 (80 GB SXM5)") == std::optional<std::string>("h100-sxm"));
  CHECK_FALSE(lambda::card_of("A100 (12 GB)"));
  CHECK(lambda::card_of("GH200 (96 GB)") == std::optional<std::string>("gh200"));
  CHECK_FALSE(lambda::card_of("GH200 (144 GB)"));     // the HBM3e superchip is not a card here
  CHECK_FALSE(lambda::card_of("Tesla V100 (16 GB)"));  // SXM2 or PCIe: not said
}

TEST_CASE("Lambda API: implausible prices and empty ids are refused, not overflowed", "[providers][lambda]")
{
  // Found while writing fuzz_lambda_api and replayed by it (fuzz/crashes/fuzz_lambda_api/): cents
  // times 10'000 overflowed (undefined behaviour) for prices past $92 billion an hour; an empty
  // id would read as "the provider never answered" in the state store.
  CHECK_FALSE(lambda::parse_instance_types(
      R"j({"data": {"x": {"instance_type": {"price_cents_per_hour": 922337203685478, "gpu_description": "A100 (40 GB SXM4)"}}}})j"));
  CHECK(lambda::parse_instance_types(R"({"data": {"x": {"instance_type": {"price_cents_per_hour": 10000000}}}})"));
  const auto huge = lambda::parse_instance(
      R"({"data": {"id": "i", "status": "active", "instance_type": {"price_cents_per_hour": -922337203685478}}})");
  REQUIRE(huge);
  CHECK(huge->price_per_hour.n == 0);  // not reported
  CHECK_FALSE(lambda::parse_instance(R"({"data": {"id": "", "status": "active"}})"));
  CHECK(*lambda::parse_launch(R"({"data": {"instance_ids": ["", "i-1"]}})") == std::vector<std::string>{"i-1"});
}

TEST_CASE("Lambda driver: launch sends the documented request and parses the answer", "[providers][lambda]")
{
  FakeHttpClient http;
  http.on("GET " + k_base + "/api/v1/instances", 200, R"({"data": []})");
  http.on("GET " + k_base + "/api/v1/instance-types", 200, read_fixture("lambda/instance_types.json"));
  http.on("GET " + k_base + "/api/v1/ssh-keys", 200, read_fixture("lambda/ssh_keys.json"));
  http.on("POST " + k_base + "/api/v1/ssh-keys", 200, R"({"data": {"id": "k2", "name": "gpurent-x", "public_key": "x"}})");
  http.on("POST " + k_base + "/api/v1/instance-operations/launch", 200, read_fixture("lambda/launch.json"));
  lambda::LambdaProvider p(http, k_base + "/", k_key);
  LaunchRequest req{"train-1", "a100-40gb", 1, false, "", std::nullopt, k_pub, ""};
  auto in = p.launch(req);
  REQUIRE(in);
  CHECK(in->id == "0920582c7ff041399e34823a0be62549");
  CHECK(in->state == InstanceState::pending);
  CHECK(in->region == "us-east-1");
  const auto& sent = http.requests().back();
  CHECK(sent.method == "POST");
  CHECK(sent.url == k_base + "/api/v1/instance-operations/launch");
  const auto body = nlohmann::json::parse(sent.body);
  CHECK(body["region_name"] == "us-east-1");
  CHECK(body["instance_type_name"] == "gpu_1x_a100_sxm4");
  CHECK(body["name"] == "train-1");
  REQUIRE(body["ssh_key_names"].size() == 1);
  CHECK(body["ssh_key_names"][0].get<std::string>().rfind("gpurent-", 0) == 0);
  for (const auto& r : http.requests()) {
    CHECK(r.url.find(k_key) == std::string::npos);
    bool auth = false;
    for (const auto& [k, v] : r.headers) {
      auth = auth || (k == "Authorization" && v == "Bearer " + k_key);
    }
    CHECK(auth);
  }
  SECTION("idempotent on the name")
  {
    FakeHttpClient again;
    again.on("GET " + k_base + "/api/v1/instances", 200,
             R"({"data": [{"id": "same", "name": "train-1", "status": "booting"}]})");
    lambda::LambdaProvider p2(again, k_base, k_key);
    auto same = p2.launch(req);
    REQUIRE(same);
    CHECK(same->id == "same");
    CHECK(again.requests().size() == 1);
  }
}

TEST_CASE("Lambda driver: errors map by code and status", "[providers][lambda]")
{
  FakeHttpClient http;
  lambda::LambdaProvider p(http, k_base, k_key);
  http.on("GET " + k_base + "/api/v1/instances", 200, R"({"data": []})");
  http.on("GET " + k_base + "/api/v1/instance-types", 200, read_fixture("lambda/instance_types.json"));
  http.on("GET " + k_base + "/api/v1/ssh-keys", 200, read_fixture("lambda/ssh_keys.json"));
  http.on("POST " + k_base + "/api/v1/ssh-keys", 200, R"({"data": {}})");
  SECTION("insufficient capacity is a clear quota error")
  {
    http.on("POST " + k_base + "/api/v1/instance-operations/launch", 400, read_fixture("lambda/error_insufficient_capacity.json"));
    auto r = p.launch(LaunchRequest{"x", "a100-40gb", 1, false, "", std::nullopt, k_pub, ""});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    CHECK(r.error().message.find("no capacity") != std::string::npos);
    CHECK_FALSE(r.error().retry_after);
  }
  SECTION("no region with capacity is refused before any launch call")
  {
    auto r = p.launch(LaunchRequest{"x", "h100-80gb", 8, false, "", std::nullopt, k_pub, ""});
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    CHECK(http.count("POST " + k_base + "/api/v1/instance-operations/launch") == 0);
  }
  SECTION("401")
  {
    http.on("GET " + k_base + "/api/v1/instances/abc", 401, read_fixture("lambda/error_invalid_api_key.json"));
    auto r = p.get("abc");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::unauthorized);
    CHECK(r.error().message.find("global/invalid-api-key") != std::string::npos);
    CHECK(r.error().message.find(k_key) == std::string::npos);
  }
  SECTION("429 with Retry-After")
  {
    http.on("GET " + k_base + "/api/v1/instances/abc", 429, R"({"error":{"code":"global/too-many-requests","message":"slow down"}})",
            {{"retry-after", "7"}});
    auto r = p.get("abc");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::quota);
    REQUIRE(r.error().retry_after);
    CHECK(r.error().retry_after->count() == 7);
  }
  SECTION("500 and 404")
  {
    http.on("GET " + k_base + "/api/v1/instances/abc", 500, R"({"error":{"code":"global/internal-error","message":"x"}})");
    CHECK(p.get("abc").error().code == Errc::unavailable);
    http.on("GET " + k_base + "/api/v1/instances/gone", 404, R"({"error":{"code":"global/object-does-not-exist","message":"x"}})");
    auto gone = p.get("gone");
    REQUIRE(gone);
    CHECK_FALSE(gone->has_value());
  }
  SECTION("no stop or hibernate, with the reason")
  {
    CHECK(p.unsupported(Feature::stop));
    CHECK(p.stop("abc").error().code == Errc::unsupported);
    CHECK(p.hibernate("abc").error().message.find("hibernate") != std::string::npos);
  }
  SECTION("terminate sends the id list, once")
  {
    http.on("POST " + k_base + "/api/v1/instance-operations/terminate", 200, R"({"data":{"terminated_instances":[]}})");
    REQUIRE(p.terminate("abc"));
    CHECK(nlohmann::json::parse(http.requests().back().body)["instance_ids"][0] == "abc");
    CHECK(http.count("POST " + k_base + "/api/v1/instance-operations/terminate") == 1);
  }
  SECTION("terminate of an instance Lambda does not have: not_found (\"already gone\"), to be confirmed")
  {
    http.on("POST " + k_base + "/api/v1/instance-operations/terminate", 404,
            R"({"error":{"code":"global/object-does-not-exist","message":"Specified instance does not exist."}})");
    CHECK(p.terminate("abc").error().code == Errc::not_found);
  }
  SECTION("a 400 on get: the list decides")
  {
    http.on("GET " + k_base + "/api/v1/instances/abc", 400, R"({"error":{"code":"global/invalid-parameters","message":"x"}})");
    http.on("GET " + k_base + "/api/v1/instances", 200, read_fixture("lambda/instances.json"));
    auto r = p.get("abc");
    REQUIRE(r);
    CHECK_FALSE(r->has_value());
    http.on("GET " + k_base + "/api/v1/instances/aaa1", 400, R"({"error":{"code":"global/invalid-parameters","message":"x"}})");
    auto listed = p.get("aaa1");
    REQUIRE(listed);
    REQUIRE(listed->has_value());
    CHECK((*listed)->name == "other");
  }
}

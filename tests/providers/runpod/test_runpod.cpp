// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes/fake_http_client.hpp"
#include "providers/runpod/runpod_api.hpp"
#include "providers/runpod/runpod_provider.hpp"

using namespace gpurent;
using gpurent::test::FakeHttpClient;
using gpurent::test::read_fixture;

namespace {
const std::string k_base = "http://double/v1";
const std::string k_gql = "http://double/graphql";
}  // namespace

TEST_CASE("RunPod API: a pod without publicIp is still booting, portMappings give the SSH port", "[providers][runpod]")
{
  auto booting = runpod::parse_pod(read_fixture("runpod/pod_booting.json"));
  REQUIRE(booting);
  CHECK(booting->state == InstanceState::pending);
  CHECK(booting->price_per_hour.n == 740'000);  // "0.74" as a string
  CHECK(booting->card == "rtx-4090");
  auto running = runpod::parse_pod(read_fixture("runpod/pod_running.json"));
  REQUIRE(running);
  CHECK(running->state == InstanceState::running);
  CHECK(running->host == "100.65.0.119");
  CHECK(running->port == 10341);
  auto pods = runpod::parse_pods(read_fixture("runpod/pods.json"));
  REQUIRE(pods);
  REQUIRE(pods->size() == 3);
  CHECK((*pods)[0].state == InstanceState::stopped);
  CHECK((*pods)[0].card == "a100-80gb-pcie");
  CHECK((*pods)[0].gpus == 2);
  CHECK((*pods)[1].state == InstanceState::terminated);
  CHECK((*pods)[2].state == InstanceState::unknown);
  CHECK_FALSE(runpod::parse_pods(R"({"pods": []})"));
  CHECK_FALSE(runpod::parse_pod(R"({"name": "no id"})"));
}

TEST_CASE("RunPod API: a pod with an empty id is refused", "[providers][runpod]")
{
  // Found by fuzz_runpod_api (fuzz/crashes/fuzz_runpod_api/): an empty id would read as "the
  // provider never answered" in the state store, and GET /pods/ lists every pod.
  CHECK_FALSE(runpod::parse_pod(R"({"id": "", "portMappings": {"22": 10341}, "interruptible": false})"));
  CHECK_FALSE(runpod::parse_pods(R"([{"id": "p1"}, {"id": ""}])"));
}

TEST_CASE("RunPod API: GPU prices are per GPU and known cards only", "[providers][runpod]")
{
  auto offers = runpod::parse_gpu_types(read_fixture("runpod/gpu_types.json"));
  REQUIRE(offers);
  REQUIRE(offers->size() == 12);  // 4090, H100 NVL and A100 80GB PCIe x {1,2,4,8}
  CHECK((*offers)[0].card == "rtx-4090");
  CHECK((*offers)[0].price_per_hour.n == 690'000);
  CHECK((*offers)[0].spot_price_per_hour->n == 350'000);
  CHECK((*offers)[3].gpus == 8);
  CHECK((*offers)[3].price_per_hour.n == 5'520'000);
  CHECK((*offers)[4].card == "h100-nvl");  // a different card from the H100 SXM, at its own price
  CHECK((*offers)[4].price_per_hour.n == 2'590'000);
  CHECK((*offers)[8].card == "a100-80gb-pcie");
  CHECK_FALSE((*offers)[8].spot_price_per_hour);
  // RunPod's gpuTypeIds say the V100's form factor: the SXM2 modules are cards, the PCIe ones not.
  CHECK(runpod::card_of("NVIDIA A40") == std::optional<std::string>("a40"));
  CHECK(runpod::card_of("NVIDIA L40") == std::optional<std::string>("l40"));
  CHECK(runpod::card_of("Tesla V100-SXM2-16GB") == std::optional<std::string>("v100-16gb-sxm"));
  CHECK(runpod::card_of("Tesla V100-SXM2-32GB") == std::optional<std::string>("v100-32gb-sxm"));
  CHECK_FALSE(runpod::card_of("Tesla V100-PCIE-16GB"));
  CHECK(runpod::gpu_type_ids("a40") == std::vector<std::string>{"NVIDIA A40"});
}

TEST_CASE("RunPod driver: create, stop, terminate requests and error mapping", "[providers][runpod]")
{
  FakeHttpClient http;
  runpod::RunpodProvider p(http, k_base, k_gql, "rp-key");
  http.on("GET " + k_base + "/pods", 200, "[]");
  http.on("POST " + k_base + "/pods", 201, read_fixture("runpod/pod_booting.json"));
  auto in = p.launch(LaunchRequest{"train-2", "rtx-4090", 1, true, "", std::nullopt, "ssh-ed25519 AAAA k", ""});
  REQUIRE(in);
  CHECK(in->id == "xedezhzb9la3ye");
  const auto body = nlohmann::json::parse(http.requests().back().body);
  CHECK(body["name"] == "train-2");
  CHECK(body["gpuTypeIds"][0] == "NVIDIA GeForce RTX 4090");
  CHECK(body["gpuCount"] == 1);
  CHECK(body["interruptible"] == true);
  CHECK(body["ports"][0] == "22/tcp");
  CHECK(body["env"]["PUBLIC_KEY"] == "ssh-ed25519 AAAA k");

  SECTION("stop and delete")
  {
    http.on("POST " + k_base + "/pods/abc/stop", 200, read_fixture("runpod/pod_running.json"));
    REQUIRE(p.stop("abc"));
    http.on("DELETE " + k_base + "/pods/abc", 204, "");
    REQUIRE(p.terminate("abc"));
    CHECK(http.requests().back().method == "DELETE");
  }
  SECTION("errors")
  {
    http.on("GET " + k_base + "/pods/abc", 401, R"({"error": "invalid api key"})");
    auto r = p.get("abc");
    CHECK(r.error().code == Errc::unauthorized);
    http.on("GET " + k_base + "/pods/def", 503, "");
    CHECK(p.get("def").error().code == Errc::unavailable);
    http.on("GET " + k_base + "/pods/ghi", 429, "", {{"retry-after", "3"}});
    CHECK(p.get("ghi").error().retry_after->count() == 3);
    CHECK(p.hibernate("abc").error().code == Errc::unsupported);
  }
  SECTION("the driver leaves --max-price to the caller: the created pod comes back with its price")
  {
    FakeHttpClient h2;
    runpod::RunpodProvider p2(h2, k_base, k_gql, "rp-key");
    h2.on("GET " + k_base + "/pods", 200, "[]");
    h2.on("POST " + k_base + "/pods", 201, read_fixture("runpod/pod_booting.json"));
    auto r = p2.launch(LaunchRequest{"t", "rtx-4090", 1, false, "", MicroUsd{500'000}, "ssh-ed25519 AAAA k", ""});
    REQUIRE(r);
    CHECK(r->price_per_hour.n == 740'000);
    CHECK(h2.count("DELETE " + k_base + "/pods/xedezhzb9la3ye") == 0);
  }
  SECTION("DELETE: 204 once; 400 \"Invalid Pod ID.\" and 404 are \"already gone\"; 401 and 500 are errors")
  {
    http.on("DELETE " + k_base + "/pods/abc", 400, "Invalid Pod ID.");
    CHECK(p.terminate("abc").error().code == Errc::not_found);
    CHECK(http.count("DELETE " + k_base + "/pods/abc") == 1);
    http.on("DELETE " + k_base + "/pods/def", 404, "");
    CHECK(p.terminate("def").error().code == Errc::not_found);
    http.on("DELETE " + k_base + "/pods/ghi", 401, "");
    CHECK(p.terminate("ghi").error().code == Errc::unauthorized);
    http.on("DELETE " + k_base + "/pods/jkl", 500, "");
    CHECK(p.terminate("jkl").error().code == Errc::unavailable);
  }
  SECTION("GET 400 \"Invalid ID supplied.\": the list decides")
  {
    FakeHttpClient h3;
    runpod::RunpodProvider p3(h3, k_base, k_gql, "rp-key");
    h3.on("GET " + k_base + "/pods/p1", 400, "");
    h3.on("GET " + k_base + "/pods", 200, read_fixture("runpod/pods.json"));
    auto listed = p3.get("p1");
    REQUIRE(listed);
    REQUIRE(listed->has_value());
    CHECK((*listed)->state == InstanceState::stopped);
    h3.on("GET " + k_base + "/pods/zz", 400, "");
    auto none = p3.get("zz");
    REQUIRE(none);
    CHECK_FALSE(none->has_value());
  }
}

TEST_CASE("RunPod API: EXITED with a non-zero exit code is a crash, unknown statuses are trouble", "[providers][runpod]")
{
  CHECK(runpod::exit_code_in("Exited by Runpod: container exit code 137") == 137);
  CHECK(runpod::exit_code_in("exited with code: 1") == 1);
  CHECK(runpod::exit_code_in("Exit code = 0") == 0);
  CHECK_FALSE(runpod::exit_code_in("Rented by User: Fri Jul 12 2024 15:14:40 GMT-0400"));
  CHECK_FALSE(runpod::exit_code_in("zip code 12345"));
  CHECK_FALSE(runpod::exit_code_in(""));
  auto crashed = runpod::parse_pod(R"({"id":"p","desiredStatus":"EXITED","lastStatusChange":"exited with code 2"})");
  REQUIRE(crashed);
  CHECK(crashed->state == InstanceState::stopped);
  CHECK(crashed->trouble == "crashed");
  CHECK(crashed->trouble_detail.find("code 2") != std::string::npos);
  auto clean = runpod::parse_pod(R"({"id":"p","desiredStatus":"EXITED","lastStatusChange":"exited with code 0"})");
  REQUIRE(clean);
  CHECK(clean->trouble.empty());
  auto pods = runpod::parse_pods(read_fixture("runpod/pods.json"));
  REQUIRE(pods);
  CHECK((*pods)[2].trouble == "unknown");
  CHECK((*pods)[2].trouble_detail.find("MIGRATING") != std::string::npos);
}

TEST_CASE("RunPod API: a stopped pod's volume disk bills $0.20/GB-month, the container disk nothing", "[providers][runpod]")
{
  // docs.runpod.io/pods/storage: volume disk $0.10/GB/month running, $0.20 stopped; the
  // container disk is cleared on stop and paid for only while running.
  CHECK(runpod::stopped_volume_per_hour(0) == MicroUsd{0});
  CHECK(runpod::stopped_volume_per_hour(20) == MicroUsd{5480});        // $4.00/month over 730 h, rounded up
  CHECK(runpod::stopped_volume_per_hour(1000) == MicroUsd{273973});    // 1 TB: $200/month
  auto exited = runpod::parse_pod(
      R"({"id":"p","desiredStatus":"EXITED","costPerHr":0.69,"volumeInGb":20,"containerDiskInGb":50})");
  REQUIRE(exited);
  CHECK(exited->stopped_per_hour == MicroUsd{5480});
  auto no_volume = runpod::parse_pod(R"({"id":"p","desiredStatus":"EXITED","containerDiskInGb":50})");
  REQUIRE(no_volume);
  CHECK(no_volume->stopped_per_hour == MicroUsd{0});
  for (const char* bad : {R"({"id":"p","volumeInGb":-5})", R"({"id":"p","volumeInGb":"20"})", R"({"id":"p","volumeInGb":1e300})"}) {
    auto pod = runpod::parse_pod(bad);
    REQUIRE(pod);
    CHECK(pod->stopped_per_hour == MicroUsd{0});
  }
}

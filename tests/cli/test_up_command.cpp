// SPDX-License-Identifier: MIT
// `gpurent up --from-plan MODEL`: plan's sizing and ranking among the providers with an API,
// then the normal `up` (confirmation, recording before the create call). In-process, with a
// real state database in a temp dir and a fake RunPod API.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdlib.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli_harness.hpp"
#include "fakes/fake_http_client.hpp"
#include "providers/lifecycle.hpp"
#include "providers/state_store.hpp"

using gpurent::test::CliHarness;
using gpurent::test::CliRun;
using gpurent::test::FakeHttpClient;
using gpurent::test::read_fixture;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string k_runpod = "https://runpod.test/v1";

class UpHarness {
public:
  UpHarness()
  {
    std::string tmpl = (fs::temp_directory_path() / "gpurent-up-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    m_dir = tmpl;
    std::ofstream(m_dir / "id_ed25519.pub") << "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpyZW50LXRlc3Qta2V5LW5vdC1yZWFs test\n";
    fs::create_directories(m_dir / "config" / "gpurent");
    h.env["XDG_CONFIG_HOME"] = (m_dir / "config").string();
    h.env["GPURENT_STATE_DIR"] = (m_dir / "state").string();
    h.env["RUNPOD_API_KEY"] = "rp-test-key";
    h.env["LAMBDA_API_KEY"] = "lambda-test-key";
    h.env["VAST_API_KEY"] = "vast-test-key";
    h.env["GPURENT_RUNPOD_API_URL"] = k_runpod;
    h.env["GPURENT_LAMBDA_API_URL"] = "https://lambda.test";
    h.env["GPURENT_VAST_API_URL"] = "https://vast.test/api/v0";
    h.env["GPURENT_POLL_MS"] = "10";
    const fs::path db = m_dir / "state" / "state.db";
    gpurent::Result<std::unique_ptr<gpurent::StateStore>> opened = std::unexpected(gpurent::Error{});
    gpurent_open_state_store(&db, &opened);
    REQUIRE(opened);
    m_store = std::move(*opened);
    h.setup = [this](gpurent::Services& s) {
      s.state = [this]() -> gpurent::Result<gpurent::StateStore*> { return m_store.get(); };
      s.http = [this]() -> gpurent::Result<gpurent::HttpClient*> { return &http; };
    };
  }
  ~UpHarness()
  {
    m_store.reset();
    std::error_code ec;
    fs::remove_all(m_dir, ec);
  }
  UpHarness(const UpHarness&) = delete;
  UpHarness& operator=(const UpHarness&) = delete;

  void config(const std::string& text) { std::ofstream(m_dir / "config" / "gpurent" / "config.toml") << text; }
  CliRun up(std::vector<std::string> args)
  {
    args.insert(args.begin(), "up");
    args.push_back("--ssh-key");
    args.push_back((m_dir / "id_ed25519.pub").string());
    return h.run(args);
  }
  std::vector<gpurent::ServerRecord> servers() { return *m_store->list_servers(true); }
  gpurent::StateStore& store() { return *m_store; }

  CliHarness h;
  FakeHttpClient http;

private:
  fs::path m_dir;
  std::unique_ptr<gpurent::StateStore> m_store;
};

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("up --from-plan: the cheapest fit among providers with an API is rented, recorded first", "[cli][up]")
{
  UpHarness u;
  // A cheaper card at a provider without an API: named, not chosen. RunPod's RTX 3090 at $0.24
  // from the config is the cheapest fit with an API (the snapshot's Vast RTX 3090 is $0.25).
  u.config("[prices.cloudgpu]\n\"rtx-4090\" = 0.10\n[prices.runpod]\n\"rtx-3090\" = 0.24\n");
  const std::string pod_id = "xedezhzb9la3ye";
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  Json created = Json::parse(read_fixture("runpod/pod_booting.json"));
  created["costPerHr"] = 0.24;  // the price plan ranked it at: no more than the quote
  u.http.on("POST " + k_runpod + "/pods", 201, created.dump());
  Json running = Json::parse(read_fixture("runpod/pod_running.json"));
  running["id"] = pod_id;
  running["name"] = "fp";
  running["costPerHr"] = 0.24;
  u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, running.dump());
  Json booting = Json::parse(read_fixture("runpod/pod_booting.json"));
  INFO("the booting fixture's id must be the running one's: " << booting.value("id", ""));
  REQUIRE(booting.value("id", "") == pod_id);

  // --rentable: among the clouds gpurent rents (without it, the cheaper cloudgpu is refused: test_market_rank).
  const auto r = u.up({"--from-plan", "llama-3.1-8b", "--rentable", "--name", "fp", "--yes", "--no-wait", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["provider"] == "runpod");
  CHECK(j["card"] == "rtx-3090");
  CHECK(j["gpus"] == 1);
  CHECK(j["state"] == "running");
  REQUIRE(j.contains("plan"));
  const Json& plan = j["plan"];
  CHECK(plan["model"] == "llama-3.1-8b");
  CHECK(plan["provider"] == "runpod");
  CHECK(plan["card"] == "rtx-3090");
  CHECK(plan["memory_per_gpu_gib"].get<double>() > 15.0);
  CHECK(plan["memory_per_gpu_gib"].get<double>() <= plan["limit_gib"].get<double>());
  CHECK(plan["limit_gib"].get<double>() < plan["usable_gib"].get<double>());
  CHECK(plan["price_per_hour"] == 0.24);
  CHECK(has(plan["reason"].get<std::string>(), "lambda, runpod, vast"));
  // What was chosen and why, on stderr.
  CHECK(has(r.err, "chosen: runpod RTX 3090"));
  CHECK(has(r.err, "GiB usable"));
  CHECK(has(r.err, "cheaper without an API: cloudgpu RTX 4090"));

  // Recorded with the plan's choice; the create call asked RunPod for that card.
  const auto servers = u.servers();
  REQUIRE(servers.size() == 1);
  CHECK(servers[0].provider == "runpod");
  CHECK(servers[0].card == "rtx-3090");
  CHECK(servers[0].provider_id == pod_id);
  const auto events = *u.store().events(servers[0].id);
  REQUIRE(events.size() == 3);
  CHECK(events[0].status == gpurent::ServerStatus::creating);
  CHECK(events[1].status == gpurent::ServerStatus::provisioning);
  CHECK(events[2].status == gpurent::ServerStatus::running);
  REQUIRE(u.http.count("POST " + k_runpod + "/pods") == 1);
  for (const auto& req : u.http.requests()) {
    if (req.method == "POST" && req.url == k_runpod + "/pods") {
      CHECK(has(req.body, "RTX 3090"));
    }
  }
}

TEST_CASE("up --from-plan: a 70B QLoRA rents what plan sizes it at with gradient checkpointing", "[cli][up]")
{
  UpHarness u;
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  u.http.on("POST " + k_runpod + "/pods", 201, read_fixture("runpod/pod_booting.json"));
  Json running = Json::parse(read_fixture("runpod/pod_running.json"));
  running["id"] = Json::parse(read_fixture("runpod/pod_booting.json")).value("id", "");
  running["name"] = "ft";
  u.http.on("GET " + k_runpod + "/pods/" + running["id"].get<std::string>(), 200, running.dump());
  // --rentable: among the clouds gpurent rents itself (the market's cheapest may be one it does not);
  // --provider runpod: the one this test answers for (Vast's two A40s at $0.40/h each are cheaper).
  const auto r = u.up({"--from-plan", "meta-llama/Llama-3.1-70B", "--task", "qlora", "--rentable", "--provider", "runpod",
                       "--name", "ft", "--yes", "--no-wait", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  // Two L40S ($0.43/h each in the market snapshot) are cheaper than one 80 GB card and than two A40s ($0.44/h each).
  CHECK(j["gpus"] == 2);
  CHECK(j["card"] == "l40s");
  CHECK(j["plan"]["memory_per_gpu_gib"].get<double>() < 60.0);
  // Sizing options need --from-plan, the new one too.
  CHECK(u.up({"--provider", "runpod", "--card", "rtx-4090", "--no-grad-checkpointing", "--yes"}).code == 2);
}

TEST_CASE("up --from-plan: nothing fits: exit 3 with the plan's fixes, nothing recorded or created", "[cli][up]")
{
  UpHarness u;
  SECTION("text")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-405b", "--task", "train", "--yes"});
    CHECK(r.code == 3);
    CHECK(has(r.out, "Fixes"));
    CHECK(has(r.out, "Recipe: fits"));
    CHECK(has(r.err, "up --from-plan: nothing fits within 8 GPUs of one server; the recipe above makes it fit: rerun "
                     "with its options; nothing was rented"));
  }
  SECTION("json: the plan document, choice null, fixes not empty")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-405b", "--task", "train", "--yes", "--json"});
    CHECK(r.code == 3);
    const Json j = Json::parse(r.out);
    CHECK(j["choice"].is_null());
    CHECK_FALSE(j["fixes"].empty());
  }
  CHECK(u.servers().empty());
  CHECK(u.http.requests().empty());
}

TEST_CASE("up --from-plan: a card that fits but no API provider offers is refused", "[cli][up]")
{
  UpHarness u;
  const auto r = u.up({"--from-plan", "llama-3.1-8b", "--card", "l40s", "--provider", "lambda", "--yes"});
  CHECK(r.code == 3);
  CHECK(has(r.err, "the job fits 1 x"));
  CHECK(has(r.err, "no provider with an API (lambda, runpod, vast) offers it"));
  CHECK(u.servers().empty());
  CHECK(u.http.requests().empty());
}

TEST_CASE("up --from-plan: --provider and --card restrict the choice, the usual confirmation applies", "[cli][up]")
{
  UpHarness u;
  SECTION("--card")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-8b", "--card", "rtx-4090", "--rentable"});
    CHECK(r.code == 3);  // no --yes and no TTY: refused at the confirmation
    CHECK(has(r.err, "chosen: vast RTX 4090"));  // the snapshot's Vast offer ($0.40/h) is below RunPod's ($0.69)
    CHECK(has(r.err, "re-run with --yes"));
  }
  SECTION("--provider")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-8b", "--provider", "lambda"});
    CHECK(r.code == 3);
    CHECK(has(r.err, "chosen: lambda "));
  }
  SECTION("--gpus")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-8b", "--gpus", "2", "--provider", "runpod"});
    CHECK(r.code == 3);
    CHECK(has(r.err, "chosen: runpod RTX A4000 16GB x2: "));
  }
  SECTION("a provider without an API")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-8b", "--provider", "gpucloud", "--yes"});
    CHECK(r.code == 3);
    CHECK(has(r.err, "gpurent does not rent servers on gpucloud"));
    CHECK(has(r.err, "gpurent attach --provider gpucloud"));
  }
  SECTION("--max-price below every fit")
  {
    const auto r = u.up({"--from-plan", "llama-3.1-8b", "--max-price", "0.05", "--yes"});
    CHECK(r.code == 3);
    CHECK(has(r.err, "no offer matches the filters"));
  }
  CHECK(u.servers().empty());
  // At most the provider was asked for its current price (read-only): nothing was created.
  for (const auto& req : u.http.requests()) {
    INFO(req.method << " " << req.url);
    CHECK((has(req.url, "graphql") || has(req.url, "instance-types")));
  }
}

TEST_CASE("up: usage errors for the options of --from-plan", "[cli][up]")
{
  UpHarness u;
  auto r = u.up({"--yes"});
  CHECK(r.code == 2);
  CHECK(has(r.err, "give --provider and --card, or --from-plan MODEL"));
  r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--task", "lora", "--yes"});
  CHECK(r.code == 2);
  CHECK(has(r.err, "need --from-plan MODEL"));
  r = u.up({"--from-plan", "llama-3.1-8b", "--task", "bake", "--yes"});
  CHECK(r.code == 2);
  CHECK(has(r.err, "--task"));
  r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--gpus", "9", "--yes"});
  CHECK(r.code == 2);
  r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--hours", "-1", "--yes"});
  CHECK(r.code == 2);
  CHECK(u.servers().empty());
  CHECK(u.http.requests().empty());
}

TEST_CASE("up --max-price: a RunPod pod above it is destroyed once, confirmed, and its short life billed",
          "[cli][up][destroy]")
{
  UpHarness u;
  const std::string pod_id = "xedezhzb9la3ye";  // costPerHr "0.74"
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  u.http.on("POST " + k_runpod + "/pods", 201, read_fixture("runpod/pod_booting.json"));
  SECTION("the DELETE is accepted and the GET confirms: destroyed, exit 3")
  {
    u.http.on("DELETE " + k_runpod + "/pods/" + pod_id, 204, "");
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 404, "Pod not found.");
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "mp", "--yes", "--max-price", "0.72"});
    INFO(r.err);
    CHECK(r.code == 3);
    CHECK(has(r.err, "above --max-price"));
    CHECK(has(r.err, "destroyed (confirmed by runpod"));
    CHECK(has(r.err, "billed 1 s at $0.74/h"));
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 1);
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::destroyed);
    CHECK(servers[0].provider_id == pod_id);
    const auto events = *u.store().events(servers[0].id);
    REQUIRE(events.size() == 4);
    CHECK(events[1].status == gpurent::ServerStatus::provisioning);  // it existed
    CHECK(events[2].status == gpurent::ServerStatus::destroying);
    CHECK(events[3].status == gpurent::ServerStatus::destroyed);
  }
  SECTION("the DELETE keeps failing: destroy_failed, still tracked and billed, exit 1")
  {
    u.http.on("DELETE " + k_runpod + "/pods/" + pod_id, 500, "");
    Json running = Json::parse(read_fixture("runpod/pod_booting.json"));
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, running.dump());
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "mp", "--yes", "--max-price", "0.72"});
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(has(r.err, "NOT confirmed destroyed"));
    CHECK(has(r.err, "$0.74/h"));
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == gpurent::k_max_destroy_requests);
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::destroy_failed);
    CHECK_FALSE(gpurent::is_closed(servers[0].status));
  }
}

TEST_CASE("up: a create call whose answer was lost is settled by the provider's list", "[cli][up]")
{
  UpHarness u;
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  u.http.fail_with("POST " + k_runpod + "/pods", gpurent::Error{gpurent::Errc::timeout, "timed out"});
  SECTION("the list has no such pod: closed as failed")
  {
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "lost", "--yes", "--no-wait"});
    CHECK(r.code == 1);
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::failed);
  }
  SECTION("the API was never reached: nothing was created, the record closes as failed")
  {
    gpurent::Error unreachable{gpurent::Errc::unavailable, "Couldn't connect to server"};
    unreachable.not_sent = true;
    u.http.fail_with("POST " + k_runpod + "/pods", unreachable);
    u.http.fail_with("GET " + k_runpod + "/pods", unreachable);
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "lost", "--yes", "--no-wait"});
    CHECK(r.code == 1);
    CHECK(has(r.err, "not reached"));
    CHECK(has(r.err, "is not billed"));
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::failed);
  }
  SECTION("the list cannot be read: the record stays open as creating")
  {
    u.http.fail_with("GET " + k_runpod + "/pods", gpurent::Error{gpurent::Errc::unavailable, "down"});
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "lost", "--yes", "--no-wait"});
    CHECK(r.code == 1);
    CHECK(has(r.err, "status --refresh"));
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::creating);
  }
}

namespace {

// RunPod's gpuTypes answer with one card at `price` per GPU (docs: securePrice, USD per hour).
std::string gpu_types(double price)
{
  return Json{{"data", {{"gpuTypes", Json::array({{{"id", "NVIDIA GeForce RTX 4090"}, {"displayName", "RTX 4090"},
                                                    {"memoryInGb", 24}, {"securePrice", price},
                                                    {"secureSpotPrice", price / 2}}})}}}}
      .dump();
}

const std::string k_graphql = "https://runpod.test/graphql";

}  // namespace

TEST_CASE("up: the quote is asked of the provider, and a server created above it is destroyed unless kept",
          "[cli][up][destroy][price]")
{
  UpHarness u;
  u.h.env["GPURENT_RUNPOD_GRAPHQL_URL"] = k_graphql;
  const std::string pod_id = "xedezhzb9la3ye";  // the fixture's costPerHr: 0.74
  u.http.on("POST " + k_graphql, 200, gpu_types(0.39));
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  u.http.on("POST " + k_runpod + "/pods", 201, read_fixture("runpod/pod_booting.json"));
  SECTION("confirmed at RunPod's $0.39/h, created at $0.74/h: destroyed, confirmed, exit 3")
  {
    u.http.on("DELETE " + k_runpod + "/pods/" + pod_id, 204, "");
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 404, "Pod not found.");
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "pj", "--yes"});
    INFO(r.err);
    CHECK(r.code == 3);
    CHECK(has(r.err, "$0.39/h"));
    CHECK(has(r.err, "quoted by runpod now"));
    CHECK(has(r.err, "above the $0.39/h you confirmed"));
    CHECK(has(r.err, "destroyed (confirmed by runpod"));
    CHECK(has(r.err, "--max-price 0.74"));
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 1);
    const auto servers = u.servers();
    REQUIRE(servers.size() == 1);
    CHECK(servers[0].status == gpurent::ServerStatus::destroyed);
  }
  SECTION("on a terminal the user is asked, and may keep it at the new price")
  {
    Json running = Json::parse(read_fixture("runpod/pod_running.json"));
    running["id"] = pod_id;
    running["costPerHr"] = 0.74;
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, running.dump());
    u.h.stdin_tty = true;
    u.h.stdin_text = "y\ny\n";  // rent it; keep it at $0.74/h
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "pk", "--no-wait"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(has(r.err, "Keep it at $0.74/h?"));
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 0);
    REQUIRE(u.servers().size() == 1);
    CHECK(u.servers()[0].terms.price_per_hour == gpurent::MicroUsd{740'000});
  }
  SECTION("on a terminal, no answer is no: destroyed")
  {
    u.http.on("DELETE " + k_runpod + "/pods/" + pod_id, 204, "");
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 404, "Pod not found.");
    u.h.stdin_tty = true;
    u.h.stdin_text = "y\n";
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "pn", "--no-wait"});
    CHECK(r.code == 3);
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 1);
  }
  SECTION("--max-price above the created price: kept (it is the ceiling instead of the quote)")
  {
    Json running = Json::parse(read_fixture("runpod/pod_running.json"));
    running["id"] = pod_id;
    running["costPerHr"] = 0.74;
    u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, running.dump());
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "pm", "--yes", "--no-wait",
                         "--max-price", "0.80"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 0);
  }
}

TEST_CASE("up: the provider's quote cannot be had: the built-in price is the quote, said so", "[cli][up][price]")
{
  UpHarness u;
  u.h.env["GPURENT_RUNPOD_GRAPHQL_URL"] = k_graphql;
  u.http.on("POST " + k_graphql, 500, "{}");
  const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "pq"});  // no TTY, no --yes
  CHECK(r.code == 3);
  CHECK(has(r.err, "asking runpod for its current price failed"));
  CHECK(has(r.err, "a server created at a higher price is destroyed"));
  CHECK(has(r.err, "the quote stays $0.69/h (snapshot 2026-12-05)"));
  CHECK(u.servers().empty());
}

TEST_CASE("up: a signal stops it at the next safe point, what bills is said, nothing is destroyed unasked",
          "[cli][up][signal]")
{
  UpHarness u;
  u.h.env["GPURENT_RUNPOD_GRAPHQL_URL"] = k_graphql;
  const std::string pod_id = "xedezhzb9la3ye";
  u.http.on("POST " + k_graphql, 200, gpu_types(0.74));
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  u.http.on("POST " + k_runpod + "/pods", 201, read_fixture("runpod/pod_booting.json"));
  u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, read_fixture("runpod/pod_booting.json"));
  const auto base_setup = u.h.setup;
  SECTION("before the create call: nothing is asked of RunPod, the record closes, exit 4")
  {
    u.h.setup = [&](gpurent::Services& s) {
      base_setup(s);
      s.caught_signal = [] { return SIGINT; };
    };
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "si", "--yes"});
    INFO(r.err);
    CHECK(r.code == 4);
    CHECK(has(r.err, "interrupted: before the create call (SIGINT)"));
    CHECK(has(r.err, "nothing bills"));
    CHECK(u.http.count("POST " + k_runpod + "/pods") == 0);
    REQUIRE(u.servers().size() == 1);
    CHECK(u.servers()[0].status == gpurent::ServerStatus::failed);
  }
  SECTION("while waiting for it to run: left running, recorded as provisioning, the rate and both commands said")
  {
    // The signal "arrives" once the create call was answered.
    u.h.setup = [&](gpurent::Services& s) {
      base_setup(s);
      s.caught_signal = [&u] { return u.http.count("POST " + k_runpod + "/pods") > 0 ? SIGTERM : 0; };
    };
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--name", "sw", "--yes", "--json"});
    INFO(r.err);
    CHECK(r.code == 4);
    CHECK(has(r.err, "(SIGTERM)"));
    CHECK(has(r.err, "was NOT destroyed and bills $0.74/h until released"));
    CHECK(has(r.err, "gpurent down sw --destroy --no-backup"));
    CHECK(has(r.err, "gpurent up --provider runpod --card rtx-4090 --gpus 1 --name sw"));
    CHECK(u.http.count("DELETE " + k_runpod + "/pods/" + pod_id) == 0);
    CHECK(u.http.count("GET " + k_runpod + "/pods/" + pod_id) == 1);  // asked once more
    const Json doc = Json::parse(r.out);
    CHECK(doc["error"]["code"] == "partial");
    CHECK(doc["error"]["exit"] == 4);
    REQUIRE(u.servers().size() == 1);
    CHECK(u.servers()[0].status == gpurent::ServerStatus::provisioning);
    CHECK(u.servers()[0].provider_id == pod_id);
  }
}

TEST_CASE("up --from-plan with a job size rents what plan ranks first by the bill (the comfortable box, not the tight one)", "[cli][up]")
{
  const std::vector<std::string> job = {"llama-3.1-8b", "--task", "lora", "--tokens", "50M", "--provider", "runpod"};
  std::vector<std::string> plan_args = {"plan"};
  plan_args.insert(plan_args.end(), job.begin(), job.end());
  plan_args.push_back("--json");
  const auto planned = gpurent::test::run_cli(plan_args);
  REQUIRE(planned.code == 0);
  const Json p = Json::parse(planned.out);
  REQUIRE(p["choice"].is_object());
  CHECK(p["choice"]["risk"] == "comfortable");

  UpHarness u;
  const std::string pod_id = "xedezhzb9la3ye";
  u.http.on("GET " + k_runpod + "/pods", 200, "[]");
  Json created = Json::parse(read_fixture("runpod/pod_booting.json"));
  created["costPerHr"] = p["choice"]["price_per_hour"];
  u.http.on("POST " + k_runpod + "/pods", 201, created.dump());
  Json running = Json::parse(read_fixture("runpod/pod_running.json"));
  running["id"] = pod_id;
  running["name"] = "ft";
  running["costPerHr"] = p["choice"]["price_per_hour"];
  u.http.on("GET " + k_runpod + "/pods/" + pod_id, 200, running.dump());
  std::vector<std::string> up_args = {"--from-plan"};
  up_args.insert(up_args.end(), job.begin(), job.end());
  for (const char* a : {"--name", "ft", "--yes", "--no-wait", "--json"}) {
    up_args.emplace_back(a);
  }
  const auto r = u.up(up_args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["card"] == p["choice"]["card"]);
  CHECK(j["gpus"] == p["choice"]["gpus"]);
  CHECK(j["plan"]["price_per_hour"] == p["choice"]["price_per_hour"]);
}

TEST_CASE("up --nodes: the group is confirmed once, for every server, and its budget counts every server", "[cli][up][group]")
{
  UpHarness u;
  SECTION("no --yes and no TTY: refused once, naming the group and its price in all")
  {
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--nodes", "3", "--group", "g"});
    CHECK(r.code == 3);
    CHECK(has(r.err, "Rent group g: 3 servers on runpod"));
    CHECK(has(r.err, " each, "));
  }
  SECTION("the budget is checked for all of them before anything is created")
  {
    u.config("budget_usd = 1.5\n");  // one server for an hour ($0.60) fits it; three do not
    const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--nodes", "3", "--group", "g", "--yes"});
    INFO(r.err);
    CHECK(r.code == 3);
    CHECK(has(r.err, "budget"));
  }
  CHECK(u.servers().empty());
  for (const auto& req : u.http.requests()) {
    INFO(req.method << " " << req.url);
    CHECK_FALSE((req.method == "POST" && has(req.url, "/pods")));  // no create call (a price question may be asked)
  }
}

TEST_CASE("up --nodes: a member whose create answer was lost is not 'destroyed' by id: the error says how to settle it",
          "[cli][up][group]")
{
  UpHarness u;
  // The API answers nothing at all (the fake's 599): the create's fate is unknown.
  const auto r = u.up({"--provider", "runpod", "--card", "rtx-4090", "--nodes", "2", "--group", "g", "--yes"});
  INFO(r.err);
  CHECK(r.code != 0);
  CHECK(has(r.err, "g-0: whether runpod created it is not known"));
  CHECK(has(r.err, "status --refresh"));
  CHECK_FALSE(has(r.err, "destroying g-0"));
}

TEST_CASE("start: SSH commands on a stopped record point at start, and an attached server, a provider without start and "
          "no confirmation are refused, nothing started or destroyed", "[cli][start]")
{
  UpHarness u;
  gpurent::ServerRecord r;
  r.name = "l1";
  r.provider = "vast";
  r.provider_id = "1001";
  r.card = "rtx-4090";
  r.status = gpurent::ServerStatus::creating;
  auto rec = u.store().insert_server(r);
  REQUIRE(rec);
  REQUIRE(u.store().record_state(rec->id, gpurent::ServerStatus::stopped, std::chrono::system_clock::now(), "test"));
  REQUIRE(u.store().set_connection(rec->id, "root", "203.0.113.7", 22, ""));
  // The `start` word of every command that needs SSH on it: refused with the way on, not a connect error.
  CliRun ssh = u.h.run({"ssh", "l1", "--", "true"});
  CHECK(ssh.code == 1);
  CHECK(has(ssh.err, "l1 is stopped (since ") );
  CHECK(has(ssh.err, "gpurent start l1"));
  CHECK(u.http.requests().empty());
  // Attached: gpurent has no API to start it with.
  gpurent::ServerRecord a = r;
  a.name = "box";
  a.provider = "gpucloud";
  a.provider_id.clear();
  a.attached = true;
  a.status = gpurent::ServerStatus::running;
  REQUIRE(u.store().insert_server(a));
  CliRun att = u.h.run({"--json", "start", "box", "--yes"});
  CHECK(att.code == 3);
  CHECK(has(att.out, "\"refused\""));
  CHECK(has(att.out, "attached"));
  CHECK(u.http.requests().empty());
  // No --yes and no TTY: not asked of the provider beyond looks, never started.
  CliRun no = u.h.run({"start", "l1"});
  CHECK(no.code != 0);
  for (const auto& q : u.http.requests()) {
    CHECK(q.method != "PUT");
    CHECK(q.method != "DELETE");
  }
  CHECK(u.servers().front().status == gpurent::ServerStatus::stopped);
  // A provider without start (Lambda has no stop either; a record says stopped all the same).
  gpurent::ServerRecord l = r;
  l.name = "lam";
  l.provider = "lambda";
  l.provider_id = "i-1";
  auto lrec = u.store().insert_server(l);
  REQUIRE(lrec);
  REQUIRE(u.store().record_state(lrec->id, gpurent::ServerStatus::stopped, std::chrono::system_clock::now(), "test"));
  const auto before = u.http.requests().size();
  CliRun lam = u.h.run({"start", "lam", "--yes"});
  CHECK(lam.code == 3);
  CHECK(has(lam.err, "cannot start"));
  CHECK(u.http.requests().size() == before);
}

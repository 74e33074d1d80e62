// SPDX-License-Identifier: MIT
// plan, offers, up --from-plan and attach across the whole market (cli.md plan v4 "The whole
// market"), on prices the test sets in the config file (they win over the snapshot and built-in
// prices): a cloud gpurent does not rent is chosen, named with its billing and how to rent it;
// --rentable, --provider lists and --region filter; up refuses it; attach bills under its rule.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_harness.hpp"
#include "fakes/memory_transport.hpp"
#include "fakes/temp_dir.hpp"
#include "providers/state_store.hpp"

using gpurent::test::CliHarness;
using gpurent::test::CliRun;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A temporary XDG tree with a config file of prices; SSH answers from memory.
class Market {
public:
  explicit Market(const std::string& prices)
  {
    const fs::path& dir = m_tmp.path();
    h.env["XDG_CONFIG_HOME"] = (dir / "config").string();
    h.env["XDG_CACHE_HOME"] = (dir / "cache").string();
    h.env["XDG_STATE_HOME"] = (dir / "state").string();
    const auto file = m_tmp.write("config/gpurent/config.toml", prices);
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
    h.env["GPURENT_STATE_DIR"] = (dir / "state").string();
    fs::create_directories(dir / "state");
    const fs::path db = dir / "state" / "state.db";
    gpurent::Result<std::unique_ptr<gpurent::StateStore>> opened = std::unexpected(gpurent::Error{});
    gpurent_open_state_store(&db, &opened);
    REQUIRE(opened);
    m_store = std::move(*opened);
    h.setup = [this](gpurent::Services& s) {
      s.state = [this]() -> gpurent::Result<gpurent::StateStore*> { return m_store.get(); };
      s.ssh_connect = [](const gpurent::SshTarget&, const gpurent::SshOptions&)
          -> gpurent::Result<std::unique_ptr<gpurent::SshSession>> {
        return std::make_unique<gpurent::testing::MemoryTransport>();
      };
    };
  }
  Market(const Market&) = delete;
  Market& operator=(const Market&) = delete;

private:
  gpurent::test::TempDir m_tmp{"gpurent-market-rank"};  // first: the harness below points into it
  std::unique_ptr<gpurent::StateStore> m_store;

public:
  CliHarness h;
};

// Nebius (per second, published) far below RunPod for an H100 SXM; shadeform (no published
// billing rule) for an L40S.
const std::string k_prices = "[prices.nebius]\n\"h100-sxm\" = 1.00\n[prices.shadeform]\nl40s = 0.50\n";

const std::vector<std::string> k_job = {"llama-3.1-8b", "--task", "lora", "--offline", "--card", "h100-sxm"};

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail)
{
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// The text with its line wrapping undone: a newline and the indent after it become one space.
std::string flat(const std::string& text)
{
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      while (i + 1 < text.size() && text[i + 1] == ' ') {
        ++i;
      }
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

TEST_CASE("plan across clouds: the cheapest cloud is chosen and named with its billing and how to rent it",
          "[cli][plan][market]")
{
  Market m(k_prices);
  const CliRun r = m.h.run(with({"plan"}, with(k_job, {"--provider", "runpod,nebius", "--json"})));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  const Json& c = j["choice"];
  CHECK(c["provider"] == "nebius");
  CHECK(c["cloud"] == "nebius");
  CHECK(c["rentable"] == false);
  CHECK(c["price_per_hour"] == 1.0);
  CHECK(c["price_source"] == "config");
  CHECK(c["billing"] == "per-second");  // the contract's label
  CHECK(c["billing_rule"]["increment_s"] == 1);
  CHECK(c["billing_rule"]["source"].get<std::string>().starts_with("https://docs.nebius.com/"));
  CHECK(c["attach"].get<std::string>().starts_with("gpurent attach --provider nebius --card h100-sxm --gpus 1"));
  bool saw_runpod = false;
  for (const auto& o : j["options"]) {
    CHECK(o["cloud"] == o["provider"]);
    REQUIRE(o["billing"].is_object());
    CHECK(o["billing"].contains("increment_s"));
    CHECK(o["billing"].contains("minimum_s"));
    CHECK(o["billing"].contains("source"));
    CHECK(o.contains("region"));
    CHECK(o.contains("price_date"));
    CHECK(o["price_source"].is_string());
    if (o["cloud"] == "runpod") {
      saw_runpod = true;
      CHECK(o["rentable"] == true);
      CHECK(o["billing"]["increment_s"] == 1);
      CHECK_FALSE(o.contains("attach"));
    }
    CHECK((o["cloud"] == "runpod" || o["cloud"] == "nebius"));  // --provider runpod,nebius
  }
  CHECK(saw_runpod);

  const CliRun text = m.h.run(with({"plan"}, with(k_job, {"--provider", "runpod,nebius"})));
  REQUIRE(text.code == 0);
  CHECK_THAT(flat(text.out), Catch::Contains("Choice: nebius, 1 x H100"));
  CHECK_THAT(flat(text.out), Catch::Contains("gpurent does not rent nebius servers: rent it there"));
  CHECK_THAT(flat(text.out), Catch::Contains("--provider nebius --card h100-sxm --gpus 1"));
  CHECK_THAT(flat(text.out), Catch::Contains("nebius+"));
}

TEST_CASE("plan --rentable and --region narrow the market, an unknown cloud is a usage error", "[cli][plan][market]")
{
  Market m(k_prices);
  const CliRun r = m.h.run(with({"plan"}, with(k_job, {"--provider", "runpod,nebius", "--rentable", "--json"})));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["choice"]["cloud"] == "runpod");
  CHECK(j["choice"]["rentable"] == true);
  for (const auto& o : j["options"]) {
    CHECK(o["rentable"] == true);
  }
  // A region no offer names: nothing to rank (exit 3, as when no offer matches).
  const CliRun none = m.h.run({"plan", "llama-3.1-8b", "--offline", "--region", "mars-north-1", "--json"});
  CHECK(none.code == 3);
  CHECK(Json::parse(none.out)["choice"].is_null());
  const CliRun bad = m.h.run(with({"plan"}, with(k_job, {"--provider", "runpod,acme"})));
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("acme"));
}

TEST_CASE("plan: a cloud that publishes no billing rule is billed per hour, and the text says so",
          "[cli][plan][market]")
{
  Market m(k_prices);
  const std::vector<std::string> job = {"llama-3.1-8b", "--task", "lora", "--offline", "--card", "l40s",
                                        "--provider", "shadeform", "--hours", "0.25"};
  const CliRun r = m.h.run(with({"plan"}, with(job, {"--json"})));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json c = Json::parse(r.out)["choice"];
  CHECK(c["cloud"] == "shadeform");
  CHECK(c["billing_rule"]["source"] == "unknown");
  CHECK(c["billing_rule"]["increment_s"] == 3600);
  CHECK(c["cost"] == 0.5);  // a quarter hour billed as the started hour
  const CliRun text = m.h.run(with({"plan"}, job));
  REQUIRE(text.code == 0);
  CHECK_THAT(flat(text.out), Catch::Contains("billing unknown, per hour assumed"));
}

TEST_CASE("offers: clouds, rentable, billing with its source, price source, --provider list and --region",
          "[cli][offers][market]")
{
  Market m(k_prices);
  const CliRun r = m.h.run({"offers", "--provider", "nebius,shadeform", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json rows = Json::parse(r.out)["offers"];
  bool nebius = false;
  bool shadeform = false;
  for (const auto& row : rows) {
    CHECK((row["cloud"] == "nebius" || row["cloud"] == "shadeform"));
    CHECK(row["rentable"] == false);
    if (row["card"] == "h100-sxm" && row["cloud"] == "nebius" && row["gpus"] == 1) {
      nebius = true;
      CHECK(row["price_source"] == "config");
      CHECK(row["billing"]["increment_s"] == 1);
      CHECK(row["billing"]["minimum_s"] == 0);
    }
    if (row["card"] == "l40s" && row["cloud"] == "shadeform" && row["gpus"] == 1) {
      shadeform = true;
      CHECK(row["billing"]["source"] == "unknown");
    }
  }
  CHECK(nebius);
  CHECK(shadeform);
  const CliRun text = m.h.run({"offers", "--provider", "shadeform"});
  REQUIRE(text.code == 0);
  CHECK_THAT(flat(text.out), Catch::Contains("shadeform: billing unknown: per hour assumed"));
  CHECK_THAT(flat(text.out), Catch::Contains("gpurent does not rent shadeform servers"));
  CHECK_THAT(flat(text.out), Catch::Contains("--provider shadeform --card CARD"));
  const CliRun rentable = m.h.run({"offers", "--rentable", "--json"});
  REQUIRE(rentable.code == 0);
  const Json rentable_doc = Json::parse(rentable.out);  // kept: a range over a temporary's member dangles
  for (const auto& row : rentable_doc["offers"]) {
    CHECK(row["rentable"] == true);
  }
  const CliRun region = m.h.run({"offers", "--region", "mars-north-1"});
  REQUIRE(region.code == 0);
  CHECK_THAT(region.out, Catch::Contains("no offers match"));
}

TEST_CASE("up --from-plan refuses a cloud gpurent does not rent, naming the cheapest it rents", "[cli][up][market]")
{
  Market m(k_prices);
  const CliRun r = m.h.run(with({"up", "--from-plan"}, with(k_job, {"--provider", "runpod,nebius", "--name", "box", "--yes"})));
  INFO(r.err);
  CHECK(r.code == 3);
  CHECK_THAT(r.err, Catch::Contains("which gpurent does not rent"));
  CHECK_THAT(r.err, Catch::Contains("gpurent attach --provider nebius --card h100-sxm --gpus 1"));
  CHECK_THAT(r.err, Catch::Contains("the cheapest option gpurent rents: 1 x H100"));
  CHECK_THAT(r.err, Catch::Contains("on runpod"));
  CHECK_THAT(r.err, Catch::Contains("nothing was rented"));
  // Nothing recorded.
  const CliRun status = m.h.run({"status", "--json"});
  REQUIRE(status.code == 0);
  CHECK(Json::parse(status.out)["instances"].empty());
}

TEST_CASE("attach --provider takes any cloud, the server bills under that cloud's rule", "[cli][attach][market]")
{
  Market m(k_prices);
  const CliRun a = m.h.run({"attach", "--provider", "shadeform", "--card", "l40s", "--host", "ubuntu@203.0.113.7",
                            "--name", "sf1", "--accept-new-host-key"});
  INFO(a.err);
  REQUIRE(a.code == 0);
  m.h.clock.advance(std::chrono::minutes(10));
  const CliRun s = m.h.run({"status", "--json"});
  INFO(s.err);
  REQUIRE(s.code == 0);
  const Json inst = Json::parse(s.out)["instances"].at(0);
  CHECK(inst["provider"] == "shadeform");
  CHECK(inst["accrued_cost"] == 0.5);  // ten minutes, billed as the started hour
  bool warned = false;
  for (const auto& w : inst["warnings"]) {
    warned = warned || w.get<std::string>().starts_with("billing unknown: shadeform");
  }
  CHECK(warned);
  // A cloud with a published rule bills by it: nebius per second.
  const CliRun b = m.h.run({"attach", "--provider", "nebius", "--card", "h100-sxm", "--host", "ubuntu@203.0.113.8",
                            "--name", "nb1", "--accept-new-host-key"});
  INFO(b.err);
  REQUIRE(b.code == 0);
  m.h.clock.advance(std::chrono::minutes(6));
  const CliRun s2 = m.h.run({"status", "nb1", "--json"});
  REQUIRE(s2.code == 0);
  CHECK(Json::parse(s2.out)["instances"].at(0)["accrued_cost"] == 0.1);  // 6 minutes of $1.00/h
}

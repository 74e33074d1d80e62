// SPDX-License-Identifier: MIT
// The price catalogue at the command line: `offers --refresh` (304, 429 then the mirror, 404, a
// refused download, the host down: exit 4 naming the cloud, the cache kept), `offers --offline`
// reading the cache, plan/offers fetching a missing or stale one unless --offline (or
// catalog_auto_refresh = false), and the URL from GPURENT_CATALOG_URL over the config file. The cache is seeded through the refresh itself with
// a stand-in reader (tests/fakes/fake_catalog_reader.hpp); the command line uses the build's reader.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "cli/catalog_support.hpp"
#include "cli/cli_harness.hpp"
#include "cli/config.hpp"
#include "fakes/fake_catalog_reader.hpp"
#include "fakes/fake_http_client.hpp"
#include "fakes/temp_dir.hpp"
#include "providers/market/catalog_cache.hpp"
#include "providers/state_store.hpp"

namespace fs = std::filesystem;
using namespace gpurent;
using gpurent::test::CliRun;
using gpurent::test::has;
using Json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string k_base = "https://catalog.test/catalogs";
const std::string k_mirror = "https://mirror.test/catalogs";
std::string get(const std::string& base, std::string_view cloud) { return "GET " + base + "/v8/" + std::string(cloud) + "/vms.csv"; }

const std::string k_runpod = test::fake_catalog({"1x_H100,h100-sxm,1,US,2.345,2.1", "1x_H100,h100-sxm,1,CA,2.5,",
                                                 "1x_4090,rtx-4090,1,US,0.61,"});
const std::string k_lambda = test::fake_catalog({"gpu_1x_a10,a10,1,us-east-1,0.71,"});

class Box {
public:
  Box()
  {
    const fs::path& dir = m_tmp.path();
    h.env["XDG_CONFIG_HOME"] = (dir / "config").string();
    h.env["XDG_CACHE_HOME"] = (dir / "cache").string();
    h.env["XDG_STATE_HOME"] = (dir / "state").string();
    h.env["GPURENT_CATALOG_URL"] = k_base;
    h.env["GPURENT_CATALOG_FALLBACK_URL"] = k_mirror;
    h.env["GPURENT_CATALOG_CLOUDS"] = "runpod,lambda";
    h.setup = [this](Services& s) { s.http = [this]() -> Result<HttpClient*> { return &http; }; };
  }
  [[nodiscard]] fs::path cache_dir() const { return m_tmp.path() / "cache" / "gpurent" / "catalog"; }
  void config(const std::string& text) { m_tmp.write("config/gpurent/config.toml", text); }
  // A cache as a refresh `age` ago left it (ETag "rp1"/"la1"), read as this build would have.
  void seed(std::chrono::hours age)
  {
    const auto when = h.clock.now() - age;
    test::FakeHttpClient seeder;
    seeder.on(get(k_base, "runpod"), 200, k_runpod, {{"etag", "\"rp1\""}});
    seeder.on(get(k_base, "lambda"), 200, k_lambda, {{"etag", "\"la1\""}});
    auto cfg = config_from("", "config.toml", {});
    REQUIRE(cfg);
    auto st = catalog_settings(*cfg, {"runpod", "lambda"});
    st.base_url = k_base;
    REQUIRE(market::refresh_catalogs(seeder, test::fake_catalog_reader, cache_dir(), st, when));
  }
  [[nodiscard]] std::string raw(std::string_view cloud) const
  {
    auto r = market::read_cached_catalog(cache_dir(), cloud);
    return r && r->has_value() ? **r : std::string("<none>");
  }
  [[nodiscard]] std::string offers_lines() const
  {
    auto c = market::load_catalog_cache(cache_dir());
    REQUIRE(c);
    REQUIRE(c->has_value());
    std::string text = market::catalog_cache_to_text(**c);
    return text.substr(text.find("\ncloud"));  // without the `tried` time
  }

  test::FakeHttpClient http;
  test::CliHarness h;

private:
  test::TempDir m_tmp{"gpurent-offers-catalogue"};
};

std::size_t catalogue_requests(const test::FakeHttpClient& http)
{
  std::size_t n = 0;
  for (const auto& r : http.requests()) {
    n += r.url.find("/v8/") != std::string::npos ? 1U : 0U;
  }
  return n;
}

std::optional<std::string> header(const HttpRequest& r, std::string_view name)
{
  for (const auto& [k, v] : r.headers) {
    if (k == name) {
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("offers catalogue: --offline reads the cached catalogue and fetches nothing", "[cli][market][offers]")
{
  Box box;
  box.seed(30h);  // stale, but --offline
  const CliRun r = box.h.run({"offers", "--offline", "--provider", "runpod", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(box.http.requests().empty());
  const Json j = Json::parse(r.out);
  bool seen = false;
  for (const auto& o : j["offers"]) {
    if (o["card"] == "h100-sxm" && o["gpus"] == 1) {
      seen = true;
      CHECK(o["price_per_hour"] == 2.345);  // the cheaper of its two regions
      CHECK(o["region"] == "US");
      CHECK(o["price_origin"] == "catalogue");
      CHECK_THAT(o["price_note"].get<std::string>(), Catch::Contains("SkyPilot's price catalogue"));
    }
  }
  CHECK(seen);
  const CliRun text = box.h.run({"offers", "--offline", "--provider", "runpod"});
  CHECK(has(text.out, "prices from SkyPilot's price catalogue, checked"));
}

TEST_CASE("offers catalogue: cost prices a card as plan does, from the cached catalogue", "[cli][market][cost]")
{
  // `cost --provider runpod --card h100-sxm` once read the built-in offers alone: after
  // `offers --refresh` it billed the snapshot's $2.99 while plan ranked the catalogue's $2.345.
  Box box;
  box.seed(1h);  // fresh: nothing is fetched
  const CliRun r = box.h.run({"cost", "--provider", "runpod", "--card", "h100-sxm", "--hours", "2", "--json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["price_per_hour"] == 2.345);  // the cheaper region of the cached catalogue
  CHECK(j["running"]["cost"] == 4.69);
  const CliRun text = box.h.run({"cost", "--provider", "runpod", "--card", "h100-sxm", "--hours", "2"});
  CHECK(has(text.out + text.err, "SkyPilot's price catalogue"));
  const CliRun plan = box.h.run({"plan", "llama-3.1-8b", "--card", "h100-sxm", "--gpus", "1", "--provider", "runpod", "--json"});
  REQUIRE(plan.code == 0);
  CHECK(Json::parse(plan.out)["choice"]["price_per_hour"] == j["price_per_hour"]);
  CHECK(box.http.requests().empty());
}

TEST_CASE("offers catalogue: --region chooses among every cached region, not only the cheapest", "[cli][market][region]")
{
  // The cache holds RunPod's H100 in US ($2.345) and CA ($2.50). Start-up keeps each shape's
  // cheapest region; --region CA must still find CA's row, in plan and in offers.
  Box box;
  box.seed(1h);
  const CliRun plan = box.h.run({"plan", "llama-3.1-8b", "--card", "h100-sxm", "--gpus", "1", "--provider", "runpod",
                                 "--region", "CA", "--offline", "--json"});
  INFO(plan.err);
  REQUIRE(plan.code == 0);
  const Json choice = Json::parse(plan.out)["choice"];
  CHECK(choice["region"] == "CA");
  CHECK(choice["price_per_hour"] == 2.5);
  CHECK(choice["price_source"] == "catalogue");
  const CliRun offers = box.h.run({"offers", "--provider", "runpod", "--region", "CA", "--offline", "--json"});
  REQUIRE(offers.code == 0);
  bool seen = false;
  const Json listed = Json::parse(offers.out);  // held: a loop over a temporary's member dangles
  for (const auto& o : listed["offers"]) {
    if (o["card"] == "h100-sxm" && o["gpus"] == 1) {
      seen = true;
      CHECK(o["region"] == "CA");
      CHECK(o["price_per_hour"] == 2.5);
    }
  }
  CHECK(seen);
  // Without --region, the cheapest region as before.
  const CliRun any = box.h.run({"plan", "llama-3.1-8b", "--card", "h100-sxm", "--gpus", "1", "--provider", "runpod",
                                "--offline", "--json"});
  REQUIRE(any.code == 0);
  CHECK(Json::parse(any.out)["choice"]["region"] == "US");
}

TEST_CASE("offers catalogue: a missing or stale cache is fetched by plan and offers, not with --offline, not when fresh",
          "[cli][market][offers][plan]")
{
  Box box;
  SECTION("no cache, --offline or catalog_auto_refresh = false: nothing is fetched, the snapshot answers")
  {
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--offline", "--json"}).code == 0);
    CHECK(box.h.run({"offers", "--offline", "--json"}).code == 0);
    box.config("catalog_auto_refresh = false\n");
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).code == 0);
    CHECK(box.h.run({"offers", "--json"}).code == 0);
    CHECK(box.http.requests().empty());
    box.config("");
    box.h.env["GPURENT_CATALOG_AUTO_REFRESH"] = "false";  // the environment says the same
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).code == 0);
    CHECK(box.http.requests().empty());
  }
  SECTION("no cache: the first plan fetches every listed cloud, says so, and ranks the fetched prices")
  {
    // What SkyPilot's files hold (v8 columns), read by this build's reader.
    const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Region,SpotPrice,Price\n";
    box.http.on(get(k_base, "runpod"), 200, header + "1x_H100-SXM_SECURE,H100-SXM,1,16,125,,US,2.69,2.345\n",
                {{"etag", "\"rp1\""}});
    box.http.on(get(k_base, "lambda"), 200, header + "gpu_1x_a10,A10,1,30,200,,us-east-1,,0.71\n");
    const CliRun r = box.h.run({"plan", "llama-3.1-8b", "--card", "h100-sxm", "--gpus", "1", "--provider", "runpod", "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("fetching the price catalogue of 2 clouds from catalog.test (no copy cached yet"));
    CHECK(catalogue_requests(box.http) == 2);
    const Json choice = Json::parse(r.out)["choice"];
    CHECK(choice["price_per_hour"] == 2.345);  // the snapshot says 2.99
    CHECK(choice["price_source"] == "catalogue");
    CHECK(box.raw("runpod").find("2.345") != std::string::npos);
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).code == 0);
    CHECK(catalogue_requests(box.http) == 2);  // now cached and fresh
  }
  SECTION("no cache and no network: one warning naming the snapshot, plan answers, no retry within the hour")
  {
    Error e{Errc::unavailable, "HTTP GET …: Couldn't resolve host name"};
    e.not_sent = true;
    box.http.fail_with(get(k_base, "runpod"), e);
    const CliRun r = box.h.run({"plan", "llama-3.1-8b", "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("gpurent: warning: the price catalogue was not fetched (the shipped snapshot of 20"));
    CHECK(r.err.find("lambda: not tried") == std::string::npos);  // one line, not one per cloud
    CHECK(Json::parse(r.out)["choice"]["price_source"] == "snapshot");
    CHECK(catalogue_requests(box.http) == 1);
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).err.find("fetching") == std::string::npos);
    CHECK(catalogue_requests(box.http) == 1);
    box.h.clock.advance(61min);
    const CliRun later = box.h.run({"plan", "llama-3.1-8b", "--json"});
    CHECK_THAT(later.err, Catch::Contains("fetching the price catalogue of 2 clouds") &&
                              Catch::Contains("the price catalogue was not fetched"));
    CHECK(catalogue_requests(box.http) == 2);
  }
  SECTION("fresh: nothing is fetched")
  {
    box.seed(2h);
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).code == 0);
    CHECK(box.http.requests().empty());
  }
  SECTION("stale: plan asks conditionally; 304 confirms and the next run asks nothing")
  {
    box.seed(30h);
    box.http.on(get(k_base, "runpod"), 304, "");
    box.http.on(get(k_base, "lambda"), 304, "");
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--offline", "--json"}).code == 0);
    CHECK(box.http.requests().empty());
    const CliRun r = box.h.run({"plan", "llama-3.1-8b", "--json"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("refreshing the price catalogue of 2 clouds (older than 24 h"));
    REQUIRE(catalogue_requests(box.http) == 2);
    CHECK(header(box.http.requests()[0], "If-None-Match") == "\"rp1\"");
    CHECK(box.h.run({"plan", "llama-3.1-8b", "--json"}).code == 0);
    CHECK(box.h.run({"offers", "--json"}).code == 0);
    CHECK(catalogue_requests(box.http) == 2);
  }
  SECTION("stale and the host down: a warning, the cache kept, plan still answers; not asked again within the hour")
  {
    box.seed(30h);
    Error e{Errc::unavailable, "HTTP GET …: Couldn't resolve host name"};
    e.not_sent = true;
    box.http.fail_with(get(k_base, "runpod"), e);
    const std::string before = box.offers_lines();
    const CliRun r = box.h.run({"plan", "llama-3.1-8b", "--json"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Catch::Contains("gpurent: warning: catalogue: runpod: HTTP GET") &&
                          Catch::Contains("lambda: not tried, catalog.test could not be reached") &&
                          Catch::Contains("kept the copy fetched"));
    CHECK(box.offers_lines() == before);
    CHECK(box.h.run({"offers", "--json"}).code == 0);
    CHECK(catalogue_requests(box.http) == 1);
    box.h.clock.advance(61min);
    CHECK(box.h.run({"offers", "--json"}).code == 0);
    CHECK(catalogue_requests(box.http) == 2);
  }
}

TEST_CASE("offers catalogue: --refresh, 304 and 429 then the mirror: current, exit 0", "[cli][market][offers]")
{
  Box box;
  box.seed(2h);
  box.http.on(get(k_base, "runpod"), 304, "");
  box.http.on(get(k_base, "lambda"), 429, "");
  box.http.on(get(k_mirror, "lambda"), 304, "");
  const CliRun r = box.h.run({"offers", "--refresh", "--json"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Catch::Contains("fetching the price catalogue of 2 clouds from catalog.test") &&
                        Catch::Contains("the price catalogue of 2 clouds is current: 4 offers"));
  CHECK(box.http.count(get(k_mirror, "lambda")) == 1);
  CHECK(header(box.http.requests().back(), "If-None-Match") == "\"la1\"");
}

TEST_CASE("offers catalogue: --refresh with a failed cloud exits 4 naming it and keeps its copy", "[cli][market][offers]")
{
  Box box;
  box.seed(30h);
  const std::string runpod_before = box.raw("runpod");
  const std::string offers_before = box.offers_lines();
  box.http.on(get(k_base, "lambda"), 304, "");
  struct Bad {
    const char* what;
    long status;
    std::string body;
  };
  const std::vector<Bad> bad = {
      {"404", 404, "404: Not Found"},
      {"an HTML page with 200", 200, "<!DOCTYPE html><html><body>Error</body></html>\n"},
      {"garbage with 200", 200, std::string("\x1f\x8b\x08\x00\xff\xfe", 6)},
      {"429 from both hosts", 429, ""},
  };
  for (const auto& b : bad) {
    SECTION(b.what)
    {
      box.http.on(get(k_base, "runpod"), b.status, b.body);
      box.http.on(get(k_mirror, "runpod"), 429, "");
      const CliRun r = box.h.run({"offers", "--refresh", "--json"});
      INFO(r.err);
      CHECK(r.code == 4);
      const Json j = Json::parse(r.out);
      CHECK(j["error"]["code"] == "partial");
      CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains("runpod") && Catch::Contains("kept the copy fetched"));
      CHECK_THAT(r.err, Catch::Contains("gpurent: warning: runpod"));
      CHECK(box.raw("runpod") == runpod_before);
      CHECK(box.offers_lines().substr(box.offers_lines().find("cloud\trunpod")) ==
            offers_before.substr(offers_before.find("cloud\trunpod")));
      bool catalogue_row = false;
      for (const auto& o : j["offers"]) {
        catalogue_row = catalogue_row || (o["provider"] == "runpod" && o["price_origin"] == "catalogue");
      }
      CHECK(catalogue_row);  // the kept copy still answers
    }
  }
  SECTION("no cached copy of a failed cloud: the shipped prices answer for it, said so")
  {
    box.http.on(get(k_base, "runpod"), 404, "");
    box.h.env["GPURENT_CATALOG_CLOUDS"] = "runpod,lambda,aws";
    box.http.on(get(k_base, "aws"), 404, "");
    const CliRun r = box.h.run({"offers", "--refresh", "--json"});
    CHECK(r.code == 4);
    CHECK_THAT(r.err, Catch::Contains("aws: HTTP 404 from https://catalog.test/catalogs/v8/aws/vms.csv") &&
                          Catch::Contains("(no cached copy: the shipped snapshot answers for aws)"));
  }
}

TEST_CASE("offers catalogue: GPURENT_CATALOG_URL over the config file's catalog_url, --provider names one cloud",
          "[cli][market][offers][config]")
{
  Box box;
  box.config("catalog_url = \"https://other.test/catalogs\"\ncatalog_clouds = \"lambda, runpod\"\n");
  box.h.env.erase("GPURENT_CATALOG_CLOUDS");
  box.http.on(get(k_base, "lambda"), 404, "");
  const CliRun r = box.h.run({"offers", "--refresh", "--provider", "lambda", "--json"});
  INFO(r.err);
  REQUIRE_FALSE(box.http.requests().empty());
  CHECK(box.http.requests()[0].url == "https://catalog.test/catalogs/v8/lambda/vms.csv");
  CHECK(catalogue_requests(box.http) == 1);  // only lambda's file
  box.h.env.erase("GPURENT_CATALOG_URL");
  box.http.on("GET https://other.test/catalogs/v8/lambda/vms.csv", 404, "");
  static_cast<void>(box.h.run({"offers", "--refresh", "--provider", "lambda", "--json"}));
  CHECK(box.http.requests().back().url == "https://other.test/catalogs/v8/lambda/vms.csv");

  const CliRun both = box.h.run({"offers", "--refresh", "--offline"});
  CHECK(both.code == 2);
  box.config("catalog_clouds = \"runpod, gpucloud\"\n");
  const CliRun bad = box.h.run({"offers", "--offline"});
  CHECK(bad.code != 0);
  CHECK_THAT(bad.err, Catch::Contains("catalog_clouds: `gpucloud` is not a cloud of the catalogue"));
}

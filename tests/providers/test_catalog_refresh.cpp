// SPDX-License-Identifier: MIT
// Refreshing the catalogue cache: a file replaces the cached one only when the reader accepts
// it; a failed cloud keeps its copy and its offers; 304 confirms; the host down skips the rest
// (providers/market/catalog_refresh.hpp).
#include <catch2/catch.hpp>

#include "fakes/fake_catalog_reader.hpp"
#include "fakes/fake_http_client.hpp"
#include "fakes/temp_dir.hpp"
#include "providers/market/catalog_refresh.hpp"

using namespace gpurent;
using namespace gpurent::market;
using namespace std::chrono_literals;

namespace {

const CatalogTime k_t0{std::chrono::seconds{1'796'460'000}};  // 2026-12-05T09:20:00Z
const std::string k_base = "https://catalog.test/catalogs";

std::string get(std::string_view cloud) { return "GET " + k_base + "/v8/" + std::string(cloud) + "/vms.csv"; }

CatalogRefreshSettings settings(std::vector<std::string> clouds)
{
  CatalogRefreshSettings s;
  s.base_url = k_base;
  s.fallback_url = "https://mirror.test/catalogs";
  s.clouds = std::move(clouds);
  s.made_by = "build-1";
  return s;
}

const std::string k_runpod = test::fake_catalog({"1x_H100,h100-sxm,1,US,2.99,2.69", "8x_H100,h100-sxm,8,US,23.92,"});
const std::string k_lambda = test::fake_catalog({"gpu_1x_a10,a10,1,us-east-1,0.75,"});

std::string raw(const std::filesystem::path& dir, std::string_view cloud)
{
  auto r = read_cached_catalog(dir, cloud);
  return r && r->has_value() ? **r : std::string("<none>");
}

std::optional<std::string> sent(const HttpRequest& r, std::string_view name)
{
  for (const auto& [k, v] : r.headers) {
    if (k == name) {
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("catalogue refresh: files are fetched, read, stored with their validators", "[providers][market][refresh]")
{
  test::TempDir tmp;
  test::FakeHttpClient http;
  http.on(get("runpod"), 200, k_runpod, {{"etag", "\"rp1\""}});
  http.on(get("lambda"), 200, k_lambda, {{"last-modified", "Sat, 05 Dec 2026 08:00:00 GMT"}});
  auto report = refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod", "lambda"}), k_t0);
  REQUIRE(report);
  CHECK(report->succeeded() == 2);
  CHECK(report->clouds[0].outcome == CloudRefreshOutcome::fetched);
  CHECK(report->clouds[0].offers == 2);
  CHECK(raw(tmp.path(), "runpod") == k_runpod);
  auto cache = load_catalog_cache(tmp.path());
  REQUIRE(cache);
  REQUIRE(cache->has_value());
  const CatalogCache& c = **cache;
  CHECK(c.tried_at == k_t0);
  REQUIRE(c.find("runpod") != nullptr);
  CHECK(c.find("runpod")->validators.etag == "\"rp1\"");
  CHECK(c.find("lambda")->validators.last_modified == "Sat, 05 Dec 2026 08:00:00 GMT");
  CHECK(c.find("runpod")->fetched_at == k_t0);
  REQUIRE(c.offers.size() == 3);
  const Offer& h8 = c.offers[c.find("runpod")->first + 1];
  CHECK(h8.provider == "runpod");
  CHECK(h8.gpus == 8);
  CHECK(h8.price_per_hour == MicroUsd{23'920'000});
  CHECK_FALSE(h8.spot_price_per_hour);
  CHECK(h8.price_source == "catalogue");
  CHECK(h8.price_date == "2026-12-05");
}

TEST_CASE("catalogue refresh: the next refresh asks conditionally, 304 confirms the copy", "[providers][market][refresh]")
{
  test::TempDir tmp;
  test::FakeHttpClient http;  // answers in order, then repeats the last
  http.on(get("runpod"), 200, k_runpod, {{"etag", "\"rp1\""}});
  http.on(get("runpod"), 304, "");
  REQUIRE(refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod"}), k_t0));
  auto report = refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod"}), k_t0 + 30h);
  REQUIRE(report);
  CHECK(report->clouds.at(0).outcome == CloudRefreshOutcome::not_modified);
  CHECK(report->clouds.at(0).offers == 2);
  REQUIRE(http.requests().size() == 2);
  CHECK_FALSE(sent(http.requests()[0], "If-None-Match"));
  CHECK(sent(http.requests()[1], "If-None-Match") == "\"rp1\"");
  auto cache = load_catalog_cache(tmp.path());
  REQUIRE(cache);
  const CachedCloud* rp = (*cache)->find("runpod");
  CHECK(rp->fetched_at == k_t0);
  CHECK(rp->checked_at == k_t0 + 30h);
  CHECK((*cache)->offers.at(rp->first).price_date == "2026-12-06");
  CHECK(raw(tmp.path(), "runpod") == k_runpod);

  SECTION("a cached file read by another build is read again on 304")
  {
    auto s = settings({"runpod"});
    s.made_by = "build-2";
    int reads = 0;
    CatalogReader counting = [&](std::string_view cloud, std::string_view text) {
      ++reads;
      return test::fake_catalog_reader(cloud, text);
    };
    auto again = refresh_catalogs(http, counting, tmp.path(), s, k_t0 + 31h);
    REQUIRE(again);
    CHECK(reads == 1);
    CHECK(again->clouds.at(0).outcome == CloudRefreshOutcome::not_modified);
    CHECK((*load_catalog_cache(tmp.path()))->find("runpod")->made_by == "build-2");
  }
  SECTION("the raw copy gone: asked without validators")
  {
    std::filesystem::remove(catalog_raw_path(tmp.path(), "runpod"));
    test::FakeHttpClient fresh;
    fresh.on(get("runpod"), 200, k_runpod, {{"etag", "\"rp2\""}});
    auto again = refresh_catalogs(fresh, test::fake_catalog_reader, tmp.path(), settings({"runpod"}), k_t0 + 32h);
    REQUIRE(again);
    CHECK(again->clouds.at(0).outcome == CloudRefreshOutcome::fetched);
    CHECK_FALSE(sent(fresh.requests().back(), "If-None-Match"));
    CHECK((*load_catalog_cache(tmp.path()))->find("runpod")->validators.etag == "\"rp2\"");
  }
}

TEST_CASE("catalogue refresh: a bad download never replaces the cached copy", "[providers][market][refresh]")
{
  test::TempDir tmp;
  test::FakeHttpClient first;
  first.on(get("runpod"), 200, k_runpod, {{"etag", "\"rp1\""}});
  first.on(get("lambda"), 200, k_lambda);
  REQUIRE(refresh_catalogs(first, test::fake_catalog_reader, tmp.path(), settings({"runpod", "lambda"}), k_t0));
  test::FakeHttpClient http;
  const std::string offers_before = catalog_cache_to_text(**load_catalog_cache(tmp.path()));

  struct Bad {
    const char* what;
    long status;
    std::string body;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"an HTML page with 200", 200, "<!DOCTYPE html><html><body>Rate limit</body></html>\n", "runpod line 1"},
      {"garbage with 200", 200, std::string("\x1f\x8b\x08\x00garbage", 12), "runpod line 1"},
      {"a truncated file", 200, k_runpod.substr(0, k_runpod.size() - 5), "truncated"},
      {"a broken row", 200, test::fake_catalog({"1x_H100,h100-sxm,1,US"}), "runpod line 2"},
      {"404", 404, "404: Not Found", "HTTP 404"},
  };
  for (const auto& b : bad) {
    SECTION(b.what)
    {
      http.on(get("runpod"), b.status, b.body);
      http.on(get("lambda"), 200, test::fake_catalog({"gpu_1x_a10,a10,1,us-east-1,0.80,"}));
      auto report = refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod", "lambda"}), k_t0 + 25h);
      REQUIRE(report);
      const CloudRefresh& rp = report->clouds.at(0);
      CHECK(rp.outcome == CloudRefreshOutcome::failed);
      CHECK_THAT(rp.why, Catch::StartsWith("runpod") && Catch::Contains(b.says));
      CHECK(rp.kept_from == k_t0);
      CHECK(rp.offers == 2);
      CHECK(report->clouds.at(1).outcome == CloudRefreshOutcome::fetched);
      CHECK(report->failed() == 1);
      CHECK(raw(tmp.path(), "runpod") == k_runpod);  // the cached file, byte for byte
      auto cache = load_catalog_cache(tmp.path());
      REQUIRE(cache);
      const CachedCloud* kept = (*cache)->find("runpod");
      CHECK(kept->checked_at == k_t0);  // not confirmed: it stays due
      CHECK(kept->validators.etag == "\"rp1\"");
      CHECK((*cache)->offers.at(kept->first).price_per_hour == MicroUsd{2'990'000});
      CHECK((*cache)->offers.at((*cache)->find("lambda")->first).price_per_hour == MicroUsd{800'000});
      CHECK(catalog_cache_to_text(**cache) != offers_before);
    }
  }
}

TEST_CASE("catalogue refresh: 429 then the fallback host", "[providers][market][refresh]")
{
  test::TempDir tmp;
  test::FakeHttpClient http;
  http.on(get("runpod"), 429, "");
  http.on("GET https://mirror.test/catalogs/v8/runpod/vms.csv", 200, k_runpod);
  auto report = refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod"}), k_t0);
  REQUIRE(report);
  CHECK(report->clouds.at(0).outcome == CloudRefreshOutcome::fetched);
  CHECK(report->clouds.at(0).from_fallback);
  CHECK(raw(tmp.path(), "runpod") == k_runpod);
}

TEST_CASE("catalogue refresh: the host unreachable, the other clouds are not tried", "[providers][market][refresh]")
{
  test::TempDir tmp;
  test::FakeHttpClient http;
  Error e{Errc::unavailable, "HTTP GET …: Couldn't resolve host name"};
  e.not_sent = true;
  http.fail_with(get("runpod"), e);
  auto report = refresh_catalogs(http, test::fake_catalog_reader, tmp.path(), settings({"runpod", "lambda", "aws"}), k_t0);
  REQUIRE(report);
  CHECK(report->succeeded() == 0);
  CHECK(report->clouds.at(1).outcome == CloudRefreshOutcome::not_tried);
  CHECK_THAT(report->clouds.at(2).why, Catch::StartsWith("aws: not tried, catalog.test could not be reached"));
  CHECK(http.requests().size() == 1);
  auto cache = load_catalog_cache(tmp.path());
  REQUIRE(cache);
  REQUIRE(cache->has_value());
  CHECK((*cache)->tried_at == k_t0);  // the attempt is recorded: plan does not retry it at once
  CHECK((*cache)->clouds.empty());
}

TEST_CASE("catalogue refresh: a cache that cannot be written is an error", "[providers][market][refresh]")
{
  test::TempDir tmp;
  const auto blocked = tmp.write("file", "not a directory") / "catalog";
  test::FakeHttpClient http;
  http.on(get("runpod"), 200, k_runpod);
  auto report = refresh_catalogs(http, test::fake_catalog_reader, blocked, settings({"runpod"}), k_t0);
  REQUIRE_FALSE(report);
  CHECK_THAT(report.error().message, Catch::Contains("catalog"));
}

TEST_CASE("catalogue refresh: which clouds are due", "[providers][market][refresh]")
{
  CatalogCache c;
  c.tried_at = k_t0 - 30h;
  put_cloud(c, CachedCloud{"runpod", k_t0 - 30h, k_t0 - 30h, "b", {}, 0, 0}, {});
  put_cloud(c, CachedCloud{"lambda", k_t0 - 2h, k_t0 - 2h, "b", {}, 0, 0}, {});
  const std::vector<std::string> wanted{"runpod", "lambda", "aws"};
  CHECK(clouds_due(c, wanted, k_t0, 24h) == std::vector<std::string>{"runpod", "aws"});
  CHECK(clouds_due(c, wanted, k_t0, 1h) == std::vector<std::string>{"runpod", "lambda", "aws"});
  c.tried_at = k_t0 - 20min;  // a recent attempt: not again within the hour
  CHECK(clouds_due(c, wanted, k_t0, 24h).empty());
  CHECK(clouds_due(c, wanted, k_t0, 10min) == std::vector<std::string>{"runpod", "lambda", "aws"});
}

// SPDX-License-Identifier: MIT
// Downloading one cloud's catalogue file: conditional GET, 304, 429 then the fallback host,
// errors that name the cloud (providers/market/catalog_fetch.hpp).
#include <catch2/catch.hpp>

#include "fakes/fake_http_client.hpp"
#include "providers/market/catalog_fetch.hpp"

using namespace gpurent;
using namespace gpurent::market;

namespace {

constexpr const char* k_primary = "GET https://catalog.test/catalogs/v8/runpod/vms.csv";
constexpr const char* k_fallback = "GET https://mirror.test/catalogs/v8/runpod/vms.csv";

CatalogFetchRequest runpod()
{
  CatalogFetchRequest r;
  r.cloud = "runpod";
  r.base_url = "https://catalog.test/catalogs";
  r.fallback_url = "https://mirror.test/catalogs/";
  r.timeout = std::chrono::milliseconds{1234};
  return r;
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

TEST_CASE("catalogue fetch: the URL is <base>/v8/<cloud>/vms.csv, the default base is SkyPilot's", "[providers][market][fetch]")
{
  CHECK(catalog_file_url("https://x.test/catalogs", "aws") == "https://x.test/catalogs/v8/aws/vms.csv");
  CHECK(catalog_file_url("https://x.test/catalogs//", "gcp") == "https://x.test/catalogs/v8/gcp/vms.csv");
  CHECK(catalog_file_url(k_catalog_url, "lambda") ==
        "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv");
  CHECK(catalog_file_url(k_catalog_fallback_url, "lambda") ==
        "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs/v8/lambda/vms.csv");
  CHECK(catalog_clouds().size() == 15);
  CHECK(is_catalog_cloud("primeintellect"));
  CHECK_FALSE(is_catalog_cloud("gpucloud"));
}

TEST_CASE("catalogue fetch: 200 gives the text and the validators, unconditionally the first time", "[providers][market][fetch]")
{
  test::FakeHttpClient http;
  http.on(k_primary, 200, "csv text", {{"etag", "W/\"abc\""}, {"last-modified", "Sat, 05 Dec 2026 08:00:00 GMT"}});
  auto got = fetch_catalog(http, runpod());
  REQUIRE(got);
  CHECK(got->status == CatalogFetchStatus::fetched);
  CHECK(got->text == "csv text");
  CHECK(got->validators.etag == "W/\"abc\"");
  CHECK(got->validators.last_modified == "Sat, 05 Dec 2026 08:00:00 GMT");
  CHECK_FALSE(got->from_fallback);
  REQUIRE(http.requests().size() == 1);
  CHECK(http.requests()[0].headers.empty());
  CHECK(http.requests()[0].timeout == std::chrono::milliseconds{1234});
}

TEST_CASE("catalogue fetch: a copy we hold is asked with If-None-Match and If-Modified-Since, 304 keeps it", "[providers][market][fetch]")
{
  test::FakeHttpClient http;
  http.on(k_primary, 304, "");
  auto req = runpod();
  req.known = {"\"abc\"", "Sat, 05 Dec 2026 08:00:00 GMT"};
  auto got = fetch_catalog(http, req);
  REQUIRE(got);
  CHECK(got->status == CatalogFetchStatus::not_modified);
  CHECK(got->text.empty());
  CHECK(got->validators.etag == "\"abc\"");
  REQUIRE(http.requests().size() == 1);
  CHECK(sent(http.requests()[0], "If-None-Match") == "\"abc\"");
  CHECK(sent(http.requests()[0], "If-Modified-Since") == "Sat, 05 Dec 2026 08:00:00 GMT");
}

TEST_CASE("catalogue fetch: HTTP 429 goes to the fallback host once", "[providers][market][fetch]")
{
  test::FakeHttpClient http;
  http.on(k_primary, 429, "slow down");
  SECTION("the fallback answers")
  {
    http.on(k_fallback, 200, "mirror csv", {{"etag", "\"s3\""}});
    auto got = fetch_catalog(http, runpod());
    REQUIRE(got);
    CHECK(got->text == "mirror csv");
    CHECK(got->from_fallback);
    CHECK(got->url == "https://mirror.test/catalogs/v8/runpod/vms.csv");
    CHECK(got->validators.etag == "\"s3\"");
    CHECK(http.count(k_primary) == 1);
    CHECK(http.count(k_fallback) == 1);
  }
  SECTION("429 twice is an error naming the cloud and both hosts")
  {
    http.on(k_fallback, 429, "slow down too");
    auto got = fetch_catalog(http, runpod());
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::quota);
    CHECK_THAT(got.error().message, Catch::StartsWith("runpod: HTTP 429 from https://mirror.test/") &&
                                        Catch::Contains("after HTTP 429 from catalog.test"));
    CHECK(http.count(k_fallback) == 1);
  }
  SECTION("no fallback configured: the 429 is the answer")
  {
    auto req = runpod();
    req.fallback_url.clear();
    auto got = fetch_catalog(http, req);
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::quota);
    CHECK(http.requests().size() == 1);
  }
}

TEST_CASE("catalogue fetch: 404, 5xx and transport failures are errors naming the cloud", "[providers][market][fetch]")
{
  test::FakeHttpClient http;
  SECTION("404")
  {
    http.on(k_primary, 404, "404: Not Found");
    auto got = fetch_catalog(http, runpod());
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::not_found);
    CHECK_THAT(got.error().message, Catch::StartsWith("runpod: HTTP 404 from https://catalog.test/catalogs/v8/runpod/vms.csv"));
    CHECK(http.count(k_fallback) == 0);  // only a 429 goes to the mirror
  }
  SECTION("503")
  {
    http.on(k_primary, 503, "");
    auto got = fetch_catalog(http, runpod());
    REQUIRE_FALSE(got);
    CHECK(got.error().code == Errc::unavailable);
  }
  SECTION("the host does not resolve: the client's error, the cloud first, not_sent kept")
  {
    Error e{Errc::unavailable, "HTTP GET https://catalog.test/…: Couldn't resolve host name"};
    e.not_sent = true;
    http.fail_with(k_primary, e);
    auto got = fetch_catalog(http, runpod());
    REQUIRE_FALSE(got);
    CHECK(got.error().not_sent);
    CHECK_THAT(got.error().message, Catch::StartsWith("runpod: HTTP GET"));
  }
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <sstream>

#include "fakes/fake_clock.hpp"
#include "fakes/fake_http_client.hpp"
#include "providers/http/retrying_http_client.hpp"

using namespace gpurent;
using namespace std::chrono_literals;
using gpurent::test::FakeClock;
using gpurent::test::FakeHttpClient;

namespace {
HttpRequest get(const std::string& url)
{
  HttpRequest r;
  r.url = url;
  r.headers = {{"Authorization", "Bearer sekret"}};
  return r;
}
}  // namespace

TEST_CASE("RetryingHttpClient: retries 5xx with exponential backoff, then succeeds", "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("GET http://x/a", 500, "");
  inner.on("GET http://x/a", 502, "");
  inner.on("GET http://x/a", 200, "ok");
  FakeClock clock;
  std::ostringstream log;
  RetryingHttpClient c(inner, clock, RetryPolicy{}, &log);
  auto r = c.send(get("http://x/a"));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(inner.requests().size() == 3);
  REQUIRE(clock.sleeps().size() == 2);
  CHECK(clock.sleeps()[0] == 1000ms);
  CHECK(clock.sleeps()[1] == 2000ms);
  CHECK(log.str().find("sekret") == std::string::npos);
  CHECK(log.str().find("GET http://x/a -> 500") != std::string::npos);
}

TEST_CASE("RetryingHttpClient: honours Retry-After on 429 and gives up at max attempts", "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("GET http://x/a", 429, "", {{"retry-after", "7"}});
  FakeClock clock;
  RetryPolicy policy;
  policy.max_attempts = 3;
  RetryingHttpClient c(inner, clock, policy);
  auto r = c.send(get("http://x/a"));
  REQUIRE(r);
  CHECK(r->status == 429);
  CHECK(inner.requests().size() == 3);
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{7000ms, 7000ms});
}

TEST_CASE("RetryingHttpClient: never waits past the deadline", "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("GET http://x/a", 429, "", {{"retry-after", "600"}});
  FakeClock clock;
  RetryingHttpClient c(inner, clock, RetryPolicy{});
  auto r = c.send(get("http://x/a"));
  CHECK(r->status == 429);
  CHECK(inner.requests().size() == 1);
  CHECK(clock.sleeps().empty());
}

TEST_CASE("RetryingHttpClient: POST is retried only on 429, 4xx never", "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("POST http://x/launch", 500, "");
  inner.on("GET http://x/bad", 400, "");
  inner.fail_with("GET http://x/slow", Error{Errc::timeout, "timed out"});
  inner.fail_with("POST http://x/slow", Error{Errc::timeout, "timed out"});
  FakeClock clock;
  RetryingHttpClient c(inner, clock, RetryPolicy{});
  HttpRequest post = get("http://x/launch");
  post.method = "POST";
  CHECK(c.send(post)->status == 500);
  CHECK(inner.count("POST http://x/launch") == 1);
  CHECK(c.send(get("http://x/bad"))->status == 400);
  CHECK(inner.count("GET http://x/bad") == 1);
  CHECK(c.send(get("http://x/slow")).error().code == Errc::timeout);
  CHECK(inner.count("GET http://x/slow") == 5);
  HttpRequest slow_post = get("http://x/slow");
  slow_post.method = "POST";
  CHECK_FALSE(c.send(slow_post));
  CHECK(inner.count("POST http://x/slow") == 1);
}

TEST_CASE("RetryingHttpClient: spaces rate-limited requests (Lambda launch: 1 per 12 s)", "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("POST http://x/api/v1/instance-operations/launch", 200, "{}");
  inner.on("GET http://x/other", 200, "{}");
  FakeClock clock;
  RetryPolicy policy;
  policy.min_intervals = {MinInterval{"/instance-operations/launch", 12'000ms}};
  RetryingHttpClient c(inner, clock, policy);
  HttpRequest post = get("http://x/api/v1/instance-operations/launch");
  post.method = "POST";
  REQUIRE(c.send(post));
  clock.advance(5000ms);
  REQUIRE(c.send(post));
  CHECK(clock.sleeps() == std::vector<std::chrono::milliseconds>{7000ms});
  REQUIRE(c.send(get("http://x/other")));
  CHECK(clock.sleeps().size() == 1);
}

TEST_CASE("RetryingHttpClient: redact_url hides query values", "[providers][retrying]")
{
  CHECK(redact_url("http://x/a?api_key=abc&b=1") == "http://x/a?api_key=***&b=***");
  CHECK(redact_url("http://x/a") == "http://x/a");
}

TEST_CASE("RetryingHttpClient: a DELETE is not repeated on 5xx (the lifecycle looks first), only on 429",
          "[providers][retrying]")
{
  FakeHttpClient inner;
  inner.on("DELETE http://x/pods/p", 500, "");
  inner.on("DELETE http://x/pods/q", 429, "");
  inner.on("DELETE http://x/pods/q", 204, "");
  FakeClock clock;
  RetryingHttpClient c(inner, clock, RetryPolicy{});
  HttpRequest del = get("http://x/pods/p");
  del.method = "DELETE";
  auto r = c.send(del);
  REQUIRE(r);
  CHECK(r->status == 500);
  CHECK(inner.count("DELETE http://x/pods/p") == 1);
  del.url = "http://x/pods/q";
  auto q = c.send(del);
  REQUIRE(q);
  CHECK(q->status == 204);
  CHECK(inner.count("DELETE http://x/pods/q") == 2);
  CHECK_FALSE(is_idempotent("DELETE"));
}

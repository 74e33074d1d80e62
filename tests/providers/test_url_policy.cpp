// SPDX-License-Identifier: MIT
// Where a credential may go (providers/http/url_policy.hpp): https anywhere, plain http only to
// loopback, anything else refused unless allowed (then a warning); redirects never leave https.
#include <catch2/catch.hpp>

#include "providers/http/url_policy.hpp"

using namespace gpurent;

TEST_CASE("url_policy: the origin of a URL, without user info, path or query", "[providers][url_policy]")
{
  const auto o = url_origin("HTTP://user:pw@Example.COM:8080/v1?x=1");
  REQUIRE(o);
  CHECK(o->scheme == "http");
  CHECK(o->host == "example.com");
  CHECK(o->port == "8080");
  CHECK(o->text() == "http://example.com:8080");
  const auto v6 = url_origin("http://[::1]:9/x");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(v6->text() == "http://[::1]:9");
  CHECK_FALSE(url_origin("127.0.0.1:80/x"));
  CHECK_FALSE(url_origin("http:///x"));
  CHECK_FALSE(url_origin("http://[::1/x"));
}

TEST_CASE("url_policy: loopback is 127.0.0.0/8, ::1 and localhost only", "[providers][url_policy]")
{
  for (const char* h : {"127.0.0.1", "127.255.0.9", "127.0.0.01", "::1", "0:0:0:0:0:0:0:1", "0000:0:0:0:0:0:0:0001",
                        "localhost", "LOCALHOST", "localhost."}) {
    INFO(h);
    CHECK(is_loopback_host(h));
  }
  for (const char* h : {"192.0.2.2", "0000:0::0:0:0:0:0001", "10.0.0.1", "128.0.0.1", "127.0.0.1.example.com", "127.0.0", "127.0.0.256",
                        "0x7f.0.0.1", "::2", "::ffff:127.0.0.1", "localhost.example.com", "mylocalhost", "", "1270.0.0.1"}) {
    INFO(h);
    CHECK_FALSE(is_loopback_host(h));
  }
}

TEST_CASE("url_policy: a credential goes over https, or plain http to loopback", "[providers][url_policy]")
{
  CHECK(credential_route("https://rest.runpod.io/v1") == CredentialRoute::https);
  CHECK(credential_route("HTTPS://huggingface.co") == CredentialRoute::https);
  CHECK(credential_route("http://127.0.0.1:8080/lambda") == CredentialRoute::loopback_http);
  CHECK(credential_route("http://[::1]:8080/") == CredentialRoute::loopback_http);
  CHECK(credential_route("http://localhost/x") == CredentialRoute::loopback_http);
  CHECK(credential_route("http://192.0.2.2:8080/runpod/v1") == CredentialRoute::insecure_http);
  // The host is the one after the user info: "127.0.0.1@" does not make a URL local.
  CHECK(credential_route("http://127.0.0.1@192.0.2.2/") == CredentialRoute::insecure_http);
  CHECK(credential_route("http://127.0.0.1.nip.io/") == CredentialRoute::insecure_http);
  CHECK(credential_route("ftp://127.0.0.1/") == CredentialRoute::unusable);
  CHECK(credential_route("not a url") == CredentialRoute::unusable);
}

TEST_CASE("url_policy: the check refuses plain http to another machine, naming the source", "[providers][url_policy]")
{
  const auto ok = check_credential_url("https://cloud.lambda.ai", "the lambda API key", "lambda_api_url", false);
  REQUIRE(ok);
  CHECK(ok->empty());
  const auto local = check_credential_url("http://127.0.0.1:9/lambda", "the lambda API key", "GPURENT_LAMBDA_API_URL", false);
  REQUIRE(local);
  CHECK(local->empty());

  const auto refused =
      check_credential_url("http://user:secret@192.0.2.2:8080/v1?k=1", "the runpod API key", "GPURENT_RUNPOD_API_URL", false);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::refused);
  CHECK_THAT(refused.error().message, Catch::Contains("GPURENT_RUNPOD_API_URL") && Catch::Contains("http://192.0.2.2:8080") &&
                                          Catch::Contains("the runpod API key") && Catch::Contains("--insecure-http") &&
                                          Catch::Contains("allow_insecure_http"));
  CHECK_THAT(refused.error().message, !Catch::Contains("secret") && !Catch::Contains("k=1"));

  const auto allowed = check_credential_url("http://192.0.2.2:8080/v1", "the runpod API key", "runpod_api_url (config.toml:3)", true);
  REQUIRE(allowed);
  CHECK_THAT(*allowed, Catch::Contains("plain HTTP") && Catch::Contains("runpod_api_url (config.toml:3)"));

  const auto odd = check_credential_url("ftp://192.0.2.2/", "the Hugging Face token", "HF_ENDPOINT", true);
  REQUIRE_FALSE(odd);
  CHECK_THAT(odd.error().message, Catch::Contains("HF_ENDPOINT"));
}

TEST_CASE("url_policy: redirects from https stay on https", "[providers][url_policy]")
{
  CHECK(redirect_protocols("https://huggingface.co/acme/x/resolve/main/config.json") == "https");
  CHECK(redirect_protocols("HTTPS://cloud.lambda.ai") == "https");
  CHECK(redirect_protocols("http://127.0.0.1:9/") == "http,https");
  CHECK(redirect_protocols("garbage") == "https");
  CHECK(is_redirect_downgrade("https://huggingface.co/a", "http://cdn.example/a"));
  CHECK(is_redirect_downgrade("https://huggingface.co/a", "garbage"));
  CHECK_FALSE(is_redirect_downgrade("https://huggingface.co/a", "https://cdn.example/a"));
  CHECK_FALSE(is_redirect_downgrade("http://127.0.0.1/a", "http://127.0.0.1:2/a"));
  CHECK_FALSE(is_redirect_downgrade("http://127.0.0.1/a", "https://cdn.example/a"));
}

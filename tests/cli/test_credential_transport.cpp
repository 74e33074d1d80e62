// SPDX-License-Identifier: MIT
// Issue #44: API keys and the Hub token go only over https or to loopback (cli/credential_guard,
// providers/http/url_policy); --insecure-http or allow_insecure_http let plain HTTP through with a
// warning; the documented Hub keys (hf_token, hf_endpoint, GPURENT_HF_TOKEN) reach the Hub's
// requests; what a provider answers is printed without its control characters.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli/config.hpp"
#include "cli/errors.hpp"
#include "cli/lifecycle_support.hpp"
#include "cli/model_options.hpp"
#include "cli/services.hpp"
#include "cli_harness.hpp"
#include "fakes/fake_clock.hpp"
#include "fakes/fake_http_client.hpp"

using namespace gpurent;
namespace fs = std::filesystem;

namespace {

const std::string k_key = "rk_SECRET_do_not_send";

struct Rig {
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  test::FakeClock clock;
  test::FakeHttpClient http;
  Services s;
  explicit Rig(std::map<std::string, std::string> env) : s(out, err, in, std::move(env), clock)
  {
    s.http = [this]() -> Result<HttpClient*> { return &http; };
  }
  [[nodiscard]] bool auth_sent() const
  {
    for (const auto& r : http.requests()) {
      for (const auto& [k, v] : r.headers) {
        if (k == "Authorization") {
          return true;
        }
      }
    }
    return false;
  }
};

Config config_of(const std::string& file, const std::map<std::string, std::string>& env)
{
  auto c = config_from(file, "config.toml", env);
  REQUIRE(c);
  return *c;
}

}  // namespace

TEST_CASE("credentials: a provider URL from the environment on plain http to another machine is refused",
          "[cli][credentials]")
{
  const std::map<std::string, std::string> env{{"RUNPOD_API_KEY", k_key},
                                               {"GPURENT_RUNPOD_API_URL", "http://192.0.2.2:8080/runpod/v1"}};
  Rig rig(env);
  const Config cfg = config_of("", env);
  const auto h = open_provider(rig.s, cfg, "runpod");
  REQUIRE_FALSE(h);
  CHECK(h.error().code == Errc::refused);
  CHECK_THAT(h.error().message, Catch::Contains("GPURENT_RUNPOD_API_URL") && Catch::Contains("http://192.0.2.2:8080") &&
                                    Catch::Contains("--insecure-http"));
  CHECK_THAT(h.error().message, !Catch::Contains(k_key));
  CHECK(rig.http.requests().empty());
}

TEST_CASE("credentials: a provider URL from the config file is refused naming the key and line", "[cli][credentials]")
{
  const std::map<std::string, std::string> env{{"LAMBDA_API_KEY", k_key}};
  Rig rig(env);
  const Config cfg = config_of("budget_usd = 5\nlambda_api_url = \"http://192.0.2.2/lambda\"\n", env);
  const auto h = open_provider(rig.s, cfg, "lambda");
  REQUIRE_FALSE(h);
  CHECK_THAT(h.error().message, Catch::Contains("lambda_api_url (config.toml:2)"));
  CHECK(rig.http.requests().empty());
}

TEST_CASE("credentials: RunPod's GraphQL URL is checked too", "[cli][credentials]")
{
  const std::map<std::string, std::string> env{{"RUNPOD_API_KEY", k_key},
                                               {"GPURENT_RUNPOD_API_URL", "http://127.0.0.1:9/runpod/v1"},
                                               {"GPURENT_RUNPOD_GRAPHQL_URL", "http://192.0.2.2:9/graphql"}};
  Rig rig(env);
  const auto h = open_provider(rig.s, config_of("", env), "runpod");
  REQUIRE_FALSE(h);
  CHECK_THAT(h.error().message, Catch::Contains("GPURENT_RUNPOD_GRAPHQL_URL"));
}

TEST_CASE("credentials: https and loopback need no permission and print nothing", "[cli][credentials]")
{
  for (const char* url : {"https://cloud.lambda.ai", "http://127.0.0.1:9/lambda", "http://[::1]:9/lambda", "http://localhost:9/lambda"}) {
    INFO(url);
    const std::map<std::string, std::string> env{{"LAMBDA_API_KEY", k_key}, {"GPURENT_LAMBDA_API_URL", url}};
    Rig rig(env);
    CHECK(open_provider(rig.s, config_of("", env), "lambda"));
    CHECK(rig.err.str().empty());
  }
}

TEST_CASE("credentials: --insecure-http and allow_insecure_http let plain http through with a warning", "[cli][credentials]")
{
  const std::map<std::string, std::string> env{{"LAMBDA_API_KEY", k_key}, {"GPURENT_LAMBDA_API_URL", "http://192.0.2.2:8080/lambda"}};
  SECTION("the flag")
  {
    Rig rig(env);
    rig.s.global.insecure_http = true;
    auto h = open_provider(rig.s, config_of("", env), "lambda");
    REQUIRE(h);
    CHECK_THAT(rig.err.str(), Catch::Contains("warning") && Catch::Contains("plain HTTP") &&
                                  Catch::Contains("GPURENT_LAMBDA_API_URL"));
    (void)h->provider->fetch_offers();
    CHECK(rig.auth_sent());
  }
  SECTION("the config key")
  {
    Rig rig(env);
    const Config cfg = config_of("allow_insecure_http = true\n", env);
    CHECK(cfg.allow_insecure_http);
    auto h = open_provider(rig.s, cfg, "lambda");
    REQUIRE(h);
    CHECK_THAT(rig.err.str(), Catch::Contains("plain HTTP"));
  }
  SECTION("its environment variable")
  {
    auto with = env;
    with["GPURENT_ALLOW_INSECURE_HTTP"] = "true";
    Rig rig(with);
    CHECK(open_provider(rig.s, config_of("allow_insecure_http = false\n", with), "lambda"));
  }
}

TEST_CASE("credentials: allow_insecure_http is a boolean key", "[cli][credentials][config]")
{
  CHECK_FALSE(config_of("", {}).allow_insecure_http);
  const auto quoted = config_from("allow_insecure_http = \"yes\"\n", "config.toml", {});
  REQUIRE_FALSE(quoted);
  CHECK_THAT(quoted.error().message, Catch::Contains("config.toml:1") && Catch::Contains("true or false"));
  const auto env_bad = config_from("", "config.toml", {{"GPURENT_ALLOW_INSECURE_HTTP", "maybe"}});
  REQUIRE_FALSE(env_bad);
  CHECK_THAT(env_bad.error().message, Catch::Contains("GPURENT_ALLOW_INSECURE_HTTP"));
  const auto number = config_from("budget_usd = true\n", "config.toml", {});
  REQUIRE_FALSE(number);  // other keys still refuse true/false
}

TEST_CASE("Hub: hf_token and hf_endpoint from the config file reach the Hub's requests", "[cli][credentials][hub]")
{
  const std::map<std::string, std::string> env{{"HOME", "/nonexistent-home"}};
  const Config cfg = config_of("hf_token = \"hf_from_config\"\nhf_endpoint = \"http://127.0.0.1:9/hub/\"\n", env);
  Rig rig(env);
  const ResolveOptions o = resolve_options_from(rig.s, cfg, false);
  CHECK(o.endpoint == "http://127.0.0.1:9/hub");
  CHECK(o.token == "hf_from_config");
  (void)resolve_model("acme/gated-model", o, hub_http(rig.s, cfg, o));
  REQUIRE_FALSE(rig.http.requests().empty());
  const auto& first = rig.http.requests().front();
  CHECK(first.url.starts_with("http://127.0.0.1:9/hub/acme/gated-model/"));
  bool bearer = false;
  for (const auto& [k, v] : first.headers) {
    bearer = bearer || (k == "Authorization" && v == "Bearer hf_from_config");
  }
  CHECK(bearer);
}

TEST_CASE("Hub: the environment wins over the file (GPURENT_HF_TOKEN, then HF_TOKEN)", "[cli][credentials][hub]")
{
  const std::string file = "hf_token = \"hf_file\"\nhf_endpoint = \"https://mirror.example\"\n";
  std::map<std::string, std::string> env{{"HF_TOKEN", "hf_env"}, {"HF_ENDPOINT", "https://hub.example"}};
  Rig rig(env);
  auto o = resolve_options_from(rig.s, config_of(file, env), true);
  CHECK(o.token == "hf_env");
  CHECK(o.endpoint == "https://hub.example");
  env["GPURENT_HF_TOKEN"] = "hf_gpurent";
  env["GPURENT_HF_ENDPOINT"] = "https://gpurent.example";
  o = resolve_options_from(rig.s, config_of(file, env), true);
  CHECK(o.token == "hf_gpurent");
  CHECK(o.endpoint == "https://gpurent.example");
  // HUGGING_FACE_HUB_TOKEN only when nothing else gives one.
  rig.s.env = {{"HUGGING_FACE_HUB_TOKEN", "hf_old"}};
  o = resolve_options_from(rig.s, config_of("", rig.s.env), true);
  CHECK(o.token == "hf_old");
}

TEST_CASE("Hub: a token is not sent to a plain-http endpoint on another machine", "[cli][credentials][hub]")
{
  const std::map<std::string, std::string> env{{"HF_TOKEN", "hf_x"}, {"HF_ENDPOINT", "http://192.0.2.2:9"}};
  Rig rig(env);
  const Config cfg = config_of("", env);
  const ResolveOptions o = resolve_options_from(rig.s, cfg, false);
  const auto r = resolve_model("acme/tiny", o, hub_http(rig.s, cfg, o));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::refused);
  CHECK_THAT(r.error().message, Catch::Contains("HF_ENDPOINT") && Catch::Contains("Hugging Face token"));
  CHECK(rig.http.requests().empty());
  // Without a token there is nothing to protect.
  const std::map<std::string, std::string> anonymous{{"HF_ENDPOINT", "http://192.0.2.2:9"}};
  Rig open(anonymous);
  const Config none = config_of("", anonymous);
  const ResolveOptions oa = resolve_options_from(open.s, none, false);
  (void)resolve_model("acme/tiny", oa, hub_http(open.s, none, oa));
  CHECK_FALSE(open.http.requests().empty());
}

TEST_CASE("errors: a provider's answer is printed without its control characters (text and JSON)", "[cli][credentials][errors]")
{
  const HttpResponse resp{400, {}, "{\"error\":{\"message\":\"\x1b[2J\x1b]0;pwned\x07gone\"}}"};
  const Error e = http_error("lambda: instance types", resp, "\x1b[2J\x1b]0;pwned\x07gone\r");
  test::FakeClock clock;
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  Services s{out, err, in, {}, clock};
  s.global.json = true;
  (void)report_error(s, e);
  CHECK(err.str().find('\x1b') == std::string::npos);
  CHECK(err.str().find('\x07') == std::string::npos);
  CHECK(err.str().find('\r') == std::string::npos);
  CHECK_THAT(err.str(), Catch::Contains("\\x1b[2J\\x1b]0;pwned\\x07gone\\x0d"));
  const auto doc = nlohmann::json::parse(out.str());
  CHECK(doc["error"]["message"].get<std::string>().find('\x1b') == std::string::npos);
  CHECK_THAT(doc["error"]["message"].get<std::string>(), Catch::Contains("\\x1b[2J"));
  // A warning quoting a server's text too.
  std::ostringstream err2;
  Services w{out, err2, in, {}, clock};
  report_warning(w, "server said \x1b[31mred\nline two");
  CHECK(err2.str() == "gpurent: warning: server said \\x1b[31mred\nline two\n");
}

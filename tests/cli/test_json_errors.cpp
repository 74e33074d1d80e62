// SPDX-License-Identifier: MIT
// Every command, given a bad input under --json, prints exactly one JSON document on stdout,
// {"error": {"code", "message", "exit", "hint"}}, and the same error as one line on stderr; and
// the exit codes of the contract (0 ok, 1 error, 2 usage, 3 refused/does not have that, 4 partial).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "cli/cli_harness.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/services.hpp"
#include "fakes/fake_http_client.hpp"
#include "fakes/temp_dir.hpp"
#include "providers/state_store.hpp"
#include "sync/transport.hpp"

namespace fs = std::filesystem;
using gpurent::test::CliHarness;
using gpurent::test::CliRun;
using Json = nlohmann::json;

namespace {

// A temporary XDG tree; the ports that would touch the world answer with an error.
class Sandbox {
public:
  Sandbox()
  {
    const fs::path& dir = m_tmp.path();
    h.env["XDG_CONFIG_HOME"] = (dir / "config").string();
    h.env["XDG_CACHE_HOME"] = (dir / "cache").string();
    h.env["XDG_STATE_HOME"] = (dir / "state").string();
    h.env["GPURENT_HTTP_BACKOFF_MS"] = "1";
    h.setup = [this](gpurent::Services& s) {
      s.http = [this]() -> gpurent::Result<gpurent::HttpClient*> { return &http; };
      s.state = []() -> gpurent::Result<gpurent::StateStore*> {
        return gpurent::fail(gpurent::Errc::unavailable, "state database: not in this test; retry");
      };
      s.ssh_connect = [](const gpurent::SshTarget&, const gpurent::SshOptions&)
          -> gpurent::Result<std::unique_ptr<gpurent::SshSession>> {
        return gpurent::fail(gpurent::Errc::unavailable, "ssh: no network in this test; retry");
      };
    };
  }
  void config(const std::string& text)
  {
    const auto file = m_tmp.write("config/gpurent/config.toml", text);
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  }

private:
  gpurent::test::TempDir m_tmp{"gpurent-json-errors"};  // first: the harness below points into it

public:
  CliHarness h;
  gpurent::test::FakeHttpClient http;
};

// The error document's shape, and stderr holding the same error in one line.
Json check_error_document(const CliRun& r)
{
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.code != 0);
  REQUIRE_NOTHROW(Json::parse(r.out));  // exactly one document: parse() rejects trailing content
  const Json j = Json::parse(r.out);
  REQUIRE(j.is_object());
  REQUIRE(j.contains("error"));
  const Json& e = j["error"];
  CHECK(e.size() == 4);
  const std::set<std::string> codes{"usage", "not_found", "refused", "network", "auth", "partial", "internal"};
  REQUIRE(e["code"].is_string());
  CHECK(codes.contains(e["code"].get<std::string>()));
  CHECK(e["exit"] == r.code);
  REQUIRE(e["message"].is_string());
  REQUIRE(e["hint"].is_string());
  CHECK_FALSE(e["message"].get<std::string>().empty());
  CHECK_FALSE(e["hint"].get<std::string>().empty());
  const std::string line = "gpurent: error: " + e["message"].get<std::string>() + "; " + e["hint"].get<std::string>() + "\n";
  CHECK_THAT(r.err, Catch::EndsWith(line));
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
  CHECK(r.out.find('\x1b') == std::string::npos);
  return j;
}

// Services under --json writing into strings (no command line: the capture is driven directly).
struct JsonServices {
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  gpurent::test::FakeClock clock;
  gpurent::Services s{out, err, in, {}, clock};
  JsonServices() { s.global.json = true; }
};

struct BadInput {
  std::vector<std::string> args;
  int exit;
  const char* code;
};

}  // namespace

TEST_CASE("JSON errors: every command's bad input is one error document on stdout", "[cli][errors]")
{
  // One row per command (and per config subcommand): usage errors from the parser, and errors
  // the commands find themselves.
  const std::vector<BadInput> table = {
      {{"plan", "nosuch"}, 1, "not_found"},
      {{"plan", "llama-3.1-8b", "--gpus", "0"}, 2, "usage"},
      // A name wrapped in control bytes is not read as the name inside (fuzz_values finding).
      {{"plan", "llama-3.1-8b", "--provider", "\xfflambda\x01", "--spot"}, 2, "usage"},
      {{"plan", "llama-3.1-8b", "--card", "rtx\x1b-4090"}, 2, "usage"},
      {{"fits", "nosuch-card"}, 2, "usage"},
      {{"models", "extra"}, 2, "usage"},
      {{"cards", "extra"}, 2, "usage"},
      {{"offers", "--provider", "acme"}, 2, "usage"},
      // No API key, and the price catalogue's hosts answer nothing here: the built-in table, partial.
      {{"offers", "--refresh"}, 4, "partial"},
      {{"cost", "--provider", "runpod", "--card", "l4"}, 2, "usage"},
      {{"cost", "--provider", "lambda", "--card", "h100-pcie", "--hours", "1", "--spot"}, 3, "refused"},
      {{"cost", "--provider", "runpod", "--card", "l4", "--gpus", "-1", "--hours", "1"}, 2, "usage"},
      {{"config"}, 2, "usage"},
      {{"config", "bogus"}, 2, "usage"},
      {{"config", "path", "extra"}, 2, "usage"},
      {{"config", "set", "bogus_key", "1"}, 2, "usage"},
      {{"config", "set", "budget_usd", "lots"}, 2, "usage"},
      {{"config", "get", "hf_token"}, 1, "not_found"},
      {{"config", "get"}, 2, "usage"},
      {{"oom", "/nonexistent/train.log"}, 1, "not_found"},
      {{"up", "--bogus"}, 2, "usage"},
      {{"up", "--provider", "gpucloud", "--card", "rtx-pro-6000", "--name", "x", "--yes"}, 3, "refused"},
      {{"attach", "--gpus", "9"}, 2, "usage"},
      {{"status"}, 1, "network"},
      {{"start"}, 2, "usage"},
      {{"start", "--bogus"}, 2, "usage"},
      {{"down"}, 2, "usage"},
      {{"down", "x", "--stop", "--hibernate"}, 2, "usage"},
      {{"ssh", "--host"}, 2, "usage"},
      {{"ssh", "--host", "root@127.0.0.1", "--identity", "/nonexistent/key"}, 2, "usage"},
      {{"backup", "--include"}, 2, "usage"},
      {{"doctor", "box"}, 1, "network"},
      {{"backup", "box"}, 1, "network"},
      {{"doctor", "--bogus"}, 2, "usage"},
      {{"push", "--bogus"}, 2, "usage"},
      {{"run", "--host", "root@127.0.0.1", "--then", "nonsense", "true"}, 2, "usage"},
      {{"run", "--host", "root@127.0.0.1", "--then", "down:destroy", "true"}, 3, "refused"},
      {{"logs", "--host", "root@127.0.0.1", "j1", "j2"}, 2, "usage"},
      {{"jobs", "box"}, 1, "network"},
      {{"autostop", "--bogus"}, 2, "usage"},
      {{"autostop", "box", "--pause", "soon"}, 2, "usage"},
      {{"autostop", "box", "--pause", "1h", "--cancel"}, 2, "usage"},
      // The request's values are read before connecting (port 1 refuses: a network error would show).
      {{"autostop", "--host", "root@127.0.0.1:1", "--idle", "30m", "--then", "destroy", "--backup-to", "me@-oProxyCommand=x:b"},
       2, "usage"},
      {{"autostop", "--host", "root@127.0.0.1:1", "--idle", "30m", "--release-after", "soon"}, 2, "usage"},
      {{"help", "plna"}, 2, "usage"},
      {{"completion", "tcsh"}, 2, "usage"},
      {{"man", "extra"}, 2, "usage"},
      {{"plna"}, 2, "usage"},
      {{}, 2, "usage"},
  };
  // Every command has a row.
  std::set<std::string> covered;
  for (const auto& row : table) {
    if (!row.args.empty()) {
      covered.insert(row.args.front());
    }
  }
  for (const auto name : gpurent::command_names()) {
    INFO("no bad-input row for " << name);
    CHECK(covered.contains(std::string(name)));
  }
  for (const auto& row : table) {
    for (const bool json_first : {false, true}) {
      std::vector<std::string> args = row.args;
      args.insert(json_first ? args.begin() : args.end(), "--json");
      std::string shown;
      for (const auto& a : args) {
        shown += a + " ";
      }
      SECTION(shown)
      {
        Sandbox box;
        const CliRun r = box.h.run(args);
        const Json j = check_error_document(r);
        CHECK(r.code == row.exit);
        if (row.code != nullptr) {
          CHECK(j["error"]["code"] == row.code);
        }
      }
    }
  }
}

TEST_CASE("JSON errors: a result printed before the error carries it (one document)", "[cli][errors]")
{
  Sandbox box;
  SECTION("plan that does not fit: the plan with choice null and the error, exit 3")
  {
    const CliRun r = box.h.run({"plan", "llama-3.1-70b", "--card", "rtx-4090", "--gpus", "1", "--json"});
    const Json j = check_error_document(r);
    CHECK(r.code == 3);
    CHECK(j["error"]["code"] == "refused");
    CHECK(j["choice"].is_null());
    CHECK(j.contains("memory"));
  }
  SECTION("config show of a broken file: what it could read, and the bad line")
  {
    box.config("budget_usd = 7\nthis is not toml\n");
    const CliRun r = box.h.run({"config", "show", "--json"});
    const Json j = check_error_document(r);
    CHECK(r.code == 2);
    CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains("config.toml:2"));
    bool budget = false;
    for (const auto& k : j["keys"]) {
      budget = budget || (k["key"] == "budget_usd" && k["value"] == 7.0);
    }
    CHECK(budget);
  }
  SECTION("--help and --version are JSON documents too")
  {
    const CliRun help = box.h.run({"plan", "--help", "--json"});
    REQUIRE(help.code == 0);
    CHECK_THAT(Json::parse(help.out)["help"].get<std::string>(), Catch::Contains("Examples:"));
    const CliRun version = box.h.run({"--version", "--json"});
    REQUIRE(version.code == 0);
    const Json v = Json::parse(version.out);
    CHECK(v.contains("version"));
    CHECK(v.contains("commit"));
    CHECK(v.contains("built"));
  }
}

TEST_CASE("JSON errors: an error reported after the command's stdout was handed back is merged", "[cli][errors]")
{
  // main()'s catch: the exception unwound past the capture, then the error is reported.
  JsonServices js;
  auto& s = js.s;
  const auto& out = js.out;
  {
    gpurent::JsonStdout capture(s);
    s.out << R"({"partial": true})" << '\n';
  }
  CHECK(out.str() == R"({"partial": true)");  // the end is held back until the command is over
  const int code = gpurent::report_error(s, gpurent::Error{gpurent::Errc::internal, "boom"});
  CHECK(code == 1);
  const Json j = Json::parse(out.str());
  CHECK(j["partial"] == true);
  CHECK(j["error"]["code"] == "internal");
  CHECK(j["error"]["hint"] == "this is a bug in gpurent; please report it with the command you ran");
}

TEST_CASE("JSON errors: the held tail joins the error to pretty, compact and empty documents", "[cli][errors]")
{
  const auto run = [](const std::vector<std::string>& pieces, bool with_error) {
    JsonServices js;
    auto& s = js.s;
    {
      gpurent::JsonStdout capture(s);
      for (const auto& p : pieces) {
        s.out << p;
        s.out.flush();
      }
      if (with_error) {
        (void)gpurent::report_error(s, gpurent::Error{gpurent::Errc::partial, "some failed; retry"});
      }
    }
    gpurent::finish_json_output(s);
    return js.out.str();
  };
  const Json pretty = Json{{"a", 1}, {"b", Json{{"c", "}"}}}};
  const std::string merged = run({pretty.dump(2), "\n"}, true);
  CHECK(Json::parse(merged)["error"]["code"] == "partial");
  CHECK(Json::parse(merged)["b"]["c"] == "}");
  CHECK_THAT(merged, Catch::EndsWith("},\n  \"error\": {\"code\":\"partial\",\"exit\":4,\"hint\":\"retry\",\"message\":\"some failed\"}\n}\n"));
  CHECK(run({pretty.dump(2), "\n"}, false) == pretty.dump(2) + "\n");  // untouched without an error
  CHECK(Json::parse(run({"{\"x\":[1,2]}", "\n"}, true))["x"].size() == 2);
  CHECK(Json::parse(run({"{", "}", "\n"}, true))["error"]["exit"] == 4);  // an empty object
  CHECK(Json::parse(run({"{\"a\":", "{}", "}"}, true))["error"]["exit"] == 4);  // pieces of any size
  CHECK(run({}, true) == "{\"error\":{\"code\":\"partial\",\"exit\":4,\"hint\":\"retry\",\"message\":\"some failed\"}}\n");
}

TEST_CASE("Error text: the hint is what follows the first ', ' outside backticks", "[cli][errors]")
{
  using gpurent::Errc;
  const auto t = gpurent::error_text({Errc::usage, "model x: unknown; see `gpurent models; or not`"}, "plan");
  CHECK(t.message == "model x: unknown");
  CHECK(t.hint == "see `gpurent models; or not`");
  const auto quoted = gpurent::error_text({Errc::usage, "bad `a; b` value"}, "plan");
  CHECK(quoted.message == "bad `a; b` value");
  CHECK(quoted.hint == "see `gpurent plan --help`");
  CHECK(gpurent::error_text({Errc::unavailable, "HTTP 503"}, "offers").hint == "check the network connection and retry");
  CHECK(gpurent::error_code_name(Errc::unauthorized) == "auth");
  CHECK(gpurent::error_code_name(Errc::timeout) == "network");
  CHECK(gpurent::error_code_name(Errc::unsupported) == "refused");
  CHECK(gpurent::wants_json({"plan", "--json"}));
  CHECK_FALSE(gpurent::wants_json({"ssh", "box", "--", "tool", "--json"}));
}

TEST_CASE("Error text: never split inside parentheses or double quotes", "[cli][errors]")
{
  using gpurent::Errc;
  // #45: the cause in parentheses carried its own "; " and the hint began inside it.
  const auto t = gpurent::error_text(
      {Errc::unavailable, "down: backup failed (ssh 1.2.3.4:22: connection refused; check that the server is up and the port "
                          "is right); nothing was destroyed; retry with `gpurent down x --destroy`"},
      "down");
  CHECK(t.message == "down: backup failed (ssh 1.2.3.4:22: connection refused; check that the server is up and the port is right)");
  CHECK(t.hint == "nothing was destroyed; retry with `gpurent down x --destroy`");
  const auto nested = gpurent::error_text({Errc::usage, "bad value (a [b; c] (d; e)); fix it"}, "plan");
  CHECK(nested.message == "bad value (a [b; c] (d; e))");
  CHECK(nested.hint == "fix it");
  const auto dq = gpurent::error_text({Errc::usage, "key \"a; b\" unknown; see the list"}, "config");
  CHECK(dq.message == "key \"a; b\" unknown");
  CHECK(dq.hint == "see the list");
  // An unmatched ')' does not hide a later split; an unclosed '(' keeps the whole message.
  CHECK(gpurent::error_text({Errc::usage, "step 1) failed; retry"}, "run").hint == "retry");
  const auto open = gpurent::error_text({Errc::usage, "cut (here; there"}, "plan");
  CHECK(open.message == "cut (here; there");
  CHECK(open.hint == "see `gpurent plan --help`");
}

TEST_CASE("Error codes: every code's exit is the one the contract gives it", "[cli][errors][exit]")
{
  // cli.md: 2 usage, 3 refused, 4 partial, 1 every other error. A document saying "usage" with
  // exit 1 (a malformed GGUF file did) would send a script down the wrong branch.
  using gpurent::Errc;
  for (const Errc c : {Errc::not_found, Errc::invalid_input, Errc::unauthorized, Errc::quota, Errc::unavailable,
                       Errc::timeout, Errc::unsupported, Errc::usage, Errc::refused, Errc::partial, Errc::internal}) {
    const std::string name(gpurent::error_code_name(c));
    const int exit = gpurent::exit_code_for(c);
    INFO(name << " exits " << exit);
    CHECK(exit == (name == "usage" ? 2 : name == "refused" ? 3 : name == "partial" ? 4 : 1));
  }
}

TEST_CASE("Error codes: a malformed GGUF file is a usage error, a log without an OOM is not_found", "[cli][errors][exit]")
{
  gpurent::test::TempDir tmp{"gpurent-error-codes"};
  const auto gguf = tmp.path() / "broken.gguf";
  const std::string bytes("GGUF\x03\x00\x00\x00" "garbage", 15);  // a version-3 header cut short
  std::ofstream(gguf, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const auto log = tmp.path() / "train.log";
  std::ofstream(log) << "epoch 1 loss 0.3\nall good\n";
  struct Row {
    std::vector<std::string> args;
    int exit;
    const char* code;
  };
  for (const Row& row : {Row{{"plan", gguf.string(), "--json"}, 2, "usage"}, Row{{"oom", log.string(), "--json"}, 1, "not_found"}}) {
    INFO(row.args[0] << " " << row.args[1]);
    const auto r = gpurent::test::run_cli(row.args);
    CHECK(r.code == row.exit);
    const auto doc = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE(doc.contains("error"));
    CHECK(doc["error"]["code"] == row.code);
    CHECK(doc["error"]["exit"] == row.exit);
  }
}

TEST_CASE("Exit codes: the contract's table", "[cli][errors][exit]")
{
  struct Row {
    const char* what;
    std::vector<std::string> args;
    int exit;
  };
  const std::vector<Row> table = {
      {"ok", {"cost", "--provider", "runpod", "--card", "l4", "--hours", "2"}, 0},
      {"an unknown model", {"plan", "nosuch"}, 1},
      {"a usage error", {"plan", "--gpus"}, 2},
      {"a value out of range", {"attach", "--gpus", "0"}, 2},
      {"spot on Lambda (cost)", {"cost", "--provider", "lambda", "--card", "a10", "--hours", "1", "--spot"}, 3},
      {"hibernate on Lambda (cost)", {"cost", "--provider", "lambda", "--card", "a10", "--hours", "1", "--hibernated-hours", "1"}, 3},
      {"spot on Lambda (plan): no on-demand price in its place", {"plan", "llama-3.1-8b", "--provider", "lambda", "--spot"}, 3},
      {"a card the provider does not sell", {"cost", "--provider", "gpucloud", "--card", "rtx-4090", "--hours", "1", "--price", "1"}, 3},
      {"does not fit", {"plan", "llama-3.1-70b", "--card", "rtx-4090", "--gpus", "1"}, 3},
      {"refresh without any API key, the catalogue unreachable: the built-in table, partial", {"offers", "--refresh"}, 4},
      {"refresh of a provider without an API", {"offers", "--refresh", "--provider", "gpucloud"}, 3},
  };
  for (const auto& row : table) {
    SECTION(row.what)
    {
      Sandbox box;
      const CliRun r = box.h.run(row.args);
      INFO(r.err);
      CHECK(r.code == row.exit);
      if (row.exit != 0) {
        CHECK_THAT(r.err, Catch::StartsWith("gpurent: error: ") || Catch::Contains("\ngpurent: error: "));
      }
    }
  }
  SECTION("spot on Lambda: plan says why, like cost")
  {
    Sandbox box;
    const CliRun plan = box.h.run({"plan", "llama-3.1-8b", "--provider", "lambda", "--spot"});
    const CliRun cost = box.h.run({"cost", "--provider", "lambda", "--card", "a10", "--hours", "1", "--spot"});
    CHECK_THAT(plan.err, Catch::Contains("no spot in Lambda's API"));
    CHECK_THAT(cost.err, Catch::Contains("no spot in Lambda's API"));
    CHECK(plan.out.empty());
  }
}

TEST_CASE("Exit codes: offers --refresh, nothing fetched is an error, one provider failing is partial", "[cli][errors][exit]")
{
  Sandbox box;
  box.h.env["LAMBDA_API_KEY"] = "test-key";
  box.h.env["VAST_API_KEY"] = "test-key";
  box.h.env["GPURENT_LAMBDA_API_URL"] = "https://lambda.test";
  box.h.env["GPURENT_VAST_API_URL"] = "https://vast.test";
  box.http.fail_with("POST https://vast.test/bundles/", gpurent::Error{gpurent::Errc::unavailable, "vast.test: connection refused"});
  SECTION("both fail: nothing fetched, the built-in table answers: partial, exit 4, the reasons named")
  {
    box.http.fail_with("GET https://lambda.test/api/v1/instance-types",
                       gpurent::Error{gpurent::Errc::unavailable, "lambda.test: connection refused"});
    const CliRun r = box.h.run({"offers", "--refresh", "--json"});
    const Json j = check_error_document(r);
    CHECK(r.code == 4);
    CHECK(j["error"]["code"] == "partial");
    CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains("fetched nothing") && Catch::Contains("lambda") &&
                                                             Catch::Contains("vast"));
    CHECK(j.contains("offers"));  // the built-in table is still shown
  }
  SECTION("vast alone fails: the market snapshot's prices still answer: exit 4")
  {
    const CliRun r = box.h.run({"offers", "--refresh", "--provider", "vast", "--json"});
    const Json j = check_error_document(r);
    CHECK(r.code == 4);
    CHECK(j["error"]["code"] == "partial");
    CHECK(j.contains("offers"));
  }
  SECTION("lambda answers, vast fails: partial, exit 4")
  {
    box.http.on("GET https://lambda.test/api/v1/instance-types", 200, gpurent::test::read_fixture("lambda/instance_types.json"));
    const CliRun r = box.h.run({"offers", "--refresh", "--json"});
    const Json j = check_error_document(r);
    CHECK(r.code == 4);
    CHECK(j["error"]["code"] == "partial");
    CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains("vast"));
    CHECK_THAT(r.err, Catch::Contains("fetched ") && Catch::Contains(" from lambda"));
    bool fetched = false;
    for (const auto& o : j["offers"]) {
      fetched = fetched || (o["provider"] == "lambda" && o["price_origin"].get<std::string>().starts_with("fetched"));
    }
    CHECK(fetched);
  }
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/cli_harness.hpp"
#include "cli/config.hpp"
#include "cli/model_options.hpp"
#include "cli/services.hpp"
#include "fakes/fake_clock.hpp"
#include "sizing/model_catalog.hpp"

using gpurent::test::CliHarness;

TEST_CASE("models command: JSON lists every catalogue entry with the contract's keys", "[cli][models]")
{
  CliHarness h;
  const auto r = h.run({"models", "--json"});
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.at("models").is_array());
  CHECK(j["models"].size() == gpurent::model_catalog().size());
  CHECK(j["models"].size() >= 45);
  for (const auto& m : j["models"]) {
    for (const char* key : {"name", "hf_ids", "params", "layers", "hidden", "heads", "kv_heads", "head_dim", "vocab",
                            "intermediate", "experts", "experts_active", "max_context", "tied_embeddings",
                            "sliding_window", "attention", "source"}) {
      INFO(key);
      CHECK(m.contains(key));
    }
  }
  const auto oss = std::find_if(j["models"].begin(), j["models"].end(),
                                [](const auto& m) { return m["name"] == "gpt-oss-120b"; });
  REQUIRE(oss != j["models"].end());
  CHECK((*oss)["attention"] == "sliding");
  CHECK((*oss)["experts"] == 128);
  CHECK((*oss)["params"] == 116'829'156'672ULL);
}

TEST_CASE("models command: text table fits 80 columns", "[cli][models]")
{
  CliHarness h;
  const auto r = h.run({"models"});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("llama-3.1-8b") && Catch::Contains("8.03B") && Catch::Contains("128k"));
  CHECK_THAT(r.out, Catch::Contains("mixtral-8x7b") && Catch::Contains("2/8"));
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    INFO(line);
    CHECK(line.size() <= 80);
  }
}

TEST_CASE("resolve_options_from: environment of the process, never getenv", "[cli][models]")
{
  std::ostringstream out;
  std::ostringstream err;
  std::istringstream in;
  gpurent::test::FakeClock clock;
  gpurent::Services s{out, err, in, {{"HF_ENDPOINT", "http://127.0.0.1:9/"}, {"HF_TOKEN", "hf_x"},
                                     {"XDG_CACHE_HOME", "/tmp/xdg"}, {"HOME", "/home/u"}}, clock};
  const auto cfg = [&] { return gpurent::config_from("", "config.toml", s.env).value(); };
  const auto o = gpurent::resolve_options_from(s, cfg(), true);
  CHECK(o.endpoint == "http://127.0.0.1:9");
  CHECK(o.token == "hf_x");
  CHECK(o.cache_dir == "/tmp/xdg/gpurent/hf");
  CHECK(o.offline);
  s.env = {{"HOME", "/home/u"}};
  const auto d = gpurent::resolve_options_from(s, cfg(), false);
  CHECK(d.endpoint == "https://huggingface.co");
  CHECK_FALSE(d.token);
  CHECK(d.cache_dir == "/home/u/.cache/gpurent/hf");
  s.env.clear();
  CHECK(gpurent::resolve_options_from(s, cfg(), false).cache_dir.empty());
}

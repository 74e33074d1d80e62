// SPDX-License-Identifier: MIT
// The config file's [models.<name>] tables (docs/models.md, "Your own models"): a new model that
// `plan` sizes by its name or id, a built-in entry overridden key by key, and a broken table that
// stops every command naming the line, table and key.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_harness.hpp"
#include "sizing/model_catalog.hpp"

using gpurent::test::CliHarness;
using Json = nlohmann::json;

TEST_CASE("Config models: [models.<name>] adds a model plan sizes and overrides a built-in one", "[cli][config][models]")
{
  const auto dir = std::filesystem::temp_directory_path() / "gpurent-config-models";
  std::filesystem::create_directories(dir);
  const auto file = dir / "config.toml";
  std::ofstream(file) << "[models.my-llama]\nfamily = \"llama\"\nhf_ids = \"me/my-llama, me/my-llama-instruct\"\n"
                         "layers = 16\nhidden = 2048\nheads = 32\nkv_heads = 8\nhead_dim = 64\nintermediate = 8192\n"
                         "vocab = 128256\ntied_embeddings = true\nmax_context = 131072\ndtype = \"bfloat16\"\n"
                         "\n[models.llama-3.1-8b]\nmax_context = 32768\n";
  const auto added = gpurent::test::run_plan({"my-llama", "--task", "serve"}, {{"GPURENT_CONFIG", file.string()}});
  REQUIRE(added.code == 0);
  CHECK(added.j["model"]["name"] == "my-llama");
  CHECK(added.j["model"]["params"] == 1'235'814'400ULL);  // counted: Llama-3.2-1B's shape
  const auto by_id = gpurent::test::run_plan({"me/my-llama-instruct"}, {{"GPURENT_CONFIG", file.string()}});
  REQUIRE(by_id.code == 0);
  CHECK(by_id.j["model"]["name"] == "my-llama");

  CliHarness h;
  h.env["GPURENT_CONFIG"] = file.string();
  const auto listed = h.run({"models", "--json"});
  REQUIRE(listed.code == 0);
  const Json doc = Json::parse(listed.out);
  bool found = false;
  for (const auto& m : doc["models"]) {
    found = found || m.value("name", std::string()) == "my-llama";
    if (m.value("name", std::string()) == "llama-3.1-8b") {
      CHECK(m.dump().find("32768") != std::string::npos);
    }
  }
  CHECK(found);

  std::ofstream(file) << "[models.my-llama]\nfamily = \"llama\"\nlayers = 16.5\n";
  const auto bad = h.run({"plan", "my-llama"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("config.toml:1") != std::string::npos);
  CHECK(bad.err.find("[models.my-llama]") != std::string::npos);
  CHECK(bad.err.find("layers") != std::string::npos);
  std::ofstream(file) << "[models.llama-3.1-8b]\ncontext = 8192\n";
  const auto unknown = h.run({"models"});
  CHECK(unknown.code == 2);  // a broken model table stops every command
  CHECK(unknown.err.find("model llama-3.1-8b.context: unknown key") != std::string::npos);
  gpurent::install_user_models({});
  std::filesystem::remove_all(dir);
}

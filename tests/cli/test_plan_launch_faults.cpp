// SPDX-License-Identifier: MIT
// `plan`'s launch lines start where they run (issue 40): a job that does not fit prints none
// (the recipe's when it fits), a local checkpoint folder is named as the server will have it,
// a refused job names another engine that runs it on the card asked, with that engine's line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using Json = nlohmann::json;
using Run = gpurent::test::PlanRun;

namespace {

Run plan(std::vector<std::string> args) { return gpurent::test::run_plan(std::move(args)); }

// The text with every run of white space as one space (notes wrap).
std::string flat(const std::string& text)
{
  std::string out;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) {
      out += space ? ' ' : c;
    }
  }
  return out;
}

Json llama_8b_config()
{
  return Json{{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", 4096},
              {"intermediate_size", 14336}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
              {"num_key_value_heads", 8}, {"head_dim", 128}, {"vocab_size", 128256},
              {"max_position_embeddings", 131072}, {"torch_dtype", "bfloat16"}, {"tie_word_embeddings", false}};
}

// A checkpoint folder inside a scratch folder of its own; both go when the test ends, passed or failed.
struct Folder {
  std::filesystem::path dir;
  explicit Folder(std::filesystem::path d) : dir(std::move(d))
  {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "config.json") << llama_8b_config().dump();
  }
  ~Folder() { std::filesystem::remove_all(dir.parent_path()); }
};

}  // namespace

TEST_CASE("Plan launch: a job that does not fit has no launch line, its recipe's when the recipe fits", "[cli][plan][launch]")
{
  const Run r = plan({"llama-3.1-70b", "--task", "serve", "--card", "rtx-4090", "--gpus", "1", "--offline"});
  REQUIRE(r.code == 3);
  CHECK(r.j["launch"].empty());
  REQUIRE(r.j["recipe"]["fits"] == true);
  const std::string recipe = r.j["recipe"]["launch"].value("vllm", std::string());
  CHECK(recipe.find("--cpu-offload-gb") != std::string::npos);
  // The text shows one Launch block: the recipe's.
  CHECK(r.text.find("Launch (with the recipe)") != std::string::npos);
  CHECK(r.text.find("\nLaunch\n") == std::string::npos);
  CHECK(r.text.find("--cpu-offload-gb") != std::string::npos);

  // A recipe that does not fit either: no launch anywhere.
  const Run none = plan({"llama-3.1-405b", "--task", "train", "--card", "t4", "--gpus", "1", "--offline"});
  REQUIRE(none.code == 3);
  CHECK(none.j["launch"].empty());
  if (none.j.contains("recipe") && none.j["recipe"]["fits"] == false) {
    CHECK(none.j["recipe"]["launch"].empty());
  }
  CHECK(none.text.find("Launch") == std::string::npos);
}

TEST_CASE("Plan launch: a refused job names the engine that runs it natively on the card asked", "[cli][plan][launch]")
{
  // vLLM refuses MXFP4 below CC 8.0; llama.cpp runs gpt-oss (MXFP4) on a T4.
  const Run r = plan({"gpt-oss-20b", "--task", "serve", "--card", "t4", "--offline"});
  REQUIRE(r.code == 3);
  CHECK(r.j["card"]["runs"]["status"] == "refused");
  REQUIRE(r.j["card"]["runs_elsewhere"].is_object());
  // The cheapest card that runs it: the choice of the same job on any card ranked by the hourly
  // price (it once named 8 x H100 at $8/h, the best $/Mtok at a full KV pool).
  const Json& elsewhere = r.j["card"]["runs_elsewhere"];
  const Run any = plan({"gpt-oss-20b", "--task", "serve", "--rank-by", "hourly", "--offline"});
  REQUIRE(any.code == 0);
  CHECK(elsewhere["price_per_hour"] == any.j["choice"]["price_per_hour"]);
  CHECK(elsewhere["card"] == any.j["choice"]["card"]);
  CHECK(elsewhere["gpus"] == 1);
  CHECK(elsewhere["price_per_hour"].get<double>() < 1.0);
  REQUIRE(r.j["card"]["runs_with"].is_object());
  const Json& with = r.j["card"]["runs_with"];
  CHECK(with["engine"] == "llama.cpp");
  CHECK(with["runs"]["status"] == "native");
  CHECK(with["weights"] == "mxfp4");
  const std::string line = with["launch"].value("llama.cpp", std::string());
  CHECK(line.starts_with("llama-server "));
  CHECK(r.j["launch"].empty());  // the refused job's own line would not start
  CHECK(r.text.find("Runs here with: llama.cpp (--engine llama.cpp), native") != std::string::npos);
  CHECK(r.text.find("Launch (with --engine llama.cpp, which runs it on T4 16GB)") != std::string::npos);
  CHECK(r.text.find("llama-server") != std::string::npos);
  CHECK(r.err.find("runs natively under llama.cpp (--engine llama.cpp)") != std::string::npos);

  // No other engine runs it natively there: FP8 MoE on an A100 is a fallback under vLLM (Marlin
  // MoE) and llama.cpp does not load FP8 weights: runs_with is null, nothing to launch.
  const Run fp8 = plan({"qwen3-30b-a3b", "--weights", "fp8", "--task", "serve", "--engine", "sglang", "--card",
                        "a100-80gb", "--offline"});
  REQUIRE(fp8.code == 3);
  CHECK(fp8.j["card"]["runs"]["status"] == "refused");
  CHECK(fp8.j["card"]["runs_with"].is_null());
  CHECK(fp8.j["launch"].empty());
  CHECK(fp8.text.find("Launch") == std::string::npos);
}

TEST_CASE("Plan launch: a local checkpoint folder is named as the server will have it", "[cli][plan][launch]")
{
  const std::string tag = std::to_string(::getpid());
  // Inside the current folder: `gpurent run NAME -- …` pushes it along, at the same relative path.
  const Folder inside(std::filesystem::current_path() / ("gpurent-launch-in-" + tag) / "my-llama");
  const std::string rel = "gpurent-launch-in-" + tag + "/my-llama";
  for (const std::string& given : {rel, rel + "/config.json", "./" + rel + "/"}) {
    const Run r = plan({given, "--task", "serve", "--card", "a100-80gb", "--offline"});
    INFO(given << "\n" << r.text << r.err);
    REQUIRE(r.code == 0);
    const std::string line = r.j["launch"].value("vllm", std::string());
    CHECK(line.starts_with("vllm serve ./" + rel + " "));
    CHECK(flat(r.text).find("the launch line loads ./" + rel + " from the folder it starts in") != std::string::npos);
  }

  // Outside it: `gpurent push NAME DIR` copies it to ~/gpurent/<name>, ../<name> from where run starts.
  const Folder outside(std::filesystem::temp_directory_path() / ("gpurent-launch-out-" + tag) / "my-llama");
  for (const std::string& given : {outside.dir.string(), (outside.dir / "config.json").string()}) {
    const Run r = plan({given, "--task", "serve", "--card", "a100-80gb", "--offline"});
    INFO(given << "\n" << r.text << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.j["launch"].value("vllm", std::string()).starts_with("vllm serve ../my-llama "));
    CHECK(flat(r.text).find("gpurent push NAME " + outside.dir.string() + "` copies it to ~/gpurent/my-llama") !=
          std::string::npos);
  }
  std::filesystem::remove_all(outside.dir.parent_path());
}

TEST_CASE("Plan launch: FP8 on a T4 computes in float16, llama.cpp splits by layer", "[cli][plan][launch]")
{
  const Run t4 = plan({"llama-3.1-8b", "--task", "serve", "--card", "t4", "--weights", "fp8", "--offline"});
  REQUIRE(t4.code == 0);
  CHECK(t4.j["launch"].value("vllm", std::string()).find("--quantization fp8 --dtype float16") != std::string::npos);
  CHECK(t4.j["card"]["runs"]["flags"]["vllm"] == "--dtype float16");  // nobody prices a T4: no choice

  const Run l = plan({"llama-3.1-70b", "--engine", "llama.cpp", "--weights", "q4_k_m", "--gpus", "2", "--card", "rtx-4090",
                      "--offline"});
  REQUIRE(l.code == 0);
  CHECK(l.j["job"]["shard"] == "layer");
  CHECK(l.text.find("2 GPUs (layer split)") != std::string::npos);
  CHECK(l.j["launch"].value("llama.cpp", std::string()).find("--split-mode layer") != std::string::npos);
  const Run tp = plan({"llama-3.1-70b", "--engine", "llama.cpp", "--weights", "q4_k_m", "--gpus", "2", "--shard", "tp",
                       "--offline"});
  CHECK(tp.code == 2);
  CHECK(tp.j["error"]["message"].get<std::string>().find("by layer") != std::string::npos);
}

// SPDX-License-Identifier: MIT
// `plan` chooses cards whose kernels run the job (plan v3 "Will it run there"): the decision a
// user acts on, for each rule of docs/hardware.md; forced cards fall back with the flags they
// need or are refused with the nearest card that runs the job; launch lines that start.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "providers/card.hpp"
#include "tests/fakes/checkpoint_layouts.hpp"

using gpurent::test::CliHarness;
using Json = nlohmann::json;

namespace {

using Run = gpurent::test::PlanRun;

Run plan(std::vector<std::string> args, const std::map<std::string, std::string>& extra_env = {})
{
  return gpurent::test::run_plan(std::move(args), extra_env);
}

std::uint32_t cc_of(const std::string& card) { return *gpurent::find_card(card)->compute_capability; }

std::string launch_of(const Run& r, const char* engine) { return r.j["launch"].value(engine, std::string()); }

// A local checkpoint directory holding only a config.json.
std::filesystem::path checkpoint(const std::string& name, const Json& config)
{
  const auto dir = std::filesystem::temp_directory_path() / ("gpurent-hw-" + name);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << config.dump();
  return dir;
}

Json qwen3_32b_fp8_config()
{
  return Json{{"architectures", {"Qwen3ForCausalLM"}},
              {"model_type", "qwen3"},
              {"hidden_size", 5120},
              {"intermediate_size", 25600},
              {"num_hidden_layers", 64},
              {"num_attention_heads", 64},
              {"num_key_value_heads", 8},
              {"head_dim", 128},
              {"vocab_size", 151936},
              {"max_position_embeddings", 40960},
              {"torch_dtype", "bfloat16"},
              {"tie_word_embeddings", false},
              {"quantization_config", {{"quant_method", "fp8"}, {"fmt", "e4m3"}, {"weight_block_size", {128, 128}}}}};
}

}  // namespace

TEST_CASE("Plan hardware: an FP8 MoE checkpoint is placed on CC 8.9+ under vLLM and SGLang", "[cli][plan][rules]")
{
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"Qwen/Qwen3-30B-A3B-FP8", "--task", "serve"},
        std::vector<std::string>{"qwen3-30b-a3b", "--weights", "fp8", "--task", "serve"},
        std::vector<std::string>{"qwen3-30b-a3b", "--weights", "fp8", "--task", "serve", "--engine", "sglang"}}) {
    const Run r = plan(args);
    INFO(args.front() << " " << r.text);
    REQUIRE(r.code == 0);
    CHECK(cc_of(r.j["choice"]["card"]) >= 89);
    CHECK(r.j["choice"]["runs"]["status"] == "native");
    for (const auto& o : r.j["options"]) {
      if (cc_of(o["card"]) < 89) {
        CHECK(o["runs"]["status"] != "native");
      }
    }
  }
}

TEST_CASE("Plan hardware: FP8 MoE forced onto Ampere: vLLM with --moe-backend marlin, SGLang refused", "[cli][plan][rules]")
{
  const Run v = plan({"qwen3-30b-a3b", "--weights", "fp8", "--task", "serve", "--card", "rtx-3090"});
  REQUIRE(v.code == 0);
  CHECK(v.j["choice"]["card"] == "rtx-3090");
  CHECK(v.j["choice"]["runs"]["status"] == "fallback");
  CHECK(v.j["choice"]["runs"]["flags"]["vllm"] == "--moe-backend marlin");
  CHECK(launch_of(v, "vllm").find("--moe-backend marlin") != std::string::npos);
  CHECK(v.text.find("Runs fallback") != std::string::npos);

  const Run s = plan({"qwen3-30b-a3b", "--weights", "fp8", "--task", "serve", "--engine", "sglang", "--card", "a100-80gb"});
  CHECK(s.code == 3);
  CHECK(s.j["choice"].is_null());
  CHECK(s.j["card"]["runs"]["status"] == "refused");
  CHECK(s.j["card"]["runs"]["why"].get<std::string>().find("8.9") != std::string::npos);
  REQUIRE(s.j["card"]["runs_elsewhere"].is_object());
  CHECK(cc_of(s.j["card"]["runs_elsewhere"]["card"]) >= 89);
  CHECK(s.j["launch"].empty());  // never a line that does not start
  CHECK(s.err.find("does not run this job") != std::string::npos);
  CHECK(s.err.find("--card ") != std::string::npos);
}

TEST_CASE("Plan hardware: a block-FP8 checkpoint under transformers: CC 8.9+, or sized as bf16 when forced", "[cli][plan][rules]")
{
  const auto dir = checkpoint("qwen3-32b-fp8", qwen3_32b_fp8_config());
  const Run r = plan({dir.string()});
  INFO(r.text);
  REQUIRE(r.code == 0);
  CHECK(r.j["job"]["engine"] == "transformers");
  CHECK(cc_of(r.j["choice"]["card"]) >= 89);
  const double fp8_weights = r.j["memory"]["weights_gib"];
  const Run a = plan({dir.string(), "--card", "a100-80gb"});
  REQUIRE(a.code == 0);
  CHECK(a.j["choice"]["runs"]["status"] == "fallback");
  CHECK(a.j["memory"]["weights_gib"].get<double>() > 1.8 * fp8_weights);  // dequantized: what really loads
  std::filesystem::remove_all(dir);
}

TEST_CASE("Plan hardware: gpt-oss (MXFP4) is refused on a T4 under vLLM, runs under llama.cpp", "[cli][plan][rules]")
{
  const Run v = plan({"gpt-oss-20b", "--task", "serve", "--card", "t4", "--gpus", "2"});
  CHECK(v.code == 3);
  CHECK(v.j["card"]["runs"]["status"] == "refused");
  const Run free_choice = plan({"gpt-oss-20b", "--task", "serve"});
  REQUIRE(free_choice.code == 0);
  CHECK(cc_of(free_choice.j["choice"]["card"]) >= 80);
  const Run cpp = plan({"gpt-oss-20b", "--engine", "llama.cpp", "--card", "t4", "--gpus", "2"});
  CHECK(cpp.j["card"]["runs"]["status"] == "native");
}

TEST_CASE("Plan hardware: NVFP4 prefers Blackwell, elsewhere weight-only", "[cli][plan][rules]")
{
  const Run r = plan({"llama-3.1-8b", "--task", "serve", "--weights", "nvfp4"});
  REQUIRE(r.code == 0);
  const auto cc = cc_of(r.j["choice"]["card"]);
  CHECK((cc == 100 || cc == 120));
  const Run l = plan({"llama-3.1-8b", "--task", "serve", "--weights", "nvfp4", "--card", "l40s"});
  REQUIRE(l.code == 0);
  CHECK(l.j["choice"]["runs"]["status"] == "fallback");
  CHECK(l.j["choice"]["runs"]["why"].get<std::string>().find("weight-only") != std::string::npos);
}

TEST_CASE("Plan hardware: bf16 on a T4: --dtype float16, TRL --fp16, torchtune fp32, gemma fp32", "[cli][plan][rules]")
{
  const Run v = plan({"llama-3.1-8b", "--task", "serve", "--card", "t4", "--gpus", "2"});
  REQUIRE(v.code == 0);
  CHECK(v.j["card"]["runs"]["status"] == "fallback");
  CHECK(launch_of(v, "vllm").find("--dtype float16") != std::string::npos);
  const Run awq = plan({"llama-3.1-8b", "--task", "serve", "--weights", "awq", "--card", "t4"});
  CHECK(awq.j["card"]["runs"]["status"] == "native");
  // The clouds sell T4s one to a server, where the job as asked does not fit: the recipe's launch.
  const Run lora = plan({"llama-3.1-8b", "--task", "lora", "--card", "t4"});
  REQUIRE(lora.j["recipe"]["launch"].contains("transformers"));
  const std::string trl = lora.j["recipe"]["launch"]["transformers"].get<std::string>();
  CHECK(trl.find("--fp16 true") != std::string::npos);
  CHECK(trl.find("--bf16") == std::string::npos);
  CHECK(lora.j["card"]["runs"]["status"] == "fallback");
  const Run tt = plan({"llama-3.2-1b", "--task", "lora", "--engine", "torchtune", "--card", "t4"});
  CHECK(launch_of(tt, "torchtune").find("dtype=fp32") != std::string::npos);
  const Run tt_a10 = plan({"llama-3.2-1b", "--task", "lora", "--engine", "torchtune", "--card", "a10"});
  CHECK(tt.j["memory"]["weights_gib"].get<double>() > 1.9 * tt_a10.j["memory"]["weights_gib"].get<double>());
  const Run g = plan({"gemma-2-2b", "--task", "serve", "--card", "t4"});
  const Run g_l4 = plan({"gemma-2-2b", "--task", "serve", "--card", "l4"});
  CHECK(launch_of(g, "vllm").find("--dtype float32") != std::string::npos);
  CHECK(g.j["memory"]["weights_gib"].get<double>() > 1.9 * g_l4.j["memory"]["weights_gib"].get<double>());
  // Without --card, a card with bf16 is chosen: a native path exists.
  const Run free_choice = plan({"llama-3.1-8b", "--task", "lora"});
  CHECK(cc_of(free_choice.j["choice"]["card"]) >= 80);
}

TEST_CASE("Plan hardware: sm_120 is not sm_100 (SGLang gpt-oss)", "[cli][plan][rules]")
{
  const Run b = plan({"gpt-oss-20b", "--task", "serve", "--engine", "sglang", "--card", "b200"});
  CHECK(b.j["card"]["runs"]["status"] == "native");
  const Run w = plan({"gpt-oss-20b", "--task", "serve", "--engine", "sglang", "--card", "rtx-pro-6000"});
  CHECK(w.j["card"]["runs"]["status"] == "fallback");
  const Run free_choice = plan({"gpt-oss-20b", "--task", "serve", "--engine", "sglang"});
  REQUIRE(free_choice.code == 0);
  // The choice runs natively: never the sm_120 fallback (SGLang's MXFP4 runs from CC 8.0).
  const auto cc = cc_of(free_choice.j["choice"]["card"]);
  CHECK(cc >= 80);
  CHECK(cc != 120);
  CHECK(free_choice.j["choice"]["runs"]["status"] == "native");
}

TEST_CASE("Plan hardware: a user card without a compute capability is 'unknown', never native", "[cli][plan][rules]")
{
  const auto dir = std::filesystem::temp_directory_path() / "gpurent-hw-config";
  std::filesystem::create_directories(dir);
  const auto file = dir / "config.toml";
  std::ofstream(file) << "[cards.my-a40]\ndisplay = \"A40 48GB\"\nusable_gib = 44.35\nlabel_gb = 48\n";
  const Run r = plan({"llama-3.1-8b", "--task", "serve", "--card", "my-a40"}, {{"GPURENT_CONFIG", file.string()}});
  CHECK(r.j["card"]["runs"]["status"] == "unknown");
  CHECK(r.j["card"]["compute_capability"] == "unknown");
  CHECK(r.text.find("compute capability is unknown") != std::string::npos);
  std::ofstream(file) << "[cards.my-a40]\ndisplay = \"A40 48GB\"\nlabel_gb = 48\n";
  CliHarness h;
  h.env["GPURENT_CONFIG"] = file.string();
  const auto bad = h.run({"plan", "llama-3.1-8b", "--card", "my-a40"});
  CHECK(bad.code == 2);
  CHECK(bad.err.find("usable_gib") != std::string::npos);
  CHECK(bad.err.find("config.toml:1") != std::string::npos);
  const auto cards = h.run({"cards"});
  CHECK(cards.code == 2);  // a broken card table stops every command, naming the line and key
  std::ofstream(file) << "[cards.my-a40]\nusable_gib = 44.35\ncompute_capability = 8.6\n[cards.my-a40.tflops]\nbf16 = 149.7\n";
  const auto listed = h.run({"cards", "--json"});
  REQUIRE(listed.code == 0);
  const Json j = Json::parse(listed.out);
  bool found = false;
  for (const auto& c : j["cards"]) {
    if (c["id"] == "my-a40") {
      found = true;
      CHECK(c["compute_capability"] == "8.6");
      CHECK(c["tflops"]["bf16"] == 149.7);
      CHECK(c["origin"] == "config");
    }
  }
  CHECK(found);
  gpurent::install_user_cards({});
  std::filesystem::remove_all(dir);
}

TEST_CASE("Plan launch: serving concurrency from the KV pool, names quoted never rewritten", "[cli][plan][launch]")
{
  const Run r = plan({"qwen3-32b", "--task", "serve"});
  REQUIRE(r.code == 0);
  // What the pool holds, lowered to the most that keep 10 tok/s per user (docs/speed.md).
  const auto seqs = r.j["choice"]["serve"]["concurrency_per_replica"].get<int>();
  CHECK(seqs > 1);
  CHECK(seqs <= static_cast<int>(r.j["serve"]["max_concurrency"].get<double>()));
  CHECK(launch_of(r, "vllm").find("--max-num-seqs " + std::to_string(seqs) + " ") != std::string::npos);
  const Run b = plan({"qwen3-32b", "--task", "serve", "--batch", "4"});
  CHECK(launch_of(b, "vllm").find("--max-num-seqs 4 ") != std::string::npos);
  const Run sg = plan({"qwen3-32b", "--task", "serve", "--engine", "sglang"});
  REQUIRE(sg.code == 0);
  const std::string line = launch_of(sg, "sglang");
  CHECK(line.starts_with("python -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp "));
  CHECK(line.find("--mem-fraction-static 0.") != std::string::npos);
  CHECK(line.find("--context-length 4096") != std::string::npos);

  auto config = qwen3_32b_fp8_config();
  config.erase("quantization_config");
  config["num_hidden_layers"] = 2;
  const auto dir = checkpoint("my model", config);
  const Run spaced = plan({dir.string(), "--task", "serve", "--card", "h100"});
  // A folder outside the current one: named where `gpurent push NAME DIR` puts it, relative to
  // where `gpurent run` starts (../<its name>), quoted as one shell word.
  CHECK(launch_of(spaced, "vllm").starts_with("vllm serve '../" + dir.filename().string() + "' "));
  std::filesystem::remove_all(dir);
}

TEST_CASE("Plan launch: a local GGUF under ollama goes through a Modelfile", "[cli][plan][launch]")
{
  namespace t = gpurent::test;
  const auto dir = std::filesystem::temp_directory_path() / "gpurent-hw-gguf";
  std::filesystem::create_directories(dir);
  const auto gguf = dir / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf";
  t::write_gguf(gguf, t::llama31_8b_q4_k_m(true));
  const Run r = plan({gguf.string(), "--engine", "ollama"});
  INFO(r.text);
  const std::string line = launch_of(r, "ollama");
  CHECK(line.find("hf.co/") == std::string::npos);
  CHECK(line.find("printf 'FROM %s\\n' " + gguf.string() + " > Modelfile") != std::string::npos);
  CHECK(line.find("ollama create meta-llama-3.1-8b-instruct-q4_k_m -f Modelfile") != std::string::npos);
  CHECK(line.find("ollama run meta-llama-3.1-8b-instruct-q4_k_m") != std::string::npos);
  std::filesystem::remove_all(dir);
}

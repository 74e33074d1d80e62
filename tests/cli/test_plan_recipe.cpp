// SPDX-License-Identifier: MIT
// `gpurent plan` v2: documented recipes fit where their authors ran them, the recipe when a job
// does not fit, the defaults it states, the repository it launches, feasible layouts only.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_harness.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using gpurent::test::CliHarness;
using Json = nlohmann::json;

namespace {

using Run = gpurent::test::PlanRun;

Run plan(std::vector<std::string> args) { return gpurent::test::run_plan(std::move(args)); }

// Every "--tensor-parallel-size T [--pipeline-parallel-size P]" in `line` is a layout vLLM runs
// (for `weights`, when given: whole quantization groups or FP8 blocks on every rank too).
void check_vllm_layout(const std::string& line, const gpurent::ModelArch& m, std::uint32_t gpus,
                       gpurent::WeightFormat weights = gpurent::WeightFormat::bf16)
{
  static const std::regex tp_re("--tensor-parallel-size ([0-9]+)( --pipeline-parallel-size ([0-9]+))?");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), tp_re); it != std::sregex_iterator(); ++it) {
    const std::uint32_t tp = static_cast<std::uint32_t>(std::stoul((*it)[1]));
    const std::uint32_t pp = (*it)[3].matched ? static_cast<std::uint32_t>(std::stoul((*it)[3])) : 1;
    INFO(m.name << ": " << line);
    CHECK(m.heads % tp == 0);
    const std::uint32_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    CHECK((m.kv_lora_rank > 0 || kv % tp == 0 || tp % kv == 0));
    CHECK(gpurent::tensor_parallel_ok(m, tp, weights));
    if (gpus > 0) {
      CHECK(tp * pp == gpus);
    }
  }
}

}  // namespace

TEST_CASE("plan v2: documented recipes fit where their authors ran them, with no extra flags", "[cli][plan][recipes]")
{
  struct Case {
    std::vector<std::string> args;
    const char* source;
  };
  const std::vector<Case> cases = {
      {{"openai/gpt-oss-120b", "--task", "serve", "--card", "h100", "--gpus", "1"}, "gpt-oss model card: one 80 GB GPU"},
      {{"openai/gpt-oss-120b", "--card", "a100-80gb", "--gpus", "1"}, "gpt-oss model card: one 80 GB GPU"},
      {{"openai/gpt-oss-20b", "--card", "rtx-4080", "--gpus", "1"}, "gpt-oss model card: within 16 GB"},
      {{"openai/gpt-oss-20b", "--task", "serve", "--card", "rtx-4090", "--gpus", "1"}, "runs on a 24 GB card"},
      {{"openai/gpt-oss-20b", "--engine", "ollama", "--card", "rtx-a4000", "--gpus", "1"}, "ollama run gpt-oss:20b, 16 GB"},
      {{"deepseek-ai/DeepSeek-V3", "--task", "serve", "--card", "h200", "--gpus", "8"}, "vLLM recipe: 8xH200 FP8"},
      {{"deepseek-ai/DeepSeek-R1", "--task", "serve", "--card", "h200", "--gpus", "8"}, "vLLM recipe: 8xH200 FP8"},
      {{"meta-llama/Llama-3.1-70B", "--task", "qlora", "--card", "a100-80gb", "--gpus", "1"}, "70B QLoRA on one 80 GB card"},
      {{"meta-llama/Llama-3.1-70B", "--task", "qlora", "--card", "h100", "--gpus", "1"}, "70B QLoRA on one 80 GB card"},
      {{"meta-llama/Llama-3.1-8B", "--task", "lora", "--card", "rtx-4090", "--gpus", "1"}, "8B LoRA on a 24 GB card"},
      {{"meta-llama/Llama-3.1-8B", "--task", "lora", "--engine", "torchtune", "--card", "rtx-4090", "--gpus", "1"},
       "torchtune llama3_1/8B_lora_single_device on a 4090"},
      {{"meta-llama/Llama-3.1-8B", "--task", "qlora", "--card", "t4", "--gpus", "1", "--context", "2048"},
       "QLoRA of an 8B on a free Colab T4 at 2048 tokens"},
      {{"Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "--task", "qlora", "--card", "a100-80gb", "--gpus", "1", "--context", "256"},
       "Qwen2.5-72B Int4 Q-LoRA at 256 tokens on one A100, as Qwen-72B-Int4's 61.4 GB profile"},
  };
  for (const auto& c : cases) {
    const Run r = plan(c.args);
    INFO(c.source << "\n" << r.text);
    CHECK(r.code == 0);
    CHECK_FALSE(r.j.contains("recipe"));
  }
  // And they do not fit where their authors say they do not: DeepSeek-V3 FP8 needs more than 8 x 80 GB
  // (one server: --nodes 1; by itself plan now goes to a second server, multi-node below).
  const Run h100 = plan({"deepseek-ai/DeepSeek-V3", "--task", "serve", "--card", "h100", "--gpus", "8", "--nodes", "1"});
  CHECK(h100.code == 3);
  const Run two = plan({"deepseek-ai/DeepSeek-V3", "--task", "serve", "--card", "h100", "--gpus", "8"});
  CHECK(two.code == 0);
  CHECK(two.j["choice"]["nodes"] == 2);
  CHECK(two.j["launch"]["vllm"].get<std::string>().find("--tensor-parallel-size 8 --pipeline-parallel-size 2") !=
        std::string::npos);
}

TEST_CASE("plan v2: a combined recipe when nothing fits as asked, exit stays 3, single fixes stay", "[cli][plan][recipe]")
{
  const Run r = plan({"gemma-2-27b", "--task", "lora", "--card", "RTX 4090", "--gpus", "1"});
  CHECK(r.code == 3);
  CHECK_FALSE(r.j["fixes"].empty());
  REQUIRE(r.j.contains("recipe"));
  const Json& rec = r.j["recipe"];
  CHECK(rec["fits"] == true);
  CHECK(rec["card"] == "rtx-4090");
  CHECK(rec["gpus"] == 1);
  CHECK(rec["memory"]["total_gib"].get<double>() <= rec["limit_gib"].get<double>());
  REQUIRE_FALSE(rec["changes"].empty());
  CHECK(rec["changes"][0]["id"] == "qlora");
  CHECK(rec["changes"][0]["from"] == "lora bf16");
  CHECK(rec["changes"][0]["to"] == "qlora nf4");
  const std::string launch = rec["launch"]["transformers"];
  CHECK(launch.find("--load_in_4bit") != std::string::npos);
  CHECK(launch.find("google/gemma-2-27b") != std::string::npos);
  CHECK(r.text.find("Recipe: fits 1 x RTX 4090 24GB") != std::string::npos);

  // The recipe keeps the asked card and GPU count; saves add up to the difference.
  const Run serve = plan({"llama-3.1-70b", "--task", "serve", "--card", "rtx-4090", "--gpus", "2"});
  CHECK(serve.code == 3);
  REQUIRE(serve.j.contains("recipe"));
  CHECK(serve.j["recipe"]["fits"] == true);
  CHECK(serve.j["recipe"]["gpus"] == 2);
  double saved = 0;
  for (const auto& c : serve.j["recipe"]["changes"]) {
    saved += c["saves_gib"].get<double>();
  }
  CHECK(saved == Approx(serve.j["memory"]["total_gib"].get<double>() -
                        serve.j["recipe"]["memory"]["total_gib"].get<double>())
                     .margin(0.05));

  // No card: the cheapest, least invasive recipe over every card offered.
  const Run big = plan({"llama-3.1-405b", "--task", "train", "--context", "8192", "--batch", "8"});
  CHECK(big.code == 3);
  REQUIRE(big.j.contains("recipe"));
  CHECK(big.j["recipe"]["fits"] == true);
  CHECK_FALSE(big.j["recipe"]["price_per_hour"].is_null());

  // Nothing can fit: the nearest, marked as not fitting.
  const Run none = plan({"llama-3.1-405b", "--task", "train", "--card", "t4", "--gpus", "1"});
  CHECK(none.code == 3);
  REQUIRE(none.j.contains("recipe"));
  CHECK(none.j["recipe"]["fits"] == false);
  CHECK(none.text.find("No recipe fits") != std::string::npos);
}

TEST_CASE("plan v2: every value plan chose is listed in job.defaults and one text line", "[cli][plan][defaults]")
{
  const Run r = plan({"openai/gpt-oss-120b", "--task", "serve"});
  std::set<std::string> keys;
  for (const auto& d : r.j["job"]["defaults"]) {
    keys.insert(d["key"]);
    if (d["key"] == "weights") {
      CHECK(d["value"] == "mxfp4");
    }
  }
  for (const char* k : {"engine", "weights", "context", "batch", "kv_cache", "gpu_util", "gpus"}) {
    INFO(k);
    CHECK(keys.count(k) == 1);
  }
  CHECK(r.text.find("Defaults: engine vllm, weights mxfp4") != std::string::npos);
  const Run lora = plan({"llama-3.1-8b", "--task", "lora", "--card", "rtx-4090"});
  bool gc = false;
  for (const auto& d : lora.j["job"]["defaults"]) {
    if (d["key"] == "grad_checkpointing") {
      gc = d["value"] == true;
    }
  }
  CHECK(gc);
  CHECK(lora.j["job"]["grad_checkpointing"] == true);
  // Given values are not defaults.
  const Run given = plan({"llama-3.1-8b", "--task", "lora", "--no-grad-checkpointing", "--weights", "bf16", "--card", "a100-80gb"});
  for (const auto& d : given.j["job"]["defaults"]) {
    CHECK(d["key"] != "grad_checkpointing");
    CHECK(d["key"] != "weights");
  }
  CHECK(given.j["job"]["grad_checkpointing"] == false);
}

TEST_CASE("plan v2: launch lines name the repository the user gave", "[cli][plan][launch]")
{
  for (const char* id : {"Qwen/Qwen2.5-72B-Instruct", "https://huggingface.co/Qwen/Qwen2.5-72B-Instruct",
                         "qwen/qwen2.5-72b-instruct"}) {
    const Run r = plan({id, "--task", "serve"});
    const std::string line = r.j["launch"]["vllm"];
    INFO(id << ": " << line);
    CHECK(line.rfind("vllm serve Qwen/Qwen2.5-72B-Instruct ", 0) == 0);
  }
  const Run awq = plan({"Qwen/Qwen2.5-72B-Instruct-AWQ", "--task", "serve"});
  CHECK(awq.j["job"]["weights"] == "awq");
  CHECK(std::string(awq.j["launch"]["vllm"]).rfind("vllm serve Qwen/Qwen2.5-72B-Instruct-AWQ ", 0) == 0);
  // A short name launches the entry's first id.
  CHECK(std::string(plan({"qwen2.5-7b", "--task", "serve"}).j["launch"]["vllm"]).rfind("vllm serve Qwen/Qwen2.5-7B ", 0) == 0);
}

TEST_CASE("plan v2: only layouts vLLM runs are printed, for every catalogue model and GPU count", "[cli][plan][layout]")
{
  for (const auto& m : gpurent::model_catalog()) {
    for (std::uint32_t g = 2; g <= 8; ++g) {
      const Run r = plan({m.name, "--task", "serve", "--card", "b200", "--gpus", std::to_string(g)});
      INFO(m.name << " on " << g << " GPUs: " << r.j.dump().substr(0, 400));
      REQUIRE(r.j.contains("job"));
      const auto weights = gpurent::parse_weight_format(r.j["job"]["weights"].get<std::string>());
      REQUIRE(weights);
      check_vllm_layout(r.j["launch"].value("vllm", std::string()), m, g, *weights);
      for (const auto& f : r.j["fixes"]) {
        check_vllm_layout(f["flags"].value("vllm", std::string()), m, 0);
      }
      if (r.j.contains("recipe")) {
        check_vllm_layout(r.j["recipe"]["launch"].value("vllm", std::string()), m, r.j["recipe"]["gpus"]);
      }
    }
  }
  // 64 heads do not split 3 ways: pipeline parallelism instead (on a card where it fits: a job that
  // does not fit has no launch line).
  const Run three = plan({"llama-3.1-70b", "--task", "serve", "--card", "H100 SXM", "--gpus", "3"});
  REQUIRE(three.code == 0);
  const std::string line = three.j["launch"]["vllm"];
  CHECK(line.find("--tensor-parallel-size 1 --pipeline-parallel-size 3") != std::string::npos);
  CHECK(three.text.find("--tensor-parallel-size 3") == std::string::npos);
}

TEST_CASE("plan v2: a block-FP8 checkpoint launches the layout vLLM loads", "[cli][plan][layout][fp8]")
{
  // Qwen3-30B-A3B-FP8's config.json (weight_block_size [128, 128]) on 4 GPUs: TP 4 would slice the
  // experts' 768 rows into 192 per rank, which vLLM refuses; TP 2 x PP 2 is what plan launches.
  const std::string config = std::string(GPURENT_TEST_DATA) + "/models/qwen3-30b-a3b-fp8.json";
  for (const std::string& model : {config, std::string("Qwen/Qwen3-30B-A3B-FP8")}) {
    const Run r = plan({model, "--task", "serve", "--gpus", "4", "--card", "h100-80gb"});
    INFO(model << "\n" << r.text);
    CHECK(r.code == 0);
    CHECK(r.j["job"]["weights"] == "fp8");
    CHECK(r.j["job"]["gpus"] == 4);
    const std::string line = r.j["launch"]["vllm"];
    CHECK(line.find("--tensor-parallel-size 2 --pipeline-parallel-size 2 ") != std::string::npos);
    CHECK(line.find("--quantization") == std::string::npos);  // the checkpoint's own FP8
    CHECK(r.text.find("--tensor-parallel-size 4") == std::string::npos);
    CHECK(r.text.find("tp 2 x pp 2") != std::string::npos);
    bool explained = false;
    for (const auto& d : r.j["job"]["defaults"]) {
      if (d["key"] == "layout") {
        CHECK(d["value"] == "tensor parallel 2 x pipeline 2");
        explained = std::string(d["why"]).find("768 / 4 = 192") != std::string::npos;
      }
    }
    CHECK(explained);
  }
  // The 16-bit checkpoint quantized on load (per-tensor scales, no block) keeps TP 4.
  const Run online = plan({"Qwen/Qwen3-30B-A3B", "--task", "serve", "--gpus", "4", "--card", "h100-80gb",
                           "--weights", "fp8"});
  const std::string online_line = online.j["launch"]["vllm"];
  CHECK(online_line.find("--tensor-parallel-size 4 ") != std::string::npos);
  CHECK(online_line.find("--pipeline-parallel-size") == std::string::npos);
  CHECK(online_line.find("--quantization fp8") != std::string::npos);
  // Qwen3-235B-A22B-FP8 on 8 GPUs: 1536 / 8 = 192 refused, TP 4 x PP 2.
  const Run big = plan({"Qwen/Qwen3-235B-A22B-FP8", "--task", "serve", "--gpus", "8", "--card", "h100-80gb"});
  CHECK(std::string(big.j["launch"]["vllm"]).find("--tensor-parallel-size 4 --pipeline-parallel-size 2 ") !=
        std::string::npos);
  // DeepSeek-V3 on 8 GPUs: every width is whole blocks at TP 8.
  const Run ds = plan({"deepseek-ai/DeepSeek-V3", "--task", "serve", "--gpus", "8", "--card", "h200"});
  const std::string ds_line = ds.j["launch"]["vllm"];
  CHECK(ds_line.find("--tensor-parallel-size 8 ") != std::string::npos);
  CHECK(ds_line.find("--pipeline-parallel-size") == std::string::npos);
}

TEST_CASE("plan v2: GPU counts come from what each provider sells", "[cli][plan][offers]")
{
  const Run r = plan({"llama-3.1-70b", "--task", "serve"});
  bool runpod_three = false;
  for (const auto& o : r.j["options"]) {
    if (o["provider"] == "lambda") {
      // Lambda's instance types (the market snapshot's gpu_Nx_*): 1, 2, 4 or 8 GPUs, never 3.
      CHECK((o["gpus"] == 1 || o["gpus"] == 2 || o["gpus"] == 4 || o["gpus"] == 8));
    }
    runpod_three = runpod_three || (o["provider"] == "runpod" && o["gpus"] == 3);
  }
  CHECK(runpod_three);  // RunPod sells pods of 1 to 8 GPUs
}

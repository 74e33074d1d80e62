// SPDX-License-Identifier: MIT
// TensorRT-LLM as a serving engine (docs/sizing.md "TensorRT-LLM"): its hardware rules from its
// support matrix, its memory against the public start-up logs in tests/data/trtllm/memory_logs.json,
// and its KV pool as the fraction of what its profiling run leaves free.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "planner/launch.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
#include "sizing/hardware_rules.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;
using Json = nlohmann::json;

namespace {

const Json& logs()
{
  static const Json k_logs = [] {
    std::ifstream in(std::string(GPURENT_TEST_DATA) + "/trtllm/memory_logs.json");
    REQUIRE(in.good());
    return Json::parse(in);
  }();
  return k_logs;
}

const Json& log_case(const std::string& id)
{
  for (const auto& c : logs()["cases"]) {
    if (c["id"] == id) {
      return c;
    }
  }
  FAIL("no case " << id);
  static const Json k_none;
  return k_none;
}

Bytes gib(double g) { return Bytes{static_cast<std::uint64_t>(g * static_cast<double>(k_gib) + 0.5)}; }
double in_gib(Bytes b) { return static_cast<double>(b.n) / static_cast<double>(k_gib); }

JobSpec trtllm_job(const char* model, WeightFormat w)
{
  JobSpec j;
  j.model = find_model(model).value();
  j.task = Task::serve;
  j.engine = Engine::tensorrt_llm;
  j.weights = w;
  j.context = 4096;
  return j;
}

RunStatus status(const JobSpec& j, std::uint32_t cc) { return run_on_card(j, cc).runs.status; }

}  // namespace

TEST_CASE("TensorRT-LLM: the engine's name and aliases", "[sizing][trtllm]")
{
  CHECK(to_string(Engine::tensorrt_llm) == "trtllm");
  for (const char* s : {"trtllm", "TensorRT-LLM", "tensorrt_llm", "trt-llm"}) {
    INFO(s);
    CHECK(parse_engine(s).value() == Engine::tensorrt_llm);
  }
}

TEST_CASE("TensorRT-LLM: its support matrix by generation and format", "[sizing][trtllm][rules]")
{
  const JobSpec bf16 = trtllm_job("llama-3.1-8b", WeightFormat::bf16);
  CHECK(status(bf16, 70) == RunStatus::refused);  // Volta: not listed, TensorRT 10.5 dropped it
  CHECK(status(bf16, 75) == RunStatus::refused);  // Turing (T4): not in the matrix
  CHECK(run_on_card(bf16, 75).runs.why.find("support matrix") != std::string::npos);
  CHECK(status(bf16, 80) == RunStatus::native);
  CHECK(status(bf16, 86) == RunStatus::native);
  const JobSpec fp8 = trtllm_job("llama-3.1-8b", WeightFormat::fp8);
  CHECK(status(fp8, 80) == RunStatus::refused);  // no FP8 on Ampere, no weight-only fallback
  CHECK(status(fp8, 86) == RunStatus::refused);
  CHECK(status(fp8, 89) == RunStatus::native);
  CHECK(status(fp8, 90) == RunStatus::native);
  const JobSpec fp4 = trtllm_job("llama-3.1-8b", WeightFormat::nvfp4);
  CHECK(status(fp4, 90) == RunStatus::refused);
  CHECK(status(fp4, 100) == RunStatus::native);
  CHECK(status(fp4, 120) == RunStatus::native);
  const JobSpec mx = trtllm_job("gpt-oss-20b", WeightFormat::mxfp4);
  CHECK(status(mx, 89) == RunStatus::refused);
  CHECK(status(mx, 90) == RunStatus::native);  // weight-only W4A16_MXFP4 on Hopper
  CHECK(status(mx, 100) == RunStatus::native);
  for (const WeightFormat w : {WeightFormat::awq, WeightFormat::gptq, WeightFormat::nf4, WeightFormat::int8,
                               WeightFormat::gguf_q4_k_m}) {
    INFO(to_string(w));
    CHECK(status(trtllm_job("llama-3.1-8b", w), 90) == RunStatus::refused);
  }
  JobSpec kv = bf16;
  kv.kv_cache = KvDtype::fp8;  // an FP8 KV cache on every row, Ampere included
  CHECK(status(kv, 80) == RunStatus::native);
  // Qwen's block-scaled FP8 checkpoint: FP8 block GEMMs on Hopper and SM100 only.
  JobSpec block = trtllm_job("qwen3-32b", WeightFormat::fp8);
  block.model = for_checkpoint(block.model, "Qwen/Qwen3-32B-FP8");
  REQUIRE(block.model.quant_block_n == 128);
  CHECK(status(block, 89) == RunStatus::refused);
  CHECK(status(block, 90) == RunStatus::native);
  CHECK(status(block, 100) == RunStatus::native);
  CHECK(status(block, 120) == RunStatus::refused);
  CHECK(status(trtllm_job("qwen3-32b", WeightFormat::fp8), 89) == RunStatus::native);  // per-tensor (ModelOpt)
}

TEST_CASE("TensorRT-LLM: gpt-oss-120b's weights, profiling peak and KV bytes as its log prints them",
          "[sizing][trtllm][memory]")
{
  const Json& c = log_case("gpt-oss-120b-dgx-spark");
  JobSpec j = trtllm_job("gpt-oss-120b", WeightFormat::mxfp4);
  j.max_batched_tokens = c["max_num_tokens"].get<std::uint32_t>();
  const MemoryEstimate e = estimate(j);
  INFO("weights " << in_gib(e.weights) << " GiB, activations " << in_gib(e.activations) << " GiB");
  // "Memory used after loading model weights (inside torch)": the MXFP4 experts and 16-bit rest.
  CHECK(in_gib(e.weights) == Approx(c["weights_gib"].get<double>()).epsilon(0.04));
  // "Memory dynamically allocated during inference": one forward over --max_num_tokens tokens.
  CHECK(in_gib(e.activations) == Approx(c["activations_gib"].get<double>()).epsilon(0.10));
  CHECK(kv_bytes_per_token(j).n == c["kv_bytes_per_token"].get<std::uint64_t>());
  // The activation term follows --max_num_tokens.
  JobSpec half = j;
  half.max_batched_tokens = 4096;
  CHECK(estimate(half).activations.n * 2 == e.activations.n);
}

TEST_CASE("TensorRT-LLM: the KV pool is the fraction of what the profiling peak leaves", "[sizing][trtllm][memory]")
{
  const Json& c = log_case("gpt-oss-120b-dgx-spark");
  const JobSpec j = trtllm_job("gpt-oss-120b", WeightFormat::mxfp4);
  // The log's own terms, the temporary KV of the profiling run taken out of the peak (the log adds
  // it back): weights, activations, and the rest outside torch.
  MemoryEstimate logged{};
  logged.weights = gib(c["weights_gib"].get<double>());
  logged.activations = gib(c["activations_gib"].get<double>());
  logged.overhead = gib(c["peak_gib"].get<double>() - c["tmp_kv_gib"].get<double>() - c["weights_gib"].get<double>() -
                        c["activations_gib"].get<double>());
  const ServePool p = serve_pool(j, logged, gib(c["device_total_gib"].get<double>()));
  CHECK(in_gib(p.kv_pool) == Approx(c["kv_gib"].get<double>()).margin(0.01));
  // 86711 tokens fit the budget; TensorRT-LLM allocates whole 32-token blocks (86720).
  CHECK(p.kv_pool_tokens % k_trtllm_tokens_per_block == 0);
  CHECK(static_cast<double>(p.kv_pool_tokens) == Approx(c["kv_tokens"].get<double>()).epsilon(0.002));
}

TEST_CASE("TensorRT-LLM: --gpu-util is kv_cache_free_gpu_memory_fraction, of what is left, not of the card",
          "[sizing][trtllm][memory]")
{
  const Json& c = log_case("smollm2-135m-rtx-4070-super");
  ModelArch m;  // HuggingFaceTB/SmolLM2-135M-Instruct config.json
  m.name = "smollm2-135m";
  m.layers = 30;
  m.hidden = 576;
  m.heads = 9;
  m.kv_heads = 3;
  m.head_dim = 64;
  m.intermediate = 1536;
  m.vocab = 49152;
  m.max_context = 8192;
  m.params = 134515008;
  JobSpec j;
  j.model = m;
  j.task = Task::serve;
  j.engine = Engine::tensorrt_llm;
  j.context = 2049;
  CHECK(kv_bytes_per_token(j).n == c["kv_bytes_per_token_derived"].get<std::uint64_t>());
  const MemoryEstimate e = estimate(j);
  const Bytes card = gib(11.99);
  JobSpec quarter = j;
  quarter.gpu_util_permille = 250;
  quarter.gpu_util_given = true;
  const double at_09 = static_cast<double>(serve_pool(j, e, card).kv_pool_tokens);
  const double at_025 = static_cast<double>(serve_pool(quarter, e, card).kv_pool_tokens);
  // The log's two pools: 422048 and 117216 tokens, 3.60 apart, as 0.9 / 0.25.
  const double logged = c["kv_tokens_at_0_9"].get<double>() / c["kv_tokens_at_0_25"].get<double>();
  CHECK(at_09 / at_025 == Approx(logged).epsilon(0.002));
  // vLLM's pool would be 0.25 of the card minus the peak: far smaller than the quarter of the rest.
  JobSpec vllm = quarter;
  vllm.engine = Engine::vllm;
  CHECK(serve_pool(vllm, estimate(vllm), card).kv_pool_tokens < serve_pool(quarter, e, card).kv_pool_tokens);
}

TEST_CASE("TensorRT-LLM: a job fits when its KV cache fits the pool", "[sizing][trtllm][memory]")
{
  JobSpec j = trtllm_job("llama-3.1-8b", WeightFormat::bf16);
  const Bytes h100 = gib(79.19);
  const ServePool pool = serve_pool(j, estimate(j), h100);
  const std::uint64_t one_seq = j.context;  // tokens per sequence
  // The largest batch whose KV fits the pool fits the limit; one more sequence does not.
  j.batch = static_cast<std::uint32_t>(pool.kv_pool_tokens / one_seq);
  CHECK(estimate(j).total() <= fit_limit_for(j, h100));
  j.batch += 1;
  CHECK_FALSE(estimate(j).total() <= fit_limit_for(j, h100));
}

TEST_CASE("TensorRT-LLM: the launch line is trtllm-serve with the planned layout and pool", "[sizing][trtllm][launch]")
{
  JobSpec j = trtllm_job("llama-3.1-70b", WeightFormat::fp8);
  j.gpus = 4;
  j.shard = Shard::tp;
  j.max_seqs = 64;
  j.kv_cache = KvDtype::fp8;
  const auto line = launch_commands(j, "meta-llama/Llama-3.1-70B-Instruct", gib(79.19)).at("trtllm");
  CHECK(line == "trtllm-serve meta-llama/Llama-3.1-70B-Instruct --backend pytorch --tp_size 4 --max_batch_size 64 "
                "--max_num_tokens 8192 --max_seq_len 4096 --kv_cache_free_gpu_memory_fraction 0.90 --kv_cache_dtype fp8");
  j.context = 32768;
  j.gpu_util_permille = 800;
  j.gpu_util_given = true;
  const auto long_line = launch_commands(j, "meta-llama/Llama-3.1-70B-Instruct", gib(79.19)).at("trtllm");
  CHECK(long_line.find("--kv_cache_free_gpu_memory_fraction 0.80") != std::string::npos);
  CHECK(long_line.find("--enable_chunked_prefill") != std::string::npos);  // prompts past --max_num_tokens
}

// SPDX-License-Identifier: MIT
// The engines' hardware rules (docs/hardware.md), one case per rule and its boundary.
#include <catch2/catch.hpp>

#include "sizing/estimate.hpp"
#include "sizing/hardware_rules.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

JobSpec job(const char* model, Task task, Engine engine, WeightFormat w)
{
  JobSpec j;
  j.model = find_model(model).value();
  j.task = task;
  j.engine = engine;
  j.weights = w;
  return j;
}

RunStatus status(const JobSpec& j, std::optional<std::uint32_t> cc) { return run_on_card(j, cc).runs.status; }

}  // namespace

TEST_CASE("Rules: FP8 MoE needs CC 8.9, vLLM falls back to Marlin below, SGLang refuses", "[sizing][rules]")
{
  const JobSpec v = job("qwen3-30b-a3b", Task::serve, Engine::vllm, WeightFormat::fp8);
  CHECK(status(v, 89) == RunStatus::native);
  CHECK(status(v, 90) == RunStatus::native);
  CHECK(status(v, 120) == RunStatus::native);  // Triton FP8 MoE runs on sm_120
  const CardRun ampere = run_on_card(v, 86);
  CHECK(ampere.runs.status == RunStatus::fallback);
  CHECK(ampere.runs.flags.at("vllm") == "--moe-backend marlin");
  CHECK(ampere.job.moe_marlin);
  CHECK(status(v, 80) == RunStatus::fallback);
  JobSpec s = v;
  s.engine = Engine::sglang;
  CHECK(status(s, 89) == RunStatus::native);
  CHECK(status(s, 86) == RunStatus::refused);
  CHECK(status(s, 80) == RunStatus::refused);
  // Dense FP8: weight-only Marlin below 8.9, no flag needed.
  const CardRun dense = run_on_card(job("qwen3-32b", Task::serve, Engine::vllm, WeightFormat::fp8), 86);
  CHECK(dense.runs.status == RunStatus::fallback);
  CHECK(dense.runs.flags.empty());
  CHECK_FALSE(dense.job.moe_marlin);
}

TEST_CASE("Rules: block FP8 under transformers below 8.9 is dequantized to bf16 and sized so", "[sizing][rules]")
{
  const JobSpec t = job("qwen3-32b", Task::infer, Engine::transformers, WeightFormat::fp8);
  CHECK(status(t, 89) == RunStatus::native);
  const CardRun a = run_on_card(t, 86);
  CHECK(a.runs.status == RunStatus::fallback);
  CHECK(a.job.weights == WeightFormat::bf16);
  CHECK(estimate(a.job).weights.n > estimate(t).weights.n * 18 / 10);
  const CardRun turing = run_on_card(t, 75);  // dequantized, then fp16 (no bf16)
  CHECK(turing.job.weights == WeightFormat::fp16);
}

TEST_CASE("Rules: MXFP4, NVFP4, AWQ/GPTQ by generation", "[sizing][rules]")
{
  const JobSpec oss = job("gpt-oss-20b", Task::serve, Engine::vllm, WeightFormat::mxfp4);
  CHECK(status(oss, 75) == RunStatus::refused);
  CHECK(status(oss, 80) == RunStatus::native);
  CHECK(status(oss, 120) == RunStatus::native);
  JobSpec oss_sg = oss;
  oss_sg.engine = Engine::sglang;
  // SGLang's Mxfp4Config.get_min_capability() is 80 (sglang 0043c43a), and an A800 log loads
  // gpt-oss-20b at 13.05 GiB (tests/data/sizing/startup_logs.json sglang-gpt-oss-20b-a800-…).
  CHECK(status(oss_sg, 75) == RunStatus::refused);
  CHECK(status(oss_sg, 80) == RunStatus::native);
  CHECK(status(oss_sg, 86) == RunStatus::native);
  CHECK(status(oss_sg, 90) == RunStatus::native);
  CHECK(status(oss_sg, 100) == RunStatus::native);
  CHECK(status(oss_sg, 120) == RunStatus::fallback);  // sm_120 is not sm_100: open failures
  JobSpec oss_cpp = oss;
  oss_cpp.engine = Engine::llama_cpp;
  CHECK(status(oss_cpp, 75) == RunStatus::native);
  const JobSpec fp4 = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::nvfp4);
  CHECK(status(fp4, 100) == RunStatus::native);
  CHECK(status(fp4, 120) == RunStatus::native);
  CHECK(status(fp4, 90) == RunStatus::fallback);
  CHECK(status(fp4, 75) == RunStatus::fallback);
  JobSpec fp4_sg = fp4;
  fp4_sg.engine = Engine::sglang;
  CHECK(status(fp4_sg, 90) == RunStatus::refused);
  for (const auto w : {WeightFormat::awq, WeightFormat::gptq, WeightFormat::nf4, WeightFormat::int8}) {
    CHECK(status(job("llama-3.1-8b", Task::serve, Engine::vllm, w), 75) == RunStatus::native);
  }
  CHECK(status(job("llama-3.1-8b", Task::serve, Engine::llama_cpp, WeightFormat::gguf_q4_k_m), 75) == RunStatus::native);
}

TEST_CASE("Rules: bf16 on Turing: fp16 for serving, --fp16 for TRL, fp32 for torchtune and gemma", "[sizing][rules]")
{
  const CardRun v = run_on_card(job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16), 75);
  CHECK(v.runs.status == RunStatus::fallback);
  CHECK(v.job.weights == WeightFormat::fp16);
  CHECK(v.runs.flags.at("vllm") == "--dtype float16");
  CHECK(status(job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16), 80) == RunStatus::native);
  const CardRun g = run_on_card(job("gemma-2-9b", Task::serve, Engine::vllm, WeightFormat::bf16), 75);
  CHECK(g.job.weights == WeightFormat::fp32);
  CHECK(g.runs.flags.at("vllm") == "--dtype float32");
  CHECK(estimate(g.job).weights.n > estimate(v.job).weights.n);
  const CardRun trl = run_on_card(job("llama-3.1-8b", Task::lora, Engine::transformers, WeightFormat::bf16), 75);
  CHECK(trl.runs.status == RunStatus::fallback);
  CHECK(trl.job.fp16_compute);
  CHECK(trl.runs.flags.at("transformers") == "--fp16 true");
  const CardRun tt = run_on_card(job("llama-3.1-8b", Task::lora, Engine::torchtune, WeightFormat::bf16), 75);
  CHECK(tt.job.weights == WeightFormat::fp32);
  CHECK(tt.runs.flags.at("torchtune") == "dtype=fp32");
  CHECK(status(job("llama-3.1-8b", Task::train, Engine::deepspeed, WeightFormat::bf16), 86) == RunStatus::native);
}

TEST_CASE("Rules: Volta (CC 7.0): vLLM and SGLang refuse, torch runs fp16 from a 2.10 wheel, llama.cpp from CUDA 12", "[sizing][rules]")
{
  const JobSpec serve = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16);
  const CardRun v = run_on_card(serve, 70);
  CHECK(v.runs.status == RunStatus::refused);
  CHECK(v.runs.why.find("7.5") != std::string::npos);
  JobSpec sg = serve;
  sg.engine = Engine::sglang;
  CHECK(status(sg, 70) == RunStatus::refused);
  const CardRun t = run_on_card(job("llama-3.1-8b", Task::infer, Engine::transformers, WeightFormat::bf16), 70);
  CHECK(t.runs.status == RunStatus::fallback);
  CHECK(t.job.weights == WeightFormat::fp16);  // no bf16 on Volta
  CHECK(t.runs.why.find("torch 2.10") != std::string::npos);
  // An fp16 checkpoint needs no dtype change, but the default torch has no sm_70 code: still a fallback.
  const JobSpec fp16 = job("llama-3.1-8b", Task::infer, Engine::transformers, WeightFormat::fp16);
  CHECK(status(fp16, 70) == RunStatus::fallback);
  CHECK(status(fp16, 75) == RunStatus::native);
  const CardRun trl = run_on_card(job("llama-3.1-8b", Task::lora, Engine::transformers, WeightFormat::bf16), 70);
  CHECK(trl.runs.status == RunStatus::fallback);
  CHECK(trl.job.fp16_compute);
  CHECK(trl.runs.flags.at("transformers") == "--fp16 true");
  CHECK(trl.runs.why.find("cu128") != std::string::npos);
  const CardRun tt = run_on_card(job("llama-3.1-8b", Task::lora, Engine::torchtune, WeightFormat::bf16), 70);
  CHECK(tt.job.weights == WeightFormat::fp32);
  const CardRun cpp = run_on_card(job("llama-3.1-8b", Task::serve, Engine::llama_cpp, WeightFormat::gguf_q4_k_m), 70);
  CHECK(cpp.runs.status == RunStatus::native);
  CHECK(cpp.runs.why.find("CUDA 12") != std::string::npos);
  const CardRun turing = run_on_card(job("llama-3.1-8b", Task::serve, Engine::llama_cpp, WeightFormat::gguf_q4_k_m), 75);
  CHECK(turing.runs.why.find("CUDA 12") == std::string::npos);
}

TEST_CASE("Rules: an FP8 KV cache below 8.9 becomes e5m2, unknown generations are never native", "[sizing][rules]")
{
  JobSpec j = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16);
  j.kv_cache = KvDtype::fp8;
  const CardRun a = run_on_card(j, 86);
  CHECK(a.runs.status == RunStatus::fallback);
  CHECK(a.job.kv_fp8_e5m2);
  CHECK(status(j, 89) == RunStatus::native);
  const CardRun u = run_on_card(j, std::nullopt);
  CHECK(u.runs.status == RunStatus::unknown);
  CHECK(u.runs.why.find("unknown") != std::string::npos);
  JobSpec cpp = job("llama-3.1-8b", Task::serve, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  CHECK(status(cpp, std::nullopt) == RunStatus::unknown);
  cpp.kv_cache = KvDtype::q8_0;
  cpp.flash_attention = false;
  CHECK(run_on_card(cpp, 75).job.flash_attention);  // a quantized V cache needs -fa on
  CHECK(status(job("llama-3.1-8b", Task::serve, Engine::sglang, WeightFormat::gguf_q4_k_m), 90) == RunStatus::refused);
  CHECK(run_rank(RunStatus::native) < run_rank(RunStatus::fallback));
  CHECK(run_rank(RunStatus::fallback) < run_rank(RunStatus::unknown));
  CHECK(run_rank(RunStatus::unknown) < run_rank(RunStatus::refused));
}

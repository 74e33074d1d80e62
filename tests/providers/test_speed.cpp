// SPDX-License-Identifier: MIT
// The speed model's formulas (planner/speed.hpp): what each term responds to, and what it says
// when a card figure is missing. The measured cases are in test_speed_measured.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "planner/job_time.hpp"
#include "planner/rank.hpp"
#include "planner/speed.hpp"
#include "sizing/engine_release.hpp"
#include "sizing/hardware_rules.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

namespace {

Card card(const char* id)
{
  auto c = find_card(id);
  REQUIRE(c);
  return *c;
}

JobSpec job(const char* model, Task task, Engine engine, WeightFormat w, std::uint32_t gpus = 1)
{
  const ModelArch* m = find_model_ptr(model);
  REQUIRE(m != nullptr);
  JobSpec j;
  j.model = *m;
  j.task = task;
  j.engine = engine;
  j.weights = w;
  j.context = 4096;
  return job_for_gpus(j, gpus, std::nullopt);
}

double decode(const JobSpec& j, const Card& c) { return estimate_speed(j, c, {}).decode_tokens_per_s.value(); }

}  // namespace

TEST_CASE("speed: single-stream decode is memory-bound and follows the card's bandwidth and the weights' bytes", "[speed]")
{
  const JobSpec bf16 = job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::bf16);
  const double h100 = decode(bf16, card("h100-sxm"));
  const double a100 = decode(bf16, card("a100-80gb-sxm"));
  CHECK(h100 > a100 * 1.3);  // 3350 vs 2039 GB/s, less the fixed per-step cost
  CHECK(estimate_speed(bf16, card("h100-sxm"), {}).bound == "memory");
  const JobSpec fp8 = job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::fp8);
  CHECK(decode(fp8, card("h100-sxm")) > h100 * 1.3);  // half the bytes per token
  // In the published range for an 8B model in bf16 on one H100 (vLLM reports 80-130 tokens/s).
  CHECK(h100 > 70);
  CHECK(h100 < 160);
}

TEST_CASE("speed: an MoE model reads only the experts its tokens route to", "[speed]")
{
  const JobSpec moe = job("qwen3-30b-a3b", Task::infer, Engine::vllm, WeightFormat::bf16);
  const JobSpec dense = job("qwen3-32b", Task::infer, Engine::vllm, WeightFormat::bf16);
  // Similar total size, a tenth of the active parameters: several times faster to decode.
  CHECK(decode(moe, card("h100-sxm")) > 3 * decode(dense, card("h100-sxm")));
}

TEST_CASE("speed: prefill is compute-bound, FP8 runs on the FP8 tensor cores only where the card has them", "[speed]")
{
  SpeedLoad load;
  load.input_len = 4096;
  const JobSpec fp8 = job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::fp8);
  const auto h100 = estimate_speed(fp8, card("h100-sxm"), load);
  const auto bf16 = estimate_speed(job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::bf16), card("h100-sxm"),
                                   load);
  REQUIRE(h100.prefill_tokens_per_s);
  CHECK(*h100.prefill_tokens_per_s > 1.5 * *bf16.prefill_tokens_per_s);
  // On an A100 (no FP8) an FP8 checkpoint runs weight-only (Marlin): 16-bit compute.
  const CardRun on_a100 = run_on_card(fp8, 80);
  const auto a100 = estimate_speed(on_a100.job, card("a100-80gb-sxm"), load);
  CHECK(a100.basis.find("bf16") != std::string::npos);
}

TEST_CASE("speed: llama.cpp's prompt path follows its build and the card", "[speed][llamacpp_build]")
{
  SpeedLoad load;
  load.input_len = 512;
  const auto prefill = [&](const JobSpec& j, const char* c) { return *estimate_speed(j, card(c), load).prefill_tokens_per_s; };
  JobSpec q4 = job("llama-3-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  JobSpec f16 = job("llama-3-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_f16);
  const double current = prefill(q4, "rtx-4090");
  q4.engine_version = 2836;  // May 2024: dequantize to F16, then cuBLAS
  f16.engine_version = 2836;
  const double old = prefill(q4, "rtx-4090");
  CHECK(old < current);
  // Then a quantized prompt ran slower than the same model in F16 (the dequantization per chunk),
  // as every May 2024 llama-bench row shows.
  CHECK(old < prefill(f16, "rtx-4090"));
  q4.engine_version = k_llamacpp_first_mmq_default;
  CHECK(prefill(q4, "rtx-4090") == Approx(current));
  // 16-bit weights take cuBLAS in every build.
  f16.engine_version = 0;
  const double f16_now = prefill(f16, "rtx-4090");
  f16.engine_version = 2836;
  CHECK(prefill(f16, "rtx-4090") == Approx(f16_now));
  // Every build dequantizes on the V100 (no int8 tensor cores); Ollama's own release numbers are
  // not llama.cpp builds.
  q4.engine_version = 0;
  CHECK(llamacpp_dequantizes(q4, 70));
  CHECK_FALSE(llamacpp_dequantizes(q4, 75));
  JobSpec ollama = q4;
  ollama.engine = Engine::ollama;
  ollama.engine_version = 5007;
  CHECK_FALSE(llamacpp_dequantizes(ollama, 89));
}

TEST_CASE("llama.cpp builds: parsed as llama-bench and its releases print them, and nothing else", "[speed][llamacpp_build]")
{
  CHECK(parse_llamacpp_build("b3216") == 3216U);
  CHECK(parse_llamacpp_build("3216") == 3216U);
  CHECK(parse_llamacpp_build("build 8c570c94 (2836)") == 2836U);
  CHECK(parse_llamacpp_build("build 2836") == 2836U);
  for (const char* bad : {"", "b", "b0", "0.3.1", "v0.5", "b1234567", "build 8c570c94", "build abc (x1)", "b-12", "b12a"}) {
    INFO(bad);
    CHECK_FALSE(parse_llamacpp_build(bad).has_value());
  }
  CHECK(parse_engine_version(Engine::llama_cpp, "b2836") == 2836U);
  CHECK_FALSE(parse_engine_version(Engine::llama_cpp, "0.10.1").has_value());
  CHECK(parse_engine_version(Engine::vllm, "0.10.1") == engine_release(0, 10, 1));
  CHECK(engine_version_text(Engine::llama_cpp, 2836) == "b2836");
  CHECK(engine_version_text(Engine::llama_cpp, 0) == "current");
  CHECK(engine_version_text(Engine::vllm, engine_release(0, 10, 1)) == "0.10.1");
}

TEST_CASE("speed: a card without the figure a term needs says which, and invents nothing", "[speed]")
{
  Card c = card("h100-sxm");
  c.tflops = CardTflops{};
  const JobSpec j = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16);
  const auto s = estimate_speed(j, c, {});
  CHECK(s.decode_tokens_per_s);  // bandwidth alone decodes
  CHECK_FALSE(s.prefill_tokens_per_s);
  CHECK_FALSE(s.serve_output_tokens_per_s);
  REQUIRE_FALSE(s.unknown.empty());
  CHECK(s.unknown.front().find("TFLOPS") != std::string::npos);
  c.mem_bw_gbs.reset();
  const auto none = estimate_speed(j, c, {});
  CHECK_FALSE(none.decode_tokens_per_s);
  CHECK(none.unknown.size() >= 2);
  // --params gives no architecture: no speed at all, said so.
  JobSpec p;
  p.model.params = 7'000'000'000;
  p.task = Task::infer;
  const auto params = estimate_speed(p, card("h100-sxm"), {});
  CHECK_FALSE(params.decode_tokens_per_s);
  CHECK(params.unknown.size() == 1);
  // transformers' own generate has no measurement: no spread of its own, none borrowed.
  CHECK(params.range_pct == k_range_unmeasured);
  const auto measured = estimate_speed(job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::bf16), card("h100-sxm"), {});
  CHECK(measured.range_pct == speed_range_pct(SpeedEngine::vllm, SpeedKind::decode));
  CHECK(measured.range_pct > 0);
}

TEST_CASE("speed: serving at a concurrency beats one stream, the link bounds tensor parallelism", "[speed]")
{
  JobSpec j = job("llama-3.1-70b", Task::serve, Engine::vllm, WeightFormat::bf16, 4);
  SpeedLoad load;
  load.input_len = 512;
  load.output_len = 512;
  load.concurrency = 64;
  const auto nvlink = estimate_speed(j, card("h100-sxm"), load);
  REQUIRE(nvlink.serve_output_tokens_per_s);
  CHECK(*nvlink.serve_output_tokens_per_s > 10 * *nvlink.decode_tokens_per_s);
  // The same GPUs over PCIe (H100 PCIe has no built-in NVLink): the all-reduces cost more.
  Card pcie = card("h100-sxm");
  pcie.link = CardLink{};
  pcie.link.pcie_gen = 5;
  const auto over_pcie = estimate_speed(j, pcie, load);
  CHECK(*over_pcie.serve_output_tokens_per_s < *nvlink.serve_output_tokens_per_s);
}

TEST_CASE("speed: pipeline stages read their weights once per micro-batch, so they serve slower than tensor parallel", "[speed]")
{
  JobSpec tp = job("llama-3.1-70b", Task::serve, Engine::vllm, WeightFormat::bf16, 4);
  JobSpec pp = tp;
  pp.pipeline = 2;  // TP 2 x PP 2
  SpeedLoad load;
  load.input_len = 1024;
  load.output_len = 256;
  load.concurrency = 8;
  const auto a = estimate_speed(tp, card("a100-80gb-sxm"), load);
  const auto b = estimate_speed(pp, card("a100-80gb-sxm"), load);
  CHECK(*b.serve_output_tokens_per_s < *a.serve_output_tokens_per_s);
  CHECK(*b.decode_tokens_per_s < *a.decode_tokens_per_s);
}

TEST_CASE("speed: weights offloaded to the CPU cross PCIe on every step", "[speed]")
{
  JobSpec j = job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::bf16);
  const double on_gpu = decode(j, card("rtx-4090"));
  j.offload_bytes = 4 * k_gib;
  const auto s = estimate_speed(j, card("rtx-4090"), {});
  CHECK(*s.decode_tokens_per_s < on_gpu / 3);
  CHECK(s.bound == "offload");
}

TEST_CASE("speed: training follows the TFLOPS, LoRA does less work per token, recomputation more", "[speed]")
{
  const JobSpec full = job("llama-3.1-8b", Task::train, Engine::transformers, WeightFormat::bf16, 8);
  const auto h100 = estimate_speed(full, card("h100-sxm"), {});
  const auto a100 = estimate_speed(full, card("a100-80gb-sxm"), {});
  REQUIRE(h100.train_tokens_per_s);
  // 989 vs 312 TFLOPS, at the lower Hopper utilisation: llm-foundry's MPT 1B-30B runs on 8 H100
  // are 2.1-2.3x its runs on 8 A100 80GB (tests/data/speed/measurements.json).
  CHECK(*h100.train_tokens_per_s > 2.0 * *a100.train_tokens_per_s);
  CHECK(*h100.train_tokens_per_s < 2.5 * *a100.train_tokens_per_s);
  JobSpec lora = full;
  lora.task = Task::lora;
  CHECK(*estimate_speed(lora, card("h100-sxm"), {}).train_tokens_per_s > *h100.train_tokens_per_s);
  JobSpec ckpt = full;
  ckpt.grad_checkpointing = true;
  CHECK(*estimate_speed(ckpt, card("h100-sxm"), {}).train_tokens_per_s < *h100.train_tokens_per_s);
  CHECK_FALSE(h100.decode_tokens_per_s);  // fields that do not apply are absent
}

TEST_CASE("speed: FSDP over PCIe on a small-batch job is bound by the link", "[speed]")
{
  JobSpec j = job("llama-3.1-70b", Task::lora, Engine::transformers, WeightFormat::bf16, 8);
  j.context = 512;
  const auto s = estimate_speed(j, card("l40s"), {});
  REQUIRE(s.train_tokens_per_s);
  CHECK(s.bound == "interconnect");
}

TEST_CASE("job time: training tokens x epochs over the rate plus start-up, requests in waves", "[speed]")
{
  const JobSpec j = job("llama-3.1-8b", Task::lora, Engine::transformers, WeightFormat::bf16);
  Speed s;
  s.train_tokens_per_s = 1000.0;
  JobSize size;
  size.tokens = 3'600'000;
  size.epochs = 2;
  CHECK(work_seconds(j, s, size).value() == Approx(7200.0));
  const StartupTime st = startup_time(j);
  CHECK(st.download.count() > 0);  // 16 GB at 100 MB/s: 161 s
  CHECK(st.download.count() == 161);
  CHECK(st.warmup.count() == 0);   // training: no serving warm-up
  const JobSpec serve = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::bf16);
  CHECK(startup_time(serve).warmup == k_serving_warmup);
  Speed sv;
  sv.serve_output_tokens_per_s = 500.0;
  sv.output_len = 250;
  JobSize req;
  req.requests = 1000;
  CHECK(work_seconds(serve, sv, req).value() == Approx(500.0));
  // FP8 quantized by vLLM as it loads: the 16-bit checkpoint is what is downloaded.
  const JobSpec fp8 = job("llama-3.1-8b", Task::serve, Engine::vllm, WeightFormat::fp8);
  CHECK(startup_time(fp8).download_bytes == Approx(startup_time(serve).download_bytes).epsilon(0.01));
  CHECK_FALSE(work_seconds(serve, Speed{}, req));  // unknown speed: unknown time
}

TEST_CASE("start-up downloads the checkpoint as stored, not the weights as held", "[speed]")
{
  // Llama 3.1 405B's Hub checkpoint is bf16 (191 safetensors files, about 812 GB); a full
  // fine-tune under transformers holds an fp32 master copy (1623 GB) it does not download.
  JobSpec train = job("llama-3.1-405b", Task::train, Engine::transformers, WeightFormat::bf16);
  train.gpus = 8;
  train.shard = Shard::fsdp;
  const SpeedFigures held = speed_figures(train);
  const CheckpointDownload d = checkpoint_download(train, held);
  const double params = static_cast<double>(train.model.params);
  CHECK(held.weight_bytes == Approx(params * 4).epsilon(0.01));
  CHECK(d.bytes == Approx(params * 2).epsilon(0.01));
  CHECK(d.bytes / 1e9 == Approx(811.5).epsilon(0.01));
  CHECK(d.source.find("the catalogue") != std::string::npos);
  CHECK(d.source.find("bf16") != std::string::npos);
  const StartupTime st = startup_time(train);
  CHECK(st.download_bytes == d.bytes);
  CHECK(st.download.count() == static_cast<std::int64_t>(std::ceil(d.bytes / k_download_bytes_per_s)));
  CHECK(st.load.count() == static_cast<std::int64_t>(std::ceil(held.weight_bytes / k_load_bytes_per_s)));
  // QLoRA quantizes the bf16 checkpoint as it loads: it downloads the bf16 files.
  const JobSpec qlora = job("llama-3.1-8b", Task::qlora, Engine::transformers, WeightFormat::nf4);
  CHECK(checkpoint_download(qlora, speed_figures(qlora)).bytes ==
        Approx(static_cast<double>(qlora.model.params) * 2).epsilon(0.01));
  // A native FP8 checkpoint (DeepSeek-V3's quantization_config) downloads about a byte a parameter.
  const JobSpec v3 = job("deepseek-v3", Task::infer, Engine::vllm, WeightFormat::fp8);
  const CheckpointDownload fp8 = checkpoint_download(v3, speed_figures(v3));
  CHECK(fp8.bytes / static_cast<double>(v3.model.params) == Approx(1.0).epsilon(0.05));
  CHECK(fp8.source.find("fp8") != std::string::npos);
  // Across servers the checkpoint is the same: the figures are the whole model's, whatever the
  // layout (vLLM's tensor parallel over 2 servers of 8 once divided them by 16).
  JobSpec spread = job("llama-3.1-70b", Task::infer, Engine::vllm, WeightFormat::bf16);
  const double whole = speed_figures(spread).weight_bytes;
  spread.gpus = 8;
  spread.nodes = 2;
  CHECK(speed_figures(spread).weight_bytes == whole);
  CHECK(startup_time(spread).download_bytes == whole);
}

TEST_CASE("start-up: a checkpoint read from its files downloads the files' sizes, named by where they are", "[speed]")
{
  JobSpec j = job("llama-3.1-8b", Task::infer, Engine::vllm, WeightFormat::bf16);
  CheckpointWeights ck;
  ck.linear = {8'000'000'000, 16'000'000'000};
  ck.format = WeightFormat::bf16;
  ck.files = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  ck.hub_repo = "meta-llama/Llama-3.1-8B";
  ck.file_bytes = 16'060'000'000;  // the listing's sizes: headers and padding too
  j.model.checkpoint = ck;
  const CheckpointDownload hub = checkpoint_download(j, speed_figures(j));
  CHECK(hub.bytes == 16'060'000'000.0);
  CHECK(hub.source == "the Hub listing's file sizes of meta-llama/Llama-3.1-8B (2 files)");
  j.model.checkpoint->hub_repo.clear();
  CHECK(checkpoint_download(j, speed_figures(j)).source == "the local files' file sizes (2 files)");
  j.model.checkpoint->file_bytes = 0;  // no sizes known: the tensors' bytes
  const CheckpointDownload tensors = checkpoint_download(j, speed_figures(j));
  CHECK(tensors.bytes == 16'000'000'000.0);
  CHECK(tensors.source == "the local files' tensor bytes (2 files)");
  j.model.checkpoint->gguf = true;
  j.model.checkpoint->files = {"Llama-3.1-8B.Q4_K_M.gguf"};
  j.model.checkpoint->file_bytes = 4'920'000'000;
  const CheckpointDownload gguf = checkpoint_download(j, speed_figures(j));
  CHECK(gguf.bytes == 4'920'000'000.0);
  CHECK(gguf.source == "the GGUF file's file sizes (Llama-3.1-8B.Q4_K_M.gguf)");
}

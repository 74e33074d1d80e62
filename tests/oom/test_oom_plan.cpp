// SPDX-License-Identifier: MIT
// `gpurent oom` and `gpurent plan` give one answer for the same job on the same card (issue #26):
// the job rebuilt from the log is sized by plan's estimate, and the fit verdict and the bytes
// needed are plan's to the byte; no fix proposes the format, KV type or context the job already has.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli_harness.hpp"
#include "cli/oom_job.hpp"
#include "cli/plan_options.hpp"
#include "common/rounding.hpp"
#include "oom/diagnose.hpp"
#include "providers/card.hpp"
#include "providers/catalog.hpp"
#include "planner/rank.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

namespace gpurent {
namespace {

// llama-server b6xxx loading Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf at its full 131072 context
// on an L4: the lines as llama.cpp prints them (print_info, load_tensors, llama_context), then the
// failed KV-cache allocation of 16384 MiB.
std::string llama_log(std::uint64_t n_ctx, const std::string& kv_line = {}, const std::string& failure = {})
{
  std::string log = R"(build: 6250 (e92734d5) with cc (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0 for x86_64-linux-gnu
system info: n_threads = 8, n_threads_batch = 8, total_threads = 16
main: loading model
srv    load_model: loading model '/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf'
llama_model_load_from_file_impl: using device CUDA0 (NVIDIA L4) - 22478 MiB free
llama_model_loader: loaded meta data with 33 key-value pairs and 292 tensors from /models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf (version GGUF V3 (latest))
llama_model_loader: - kv   0:                       general.architecture str              = llama
llama_model_loader: - kv   5:                         general.size_label str              = 8B
llama_model_loader: - kv  16:                          llama.block_count u32              = 32
llama_model_loader: - type  f32:   66 tensors
llama_model_loader: - type q4_K:  193 tensors
llama_model_loader: - type q6_K:   33 tensors
print_info: file format = GGUF V3 (latest)
print_info: file type   = Q4_K - Medium
print_info: file size   = 4.58 GiB (4.89 BPW)
load: special tokens cache size = 256
print_info: arch             = llama
print_info: vocab_only       = 0
print_info: n_ctx_train      = 131072
print_info: n_embd           = 4096
print_info: n_layer          = 32
print_info: n_head           = 32
print_info: n_head_kv        = 8
print_info: n_rot            = 128
print_info: n_swa            = 0
print_info: is_swa_any       = 0
print_info: n_embd_head_k    = 128
print_info: n_embd_head_v    = 128
print_info: n_gqa            = 4
print_info: n_embd_k_gqa     = 1024
print_info: n_embd_v_gqa     = 1024
print_info: f_norm_eps       = 0.0e+00
print_info: f_norm_rms_eps   = 1.0e-05
print_info: n_ff             = 14336
print_info: n_expert         = 0
print_info: n_expert_used    = 0
print_info: causal attn      = 1
print_info: rope type        = 0
print_info: freq_base_train  = 500000.0
print_info: n_ctx_orig_yarn  = 131072
print_info: model type       = 8B
print_info: model params     = 8.03 B
print_info: general.name     = Meta Llama 3.1 8B Instruct
print_info: vocab type       = BPE
print_info: n_vocab          = 128256
print_info: n_merges         = 280147
load_tensors: loading model tensors, this can take a while... (mmap = true)
load_tensors: offloading 32 repeating layers to GPU
load_tensors: offloading output layer to GPU
load_tensors: offloaded 33/33 layers to GPU
load_tensors:        CUDA0 model buffer size =  4403.49 MiB
load_tensors:   CPU_Mapped model buffer size =   281.81 MiB
llama_context: constructing llama_context
llama_context: n_seq_max     = 1
)";
  log += "llama_context: n_ctx         = " + std::to_string(n_ctx) + "\n";
  log += "llama_context: n_ctx_per_seq = " + std::to_string(n_ctx) + "\n";
  log += R"(llama_context: n_batch       = 2048
llama_context: n_ubatch      = 512
llama_context: causal_attn   = 1
llama_context: flash_attn    = auto
llama_context: kv_unified    = false
llama_context: freq_base     = 500000.0
llama_context:  CUDA_Host  output buffer size =     0.49 MiB
)";
  log += kv_line;
  if (failure.empty()) {
    const std::uint64_t mib = n_ctx / 8;  // f16 K and V: 32 layers x 1024 x 2 x 2 bytes per token
    log += "ggml_backend_cuda_buffer_type_alloc_buffer: allocating " + std::to_string(mib) +
           ".00 MiB on device 0: cudaMalloc failed: out of memory\n";
    log += "alloc_tensor_range: failed to allocate CUDA0 buffer of size " + std::to_string(mib * 1024 * 1024) + "\n";
    log += "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n";
    log += "common_init_from_params: failed to create context with model '/models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf'\n";
  } else {
    log += failure;
  }
  return log;
}

// vLLM 0.10 serving Llama-3.1-8B-Instruct at its full context on an L4: the V1 engine's config
// line, the weights loaded, then the KV-cache check.
std::string vllm_log(const std::string& extra_args, const std::string& quantization, const std::string& kv_dtype)
{
  return "(APIServer pid=1) INFO 08-14 09:12:03 [api_server.py:1805] vLLM API server version 0.10.0\n"
         "(APIServer pid=1) INFO 08-14 09:12:03 [utils.py:326] non-default args: {'model': "
         "'meta-llama/Llama-3.1-8B-Instruct'" +
         extra_args +
         "}\n"
         "(EngineCore_0 pid=208) INFO 08-14 09:12:15 [core.py:71] Initializing a V1 LLM engine (v0.10.0) with config: "
         "model='meta-llama/Llama-3.1-8B-Instruct', speculative_config=None, tokenizer='meta-llama/Llama-3.1-8B-Instruct', "
         "skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, override_neuron_config={}, tokenizer_revision=None, "
         "trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=131072, download_dir=None, load_format=auto, "
         "tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=" +
         quantization + ", enforce_eager=False, kv_cache_dtype=" + kv_dtype +
         ",  device_config=cuda, seed=0, served_model_name=meta-llama/Llama-3.1-8B-Instruct\n"
         "(EngineCore_0 pid=208) INFO 08-14 09:12:41 [gpu_model_runner.py:1892] Model loading took 14.9889 GiB and 24.5 "
         "seconds\n"
         "(EngineCore_0 pid=208) ERROR 08-14 09:12:52 [core.py:632] ValueError: To serve at least one request with the "
         "models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory "
         "(3.42 GiB). Based on the available memory, the estimated maximum model length is 28016. Try increasing "
         "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n";
}

Card card_named(const std::string& name)
{
  auto c = find_card(name);
  REQUIRE(c.has_value());
  return *c;
}

// What `gpurent plan` decides for ARGS: its own option parsing, make_job and rank over the
// built-in offers, exactly as build_plan_report calls them.
struct PlanVerdict {
  JobSpec job;
  Bytes total;
  Bytes limit;
  bool fits = false;
};
PlanVerdict plan_verdict(const PlanArgs& args)
{
  auto opts = validate_plan_args(args);
  REQUIRE(opts.has_value());
  const ModelArch* arch = find_model_ptr(args.model);
  REQUIRE(arch != nullptr);
  auto job = make_job(*opts, for_checkpoint(*arch, named_hf_id(*arch, args.model)));
  REQUIRE(job.has_value());
  const PlanResult res = rank(*job, builtin_offers(), provider_catalog(), card_catalog(), opts->request,
                              [](const JobSpec& j) { return estimate(j); });
  REQUIRE(res.card.has_value());
  return {res.job, res.memory.total(), fit_limit_for(res.job, res.card->usable), res.card_fits};
}

std::vector<OomCardOption> all_cards()
{
  std::vector<OomCardOption> out;
  for (const auto& c : card_catalog()) {
    out.push_back({c.id, c.display, c.usable, {}, 1, std::nullopt});
  }
  return out;
}

nlohmann::json oom_json_run(const std::string& log, const std::string& card, int& code)
{
  test::CliHarness h;
  h.stdin_text = log;
  const auto r = h.run({"oom", "-", "--card", card, "--json"});
  code = r.code;
  INFO(r.err);
  return nlohmann::json::parse(r.out);
}

double gib6(Bytes b) { return round_to_places(to_gib(b), 6); }

bool has_fix(const OomDiagnosis& d, const std::string& id)
{
  return std::any_of(d.fixes.begin(), d.fixes.end(), [&](const OomFix& f) { return f.id == id; });
}

}  // namespace

TEST_CASE("oom and plan: the llama.cpp 8B Q4_K_M 131072 job on an L4 gets one verdict", "[oom][plan]")
{
  const std::string log = llama_log(131072);
  const auto report = parse_oom(log);
  REQUIRE(report.has_value());
  CHECK(report->engine == OomEngine::llama_cpp);
  CHECK(report->stage == OomStage::kv_cache);
  CHECK(report->job.n_layer == 32U);
  CHECK(report->job.n_head_kv == 8U);
  CHECK(report->job.n_ctx == 131072U);
  CHECK(gguf_type_name(report->job.file_type) == "Q4_K_M");
  CHECK(report->job.device_name == "NVIDIA L4");

  const OomLogJob built = job_from_log(*report);
  REQUIRE(built.job.has_value());
  CHECK(built.missing.empty());
  CHECK(built.model == "llama-3.1-8b");  // the catalogue model of the same shape
  CHECK(built.job->weights == WeightFormat::gguf_q4_k_m);
  CHECK(built.job->context == 131072U);

  // plan, as the user would type it.
  PlanArgs args;
  args.model = "llama-3.1-8b";
  args.engine = "llama.cpp";
  args.weights = "Q4_K_M";
  args.context = "131072";
  args.card = "l4";
  args.gpus = "1";
  const PlanVerdict plan = plan_verdict(args);
  CHECK_FALSE(plan.fits);  // plan: 1 x L4 does not hold it

  const Card l4 = card_named("l4");
  const OomJobInput in = estimate_log_job(*report, l4, all_cards());
  REQUIRE(in.estimate.has_value());
  REQUIRE(in.estimate->on_card.has_value());
  const OomCardVerdict& v = *in.estimate->on_card;
  CHECK(v.estimated);
  CHECK(v.need == plan.total);  // to the byte
  CHECK(v.limit == plan.limit);
  CHECK(v.fits == plan.fits);
  // More than the 16 GiB KV buffer the message names: the resident weights and the compute buffer count.
  CHECK(v.need.n > 16 * k_gib + 4 * k_gib);

  // The command: exit 3, the same figures in --json, and the text says it does not fit.
  int code = 0;
  const auto j = oom_json_run(log, "l4", code);
  CHECK(code == 3);
  CHECK(j["on_card"]["fits"] == false);
  CHECK(j["on_card"]["basis"] == "plan_estimate");
  CHECK(j["on_card"]["need_gib"].get<double>() == gib6(plan.total));
  CHECK(j["on_card"]["limit_gib"].get<double>() == gib6(plan.limit));
  CHECK(j["job"]["model"] == "llama-3.1-8b");
  CHECK(j["job"]["estimate"]["total_gib"].get<double>() == gib6(plan.total));
  // The smallest card it is named for holds plan's estimate.
  REQUIRE(j.contains("card"));
  CHECK(plan_card_fit(*built.job, card_named(j["card"]["card"].get<std::string>())).fits);

  // `gpurent plan` itself: the same exit code and total.
  test::CliHarness h;
  const auto p = h.run({"plan", "llama-3.1-8b", "--engine", "llama.cpp", "--weights", "Q4_K_M", "--context", "131072", "--card",
                        "l4", "--gpus", "1", "--json"});
  CHECK(p.code == 3);
  const auto pj = nlohmann::json::parse(p.out);
  CHECK(pj["memory"]["total_gib"].get<double>() == round2(to_gib(plan.total)));

  h.stdin_text = log;
  const auto text = h.run({"oom", "-", "--card", "l4"});
  CHECK(text.code == 3);
  std::string flat = text.out;
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  CHECK(flat.find("it does NOT fit") != std::string::npos);
  CHECK(flat.find("16.00 GiB: it fits") == std::string::npos);
  CHECK(text.out.find("gpurent plan llama-3.1-8b") != std::string::npos);
}

TEST_CASE("oom and plan: a vLLM job and a job that fits get plan's verdict", "[oom][plan]")
{
  SECTION("vLLM: Llama-3.1-8B-Instruct at 131072 on an L4")
  {
    const std::string log = vllm_log(", 'gpu_memory_utilization': 0.9", "None", "auto");
    const auto report = parse_oom(log);
    REQUIRE(report.has_value());
    CHECK(report->job.model == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(report->job.max_model_len == 131072U);
    CHECK(report->job.gpu_memory_utilization == Approx(0.9));
    CHECK(report->job.engine_version == "0.10.0");  // the release the job is sized for
    PlanArgs args;
    args.engine_version = "0.10.0";
    args.model = "meta-llama/Llama-3.1-8B-Instruct";
    args.task = "serve";
    args.engine = "vllm";
    args.context = "131072";
    args.gpu_util = "0.9";
    args.card = "l4";
    args.gpus = "1";
    const PlanVerdict plan = plan_verdict(args);
    const OomJobInput in = estimate_log_job(*report, card_named("l4"), all_cards());
    REQUIRE(in.estimate.has_value());
    REQUIRE(in.estimate->on_card.has_value());
    CHECK(in.estimate->on_card->need == plan.total);
    CHECK(in.estimate->on_card->limit == plan.limit);
    CHECK(in.estimate->on_card->fits == plan.fits);
    CHECK_FALSE(plan.fits);
    int code = 0;
    const auto j = oom_json_run(log, "l4", code);
    CHECK(code == 3);
    CHECK(j["on_card"]["need_gib"].get<double>() == gib6(plan.total));
    CHECK(j["on_card"]["fits"] == false);
  }
  SECTION("llama.cpp at 8192 tokens on an L4: fits, in both")
  {
    // Something else held the card: the compute buffer failed although the job fits an L4.
    const std::string log = llama_log(8192, {},
                                      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 258.50 MiB on device 0: "
                                      "cudaMalloc failed: out of memory\n"
                                      "llama_init_from_model: failed to initialize the context: failed to allocate compute "
                                      "buffers\n");
    const auto report = parse_oom(log);
    REQUIRE(report.has_value());
    PlanArgs args;
    args.model = "llama-3.1-8b";
    args.engine = "llama.cpp";
    args.weights = "Q4_K_M";
    args.context = "8192";
    args.card = "l4";
    args.gpus = "1";
    const PlanVerdict plan = plan_verdict(args);
    CHECK(plan.fits);
    const OomJobInput in = estimate_log_job(*report, card_named("l4"), all_cards());
    REQUIRE(in.estimate.has_value());
    CHECK(in.estimate->on_card->need == plan.total);
    CHECK(in.estimate->on_card->fits);
    int code = 0;
    const auto j = oom_json_run(log, "l4", code);
    CHECK(code == 0);
    CHECK(j["on_card"]["fits"] == true);
    CHECK(j["on_card"]["need_gib"].get<double>() == gib6(plan.total));
  }
}

TEST_CASE("oom: no fix proposes the format, KV type or context the job already runs", "[oom][plan]")
{
  const Card l4 = card_named("l4");
  const auto options = all_cards();
  SECTION("Q4_K_M: a smaller quantization is strictly smaller, with plan's saving")
  {
    const auto report = parse_oom(llama_log(131072));
    REQUIRE(report.has_value());
    const OomDiagnosis d = diagnose_oom(*report, options, OomCardOption{l4.id, l4.display, l4.usable, {}, 1, std::nullopt},
                                        estimate_log_job(*report, l4, options));
    for (const auto& f : d.fixes) {
      INFO(f.id << ": " << f.description << " $ " << f.command);
      CHECK(f.description.find("Q4_K_M instead") == std::string::npos);
      CHECK(f.description.find("instead of Q8_0") == std::string::npos);
      if (f.id == "smaller-context") {
        CHECK(f.command.starts_with("-c "));
        CHECK(std::stoull(f.command.substr(3)) < 131072U);
      }
    }
    const auto quant = std::find_if(d.fixes.begin(), d.fixes.end(), [](const OomFix& f) { return f.id == "smaller-quant"; });
    if (quant != d.fixes.end()) {
      const auto& plan_fix = *std::find_if(d.job.estimate->fixes.begin(), d.job.estimate->fixes.end(),
                                           [](const OomPlanFix& f) { return f.id == "quantize-weights"; });
      const auto smaller = parse_weight_format(plan_fix.value);
      REQUIRE(smaller.has_value());
      CHECK(*smaller != WeightFormat::gguf_q4_k_m);
      CHECK(plan_fix.saves.n > 0);
      CHECK(quant->description.find(plan_fix.value + " instead of the Q4_K_M") != std::string::npos);
    }
  }
  SECTION("without a card: the file's own type is never proposed")
  {
    auto text = llama_log(131072);
    text.replace(text.find("NVIDIA L4"), 9, "NVIDIA Foo");  // a card gpurent does not know: no limit for plan's fixes
    const auto report = parse_oom(text);
    REQUIRE(report.has_value());
    const OomDiagnosis d = diagnose_oom(*report, options, std::nullopt, estimate_log_job(*report, std::nullopt, options));
    REQUIRE(has_fix(d, "smaller-quant"));
    for (const auto& f : d.fixes) {
      CHECK(f.description.find("a Q4_K_M GGUF instead") == std::string::npos);
    }
  }
  SECTION("a q8_0 KV cache is not told to use q8_0")
  {
    const auto report = parse_oom(llama_log(131072,
                                            "llama_kv_cache_unified: kv_size = 131072, type_k = 'q8_0', type_v = 'q8_0', "
                                            "n_layer = 32, can_shift = 1, padding = 256\n"));
    REQUIRE(report.has_value());
    CHECK(report->job.type_k == "q8_0");
    const OomDiagnosis with_card = diagnose_oom(*report, options, std::nullopt, estimate_log_job(*report, l4, options));
    CHECK_FALSE(has_fix(with_card, "kv-cache-q8"));
    const OomDiagnosis alone = diagnose_oom(*report, options);
    CHECK_FALSE(has_fix(alone, "kv-cache-q8"));
  }
  SECTION("an FP8 vLLM job with an FP8 KV cache is not told to use FP8")
  {
    const auto report = parse_oom(vllm_log("", "fp8", "fp8"));
    REQUIRE(report.has_value());
    CHECK(report->job.quantization == "fp8");
    for (const OomDiagnosis& d : {diagnose_oom(*report, options), diagnose_oom(*report, options, std::nullopt,
                                                                                 estimate_log_job(*report, l4, options))}) {
      for (const auto& f : d.fixes) {
        INFO(f.id << " $ " << f.command);
        CHECK(f.command.find("--quantization fp8") == std::string::npos);
        CHECK(f.command.find("--kv-cache-dtype fp8") == std::string::npos);
      }
    }
  }
}

TEST_CASE("oom: a log without the model's shape says what is missing and keeps the message's numbers", "[oom][plan]")
{
  const std::string log = "llama_context: n_ctx         = 131072\n"
                          "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: "
                          "out of memory\n"
                          "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n";
  const auto report = parse_oom(log);
  REQUIRE(report.has_value());
  const OomJobInput in = estimate_log_job(*report, card_named("l4"), all_cards());
  CHECK_FALSE(in.estimate.has_value());
  CHECK(std::find(in.missing.begin(), in.missing.end(), "n_layer (print_info)") != in.missing.end());
  test::CliHarness h;
  h.stdin_text = log;
  const auto r = h.run({"oom", "-", "--card", "l4"});
  CHECK(r.out.find("No estimate of the whole job: the log does not give n_layer (print_info)") != std::string::npos);
  CHECK(r.out.find("(the message's own numbers)") != std::string::npos);
  h.stdin_text = log;
  const auto j = nlohmann::json::parse(h.run({"oom", "-", "--card", "l4", "--json"}).out);
  CHECK(j["on_card"]["basis"] == "message");
  CHECK(j["job"]["missing"].size() >= 4U);
}

}  // namespace gpurent

namespace gpurent {
namespace {

// The 131072 log with its llama_context n_ctx lines removed (a user's paste cut short).
std::string without_n_ctx(std::string log)
{
  for (const std::string key : {"llama_context: n_ctx         = ", "llama_context: n_ctx_per_seq = "}) {
    const std::size_t at = log.find(key);
    REQUIRE(at != std::string::npos);
    log.erase(at, log.find('\n', at) + 1 - at);
  }
  return log;
}

}  // namespace

TEST_CASE("oom: a llama.cpp log cut before n_ctx still gets plan's verdict through the failed KV buffer", "[oom][plan]")
{
  const std::string log = without_n_ctx(llama_log(131072));
  const auto report = parse_oom(log);
  REQUIRE(report.has_value());
  CHECK_FALSE(report->job.n_ctx.has_value());
  const OomLogJob built = job_from_log(*report);
  REQUIRE(built.job.has_value());
  CHECK(built.job->context == 131072U);  // 16384 MiB / (32 layers x 8 heads x 128 x 2 x 2 B)
  CHECK(std::any_of(built.assumed.begin(), built.assumed.end(),
                    [](const std::string& a) { return a.find("from the failed KV-cache buffer") != std::string::npos; }));
  int code = 0;
  const auto j = oom_json_run(log, "l4", code);
  CHECK(code == 3);  // 21.36 GiB of plan's estimate on a 20.93 GiB limit
  CHECK(j["on_card"]["basis"] == "plan_estimate");
  CHECK(j["on_card"]["fits"] == false);
}

TEST_CASE("oom: without the model's shape, a failed KV buffer is counted with the weights on the GPU and never said to fit",
          "[oom][plan]")
{
  // No n_layer line: plan's estimate cannot run; the model buffer (4403.49 MiB) is on the GPU.
  std::string log = llama_log(131072);
  const std::size_t at = log.find("print_info: n_layer");
  REQUIRE(at != std::string::npos);
  log.erase(at, log.find('\n', at) + 1 - at);
  const auto report = parse_oom(log);
  REQUIRE(report.has_value());
  int code = 0;
  const auto j = oom_json_run(log, "l4", code);
  CHECK(j["on_card"]["basis"] == "message");
  const double resident = j["on_card"]["resident_weights_gib"].get<double>();
  CHECK(resident == Approx(4403.49 / 1024).epsilon(1e-4));
  CHECK(j["on_card"]["need_gib"].get<double>() == Approx(16.0 + resident).epsilon(1e-6));
  CHECK(j["on_card"]["fits"].is_null());  // 20.30 GiB is a lower bound under the 20.93 GiB limit
  CHECK(code == 0);
  const auto small = oom_json_run(log, "rtx-4080", code);  // 15.61 GiB usable: over the limit even so
  CHECK(small["on_card"]["fits"] == false);
  CHECK(code == 3);
}

}  // namespace gpurent

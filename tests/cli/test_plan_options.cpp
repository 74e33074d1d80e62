// SPDX-License-Identifier: MIT
// Property tests of the `plan` value parsers: exact round trips, and no input crashes or passes
// silently out of range.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>
#include <random>
#include <string>

#include "cli/plan_options.hpp"
#include "sizing/checkpoint_format.hpp"
#include "sizing/model_catalog.hpp"

using namespace gpurent;

TEST_CASE("parse_param_count: suffixes, exponents and decimals are exact", "[cli][plan_options]")
{
  CHECK(*parse_param_count("7B") == 7'000'000'000ULL);
  CHECK(*parse_param_count("8.03B") == 8'030'000'000ULL);
  CHECK(*parse_param_count("70e9") == 70'000'000'000ULL);
  CHECK(*parse_param_count("350M") == 350'000'000ULL);
  CHECK(*parse_param_count("1.5T") == 1'500'000'000'000ULL);
  CHECK(*parse_param_count("0.5b") == 500'000'000ULL);
  CHECK(*parse_param_count("7000000000") == 7'000'000'000ULL);
  CHECK(*parse_param_count(" 8.030261248B ") == 8'030'261'248ULL);
  CHECK(*parse_param_count("1.2e-3T") == 1'200'000'000ULL);
  for (const char* bad : {"", "B", "7BB", "-7B", "7 B", "seven", "1e100", "0", "999999", "101T", "7.B.", "nan", "inf",
                          "0x10B", "1e", "1e+"}) {
    INFO(bad);
    const auto r = parse_param_count(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
  }
}

TEST_CASE("parse_param_count: random counts round-trip through every spelling", "[cli][plan_options]")
{
  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<std::uint64_t> dist(1'000'000ULL, 100'000'000'000'000ULL);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t n = dist(rng);
    INFO(n);
    CHECK(*parse_param_count(std::to_string(n)) == n);
    // n / 1e9 written with all nine decimals and a B suffix is exact.
    CHECK(*parse_param_count(fmt::format("{}.{:09}B", n / 1'000'000'000ULL, n % 1'000'000'000ULL)) == n);
    CHECK(*parse_param_count(fmt::format("{}e0", n)) == n);
  }
}

TEST_CASE("parse_token_count, parse_deadline, parse_rank_by: the job's size and ranking", "[cli][plan_options]")
{
  using std::chrono::seconds;
  CHECK(*parse_token_count("50M", "--tokens") == 50'000'000ULL);
  CHECK(*parse_token_count("1.2B", "--tokens") == 1'200'000'000ULL);
  CHECK(*parse_token_count("500k", "--tokens") == 500'000ULL);
  CHECK(*parse_token_count("1", "--requests") == 1ULL);
  CHECK(*parse_token_count("2e9", "--tokens") == 2'000'000'000ULL);
  for (const char* bad : {"", "0", "-1", "0.4", "1e16", "1001T", "lots", "5MM", "nan"}) {
    INFO(bad);
    const auto r = parse_token_count(bad, "--tokens");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
    CHECK(r.error().message.starts_with("--tokens: "));
  }
  CHECK(*parse_deadline("6h") == seconds{21600});
  CHECK(*parse_deadline("90m") == seconds{5400});
  CHECK(*parse_deadline("1h30m") == seconds{5400});
  CHECK(*parse_deadline("2d") == seconds{172800});
  CHECK(*parse_deadline("45s") == seconds{45});
  CHECK(*parse_deadline("6") == seconds{21600});  // a bare number is hours, as --hours
  CHECK(*parse_deadline("0.5") == seconds{1800});
  for (const char* bad : {"", "0", "0h", "h", "6x", "6h30", "-1h", "1h-5m", "3651d", "99999999999h", "soon"}) {
    INFO(bad);
    CHECK_FALSE(parse_deadline(bad));
  }
  CHECK(*parse_rank_by("cost") == RankBy::cost);
  CHECK(*parse_rank_by(" Time ") == RankBy::time);
  CHECK(*parse_rank_by("hourly") == RankBy::hourly);
  CHECK_FALSE(parse_rank_by("cheapest"));
  CHECK_FALSE(parse_rank_by(""));
}

TEST_CASE("parse_hours: decimal hours to whole seconds, rounded up", "[cli][plan_options]")
{
  using std::chrono::seconds;
  CHECK(*parse_hours("1") == seconds{3600});
  CHECK(*parse_hours("0.5") == seconds{1800});
  CHECK(*parse_hours("1.25") == seconds{4500});
  CHECK(*parse_hours("36") == seconds{129600});
  CHECK(*parse_hours("0.0001") == seconds{1});  // 0.36 s bills as 1 s
  CHECK(*parse_hours("87600") == seconds{315'360'000});
  for (const char* bad : {"", "0", "-1", "0.0000", "1h", "abc", "87600.5", "1e9", ".", "1..5"}) {
    INFO(bad);
    CHECK_FALSE(parse_hours(bad));
  }
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> dist(1, 87'600'000'000ULL);  // micro-hours
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t mh = dist(rng);
    const std::string text = fmt::format("{}.{:06}", mh / 1'000'000, mh % 1'000'000);
    INFO(text);
    const auto s = parse_hours(text);
    REQUIRE(s);
    // The smallest whole number of seconds not below the exact duration.
    const auto exact_us = static_cast<std::int64_t>(mh * 3600);  // microseconds
    CHECK(s->count() * 1'000'000 >= exact_us);
    CHECK((s->count() - 1) * 1'000'000 < exact_us);
  }
}

TEST_CASE("parse_gpu_util, parse_usd_per_hour, parse_context, parse_count: ranges and round trips", "[cli][plan_options]")
{
  for (std::uint32_t p = 1; p <= 1000; ++p) {
    CHECK(*parse_gpu_util(fmt::format("{}.{:03}", p / 1000, p % 1000)) == p);
  }
  CHECK(*parse_gpu_util("0.9") == 900);
  CHECK(*parse_gpu_util("1") == 1000);
  for (const char* bad : {"0", "1.001", "-0.5", "90%", "", "0.0004"}) {
    INFO(bad);
    CHECK_FALSE(parse_gpu_util(bad));
  }
  CHECK(parse_usd_per_hour("2.5")->n == 2'500'000);
  CHECK(parse_usd_per_hour("$0.02")->n == 20'000);
  CHECK(parse_usd_per_hour("0.0000019")->n == 1);
  for (const char* bad : {"0", "-2", "free", "$", "100000.01", "1,5"}) {
    INFO(bad);
    CHECK_FALSE(parse_usd_per_hour(bad));
  }
  CHECK(*parse_context("8192") == 8192);
  CHECK(*parse_context("8k") == 8192);
  CHECK(*parse_context("128K") == 131072);
  CHECK(*parse_context("16384k") == 16U << 20);
  for (const char* bad : {"0", "-1", "8.5k", "16385k", "k", "", "4096 tokens", "99999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_context(bad));
  }
  CHECK(*parse_count("8", "--gpus", 1, 8) == 8);
  CHECK_FALSE(parse_count("9", "--gpus", 1, 8));
  CHECK(parse_count("x", "--gpus", 1, 8).error().message.find("--gpus") != std::string::npos);
  // --nodes: 1..64 servers.
  CHECK(*parse_count("64", "--nodes", 1, 64) == 64);
  CHECK(*parse_count("1", "--nodes", 1, 64) == 1);
  for (const char* bad : {"0", "65", "abc", "-1", "2.5", "", "1e1"}) {
    INFO(bad);
    const auto n = parse_count(bad, "--nodes", 1, 64);
    REQUIRE_FALSE(n);
    CHECK(n.error().message.find("--nodes") != std::string::npos);
  }
  PlanArgs a;
  a.model = "llama-3.1-8b";
  CHECK_FALSE(validate_plan_args(a)->request.nodes);
  a.nodes = "12";
  CHECK(*validate_plan_args(a)->request.nodes == 12);
  a.nodes = "65";
  CHECK(validate_plan_args(a).error().code == Errc::usage);
}

TEST_CASE("plan value parsers: random bytes never crash and never pass out of range", "[cli][plan_options]")
{
  std::mt19937 rng(99);
  const std::string alphabet = "0123456789.eE+-kKmMbBtT$ x";
  std::uniform_int_distribution<std::size_t> len(0, 24);
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (std::size_t k = len(rng); k > 0; --k) {
      s += alphabet[pick(rng)];
    }
    INFO(s);
    if (const auto p = parse_param_count(s)) {
      CHECK(*p >= 1'000'000ULL);
      CHECK(*p <= 100'000'000'000'000ULL);
    }
    if (const auto h = parse_hours(s)) {
      CHECK(h->count() >= 1);
      CHECK(h->count() <= 315'360'000);
    }
    if (const auto u = parse_gpu_util(s)) {
      CHECK(*u >= 1);
      CHECK(*u <= 1000);
    }
    if (const auto c = parse_context(s)) {
      CHECK(*c >= 1);
      CHECK(*c <= (16U << 20));
    }
    if (const auto m = parse_usd_per_hour(s)) {
      CHECK(m->n > 0);
    }
    if (const auto n = parse_count(s, "--nodes", 1, 64)) {
      CHECK(*n >= 1);
      CHECK(*n <= 64);
    }
    if (const auto v = parse_positive(s, "--min-user-speed", k_max_user_tokens_per_s)) {
      CHECK(*v > 0);
      CHECK(*v <= k_max_user_tokens_per_s);
    }
    if (const auto t = parse_positive(s, "--max-ttft", k_max_ttft_s)) {
      CHECK(*t > 0);
      CHECK(*t <= k_max_ttft_s);
    }
  }
}

TEST_CASE("parse_positive: service targets are positive decimals, exact to a millionth", "[cli][plan_options]")
{
  CHECK(*parse_positive("10", "--min-user-speed", k_max_user_tokens_per_s) == 10.0);
  CHECK(*parse_positive(" 2.5 ", "--max-ttft", k_max_ttft_s) == 2.5);
  CHECK(*parse_positive("1e3", "--min-user-speed", k_max_user_tokens_per_s) == 1000.0);
  CHECK(*parse_positive("0.000001", "--max-ttft", k_max_ttft_s) == 1e-6);
  CHECK(*parse_positive("3600", "--max-ttft", k_max_ttft_s) == 3600.0);
  for (const char* bad : {"", "0", "0.0", "-1", "-0.5", "+1", "fast", "1s", "nan", "inf", "1e", "3601", "0.0000001",
                          "1,5", "1..5", "0x10"}) {
    INFO(bad);
    const auto r = parse_positive(bad, "--max-ttft", k_max_ttft_s);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
    CHECK(r.error().message.find("--max-ttft") != std::string::npos);
  }
  // Random millionths round-trip through their decimal spelling.
  std::mt19937_64 rng(40);
  std::uniform_int_distribution<std::uint64_t> micro(1, std::uint64_t{k_max_user_tokens_per_s} * 1'000'000ULL);
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t m = micro(rng);
    const std::string text = fmt::format("{}.{:06}", m / 1'000'000ULL, m % 1'000'000ULL);
    INFO(text);
    const auto v = parse_positive(text, "--min-user-speed", k_max_user_tokens_per_s);
    REQUIRE(v);
    CHECK(std::llround(*v * 1e6) == static_cast<long long>(m));
  }
}

TEST_CASE("validate_plan_args: service targets belong to serving, --concurrency 0 is no workload", "[cli][plan_options]")
{
  const auto with = [](std::string task, std::string flag, std::string value) {
    PlanArgs a;
    a.model = "llama-3.1-8b";
    a.task = std::move(task);
    if (flag == "--min-user-speed") {
      a.min_user_speed = std::move(value);
    } else if (flag == "--max-ttft") {
      a.max_ttft = std::move(value);
    } else {
      a.concurrency = std::move(value);
    }
    return validate_plan_args(a);
  };
  const auto ok = with("serve", "--min-user-speed", "25");
  REQUIRE(ok);
  CHECK(ok->request.targets.min_user_tokens_per_s == 25.0);
  CHECK(ok->request.targets.min_user_given);
  const auto ttft = with("serve", "--max-ttft", "1.5");
  REQUIRE(ttft);
  CHECK(ttft->request.targets.max_ttft_s == 1.5);
  CHECK(ttft->request.targets.min_user_tokens_per_s == k_default_min_user_tokens_per_s);
  CHECK(ttft->request.ranking(Task::serve) == RankBy::cost);
  for (const auto& [task, flag, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"serve", "--concurrency", "0"},
           {"serve", "--concurrency", "-3"},
           {"serve", "--concurrency", "many"},
           {"serve", "--min-user-speed", "-1"},
           {"serve", "--min-user-speed", "0"},
           {"serve", "--min-user-speed", "ten"},
           {"serve", "--max-ttft", "0"},
           {"serve", "--max-ttft", "-2"},
           {"infer", "--min-user-speed", "10"},
           {"lora", "--max-ttft", "2"}}) {
    INFO(task << " " << flag << " " << value);
    const auto r = with(task, flag, value);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
  }
}

TEST_CASE("validate_plan_args: defaults of cli.md", "[cli][plan_options]")
{
  PlanArgs a;
  a.model = "llama-3.1-8b";
  auto o = validate_plan_args(a);
  REQUIRE(o);
  CHECK(o->task == Task::infer);
  CHECK(o->engine == Engine::transformers);
  CHECK_FALSE(o->weights);  // the checkpoint's own format, decided by make_job
  CHECK_FALSE(o->grad_checkpointing);
  CHECK(o->kv_cache == KvDtype::auto_);
  CHECK(o->batch == 1);
  CHECK(o->lora_rank == 16);
  CHECK(o->gpu_util_permille == 900);
  CHECK(o->request.runtime == std::chrono::seconds{3600});
  CHECK_FALSE(o->request.gpus);
  a.task = "serve";
  CHECK(validate_plan_args(a)->engine == Engine::vllm);
  a.task = "qlora";
  a.card = "a100 80g";
  CHECK(validate_plan_args(a)->request.card == "a100-80gb-sxm");
  a.grad_checkpointing = true;
  a.no_grad_checkpointing = true;
  CHECK(validate_plan_args(a).error().code == Errc::usage);
  a.grad_checkpointing = false;
  CHECK(validate_plan_args(a)->grad_checkpointing == false);

  ModelArch small;
  small.name = "tiny";
  small.max_context = 2048;
  PlanOptions po;
  CHECK(make_job(po, small)->context == 2048);  // 4096 capped at the maximum
  small.max_context = 131072;
  CHECK(make_job(po, small)->context == 4096);
  po.context = 200000;
  CHECK(make_job(po, small).error().code == Errc::usage);
}

namespace {

const JobDefault* find_default(const std::vector<JobDefault>& d, std::string_view key)
{
  const auto it = std::find_if(d.begin(), d.end(), [&](const JobDefault& x) { return x.key == key; });
  return it == d.end() ? nullptr : &*it;
}

JobSpec job_with(std::string_view model, std::string_view task, std::vector<JobDefault>* defaults = nullptr,
                 std::string_view engine = "")
{
  PlanArgs a;
  a.model = std::string(model);
  a.task = std::string(task);
  a.engine = std::string(engine);
  const auto o = validate_plan_args(a);
  REQUIRE(o);
  const auto found = find_model(model);
  REQUIRE(found);
  // As `plan` resolves a name: the catalogue entry as the named checkpoint publishes it.
  const ModelArch m = for_checkpoint(*found, named_hf_id(*found, model));
  const auto j = make_job(*o, m, defaults);
  REQUIRE(j);
  return *j;
}

}  // namespace

TEST_CASE("make_job: LoRA and QLoRA train with gradient checkpointing unless told not to, and say so", "[cli][plan_options]")
{
  for (const char* task : {"lora", "qlora"}) {
    std::vector<JobDefault> d;
    CHECK(job_with("llama-3.1-8b", task, &d).grad_checkpointing);
    const JobDefault* gc = find_default(d, "grad_checkpointing");
    REQUIRE(gc != nullptr);
    CHECK(gc->value == "true");
    CHECK(gc->kind == JobDefault::Kind::boolean);
    CHECK(gc->why.find("prepare_model_for_kbit_training") != std::string::npos);
  }
  CHECK_FALSE(job_with("llama-3.1-8b", "train").grad_checkpointing);
  PlanArgs a;
  a.model = "llama-3.1-8b";
  a.task = "lora";
  a.no_grad_checkpointing = true;
  std::vector<JobDefault> d;
  const auto j = make_job(*validate_plan_args(a), *find_model("llama-3.1-8b"), &d);
  REQUIRE(j);
  CHECK_FALSE(j->grad_checkpointing);
  CHECK(find_default(d, "grad_checkpointing") == nullptr);  // the user chose it
  a.task = "infer";
  CHECK(make_job(*validate_plan_args(a), *find_model("llama-3.1-8b")).error().code == Errc::usage);
}

TEST_CASE("make_job: the weights default to the checkpoint's own format", "[cli][plan_options]")
{
  std::vector<JobDefault> d;
  CHECK(job_with("openai/gpt-oss-120b", "serve", &d).weights == WeightFormat::mxfp4);
  REQUIRE(find_default(d, "weights") != nullptr);
  CHECK(find_default(d, "weights")->why.find("mxfp4") != std::string::npos);
  CHECK(job_with("deepseek-ai/DeepSeek-V3", "serve").weights == WeightFormat::fp8);
  CHECK(job_with("deepseek-ai/DeepSeek-R1", "infer").weights == WeightFormat::fp8);
  CHECK(job_with("Qwen/Qwen2.5-72B-Instruct-AWQ", "serve").weights == WeightFormat::awq);
  CHECK(job_with("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "infer").weights == WeightFormat::int8);
  CHECK(job_with("meta-llama/Llama-3.1-405B-Instruct-FP8", "serve").weights == WeightFormat::fp8);
  CHECK(job_with("llama-3.1-8b", "serve").weights == WeightFormat::bf16);
  // QLoRA: NF4 with double quantization; on a GPTQ/AWQ checkpoint, that checkpoint.
  CHECK(job_with("llama-3.1-8b", "qlora", &d).weights == WeightFormat::nf4);
  CHECK(find_default(d, "weights")->why.find("double quantization") != std::string::npos);
  CHECK(job_with("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "qlora").weights == WeightFormat::gptq);
  // Training updates 16-bit weights, whatever the checkpoint.
  CHECK(job_with("deepseek-ai/DeepSeek-V3", "train").weights == WeightFormat::bf16);
  // GGUF engines: ollama's tag quantization, MXFP4 for gpt-oss, else Q4_K_M.
  CHECK(job_with("llama-3.2-1b", "infer", nullptr, "ollama").weights == WeightFormat::gguf_q8_0);
  CHECK(job_with("gpt-oss-20b", "infer", nullptr, "llama.cpp").weights == WeightFormat::mxfp4);
  CHECK(job_with("phi-3-mini-128k", "infer", nullptr, "llama.cpp").weights == WeightFormat::gguf_q4_k_m);
}

TEST_CASE("validate_plan_args: QLoRA trains on GPTQ and AWQ bases, GGUF engines take MXFP4", "[cli][plan_options]")
{
  PlanArgs a;
  a.model = "qwen2.5-7b";
  a.task = "qlora";
  for (const char* w : {"gptq", "awq", "nf4", "int4"}) {
    a.weights = w;
    CHECK(validate_plan_args(a));
  }
  a.weights = "fp8";
  CHECK(validate_plan_args(a).error().code == Errc::usage);
  a.task = "infer";
  a.engine = "llama.cpp";
  a.weights = "mxfp4";
  CHECK(validate_plan_args(a));
}

TEST_CASE("validate_plan_args: --micro-batch, --grad-accum and --pack shape training only", "[cli][plan_options]")
{
  PlanArgs a;
  a.model = "llama-3.1-8b";
  a.task = "lora";
  // Random valid values round-trip; --micro-batch is --batch for training.
  std::mt19937 rng(40);
  for (int i = 0; i < 200; ++i) {
    const std::uint32_t m = 1 + rng() % 4096;
    const std::uint32_t g = 1 + rng() % 65536;
    a.micro_batch = std::to_string(m);
    a.grad_accum = std::to_string(g);
    const auto o = validate_plan_args(a);
    REQUIRE(o);
    CHECK(o->batch == m);
    CHECK(o->batch_given);
    CHECK(o->grad_accum == g);
  }
  for (const char* bad : {"0", "-1", "abc", "2.5", " ", "4097", "1e3", "99999999999999999999"}) {
    INFO(bad);
    a.micro_batch = bad;
    a.grad_accum.clear();
    const auto m = validate_plan_args(a);
    REQUIRE_FALSE(m);
    CHECK(m.error().code == Errc::usage);
    CHECK(m.error().message.find("--micro-batch") != std::string::npos);
    a.micro_batch.clear();
    a.grad_accum = bad;
    if (std::string(bad) != "4097") {  // 4097 accumulation steps are fine
      const auto g = validate_plan_args(a);
      REQUIRE_FALSE(g);
      CHECK(g.error().code == Errc::usage);
      CHECK(g.error().message.find("--grad-accum") != std::string::npos);
    }
  }
  a.grad_accum.clear();
  a.pack = true;
  CHECK(validate_plan_args(a)->pack);
  // --batch and --micro-batch agree or are refused.
  a.batch = "4";
  a.micro_batch = "4";
  CHECK(validate_plan_args(a)->batch == 4);
  a.micro_batch = "8";
  CHECK(validate_plan_args(a).error().code == Errc::usage);
  // Not for inference or serving.
  a.batch.clear();
  for (const char* task : {"infer", "serve"}) {
    a.task = task;
    a.micro_batch = "2";
    a.pack = false;
    CHECK(validate_plan_args(a).error().code == Errc::usage);
    a.micro_batch.clear();
    a.grad_accum = "2";
    CHECK(validate_plan_args(a).error().code == Errc::usage);
    a.grad_accum.clear();
    a.pack = true;
    CHECK(validate_plan_args(a).error().code == Errc::usage);
  }
}

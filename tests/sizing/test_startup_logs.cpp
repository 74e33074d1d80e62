// SPDX-License-Identifier: MIT
// The serving estimate against engines' own start-up lines (tests/data/sizing/startup_logs.json:
// vLLM V1 and V0, SGLang and llama.cpp logs from public issues and repositories, each with its
// URL, the verbatim lines and the settings that produced them). Tolerances are docs/sizing.md
// §7's: weights 3%, KV per token 2%, the engine's KV pool (bytes or tokens) 8%, llama.cpp compute
// buffer 10%. Each check below names the catalogue entry with the case's architecture, the card's
// CUDA-reported memory (the log's own figure where it prints one) and what the engine's release
// decides. The cases not checked, and why: docs/sizing.md §7 "Start-up logs".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sizing/engine_release.hpp"
#include "sizing/estimate.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;

namespace {

enum Terms : unsigned {
  weights = 1,         // "Model loading took", "model weights take", "Load weight end ... mem usage"
  pool = 2,            // "Available KV cache memory", "the rest of the memory reserved for KV Cache"
  pool_tokens = 4,     // "GPU KV cache size: N tokens", "# GPU blocks: N" x 16, SGLang "#tokens: N"
  kv_per_token = 8,    // the pool's bytes for its tokens (no profiling involved)
  llama_buffers = 16,  // llama.cpp "model buffer", "KV buffer" (or "KV self size"), "compute buffer"
  llama_kv = 32,       // llama.cpp "KV buffer" alone
  llama_model = 64,    // llama.cpp "model buffer" alone (the GPU's; token_embd stays in host memory)
};

struct LogCheck {
  std::string_view id;
  std::string_view catalogue;  // the catalogue entry with the case's architecture
  WeightFormat format;
  unsigned terms;
  double card_gib = 0;  // CUDA-reported memory per GPU (the log's figure where printed)
  bool large_card = false;  // vLLM's big-card defaults (>= 70 GiB and not an A100)
  bool nvls = false;        // Hopper/Blackwell SXM on NVSwitch
  std::uint32_t release = 0;  // engine release when the case does not print one
  bool v0 = false;           // vLLM V0 engine (VLLM_USE_V1=0 or before 0.8)
  double pool_tol = 0.08;
};

// A800 80GB PCIe: "total capacity of 79.25 GiB" (V1); V0 prints total_gpu_memory 79.14GiB.
constexpr double a800 = 79.25, a800_v0 = 79.14, a100_80 = 79.25, a100_40 = 39.38, l40s = 44.53, h100 = 79.19;
constexpr double l4 = 22.03, rtx3090 = 23.58, rtx4090 = 23.65;
constexpr std::uint32_t v0_6 = engine_release(0, 6, 4), v0_7 = engine_release(0, 7, 0);

const std::vector<LogCheck>& checks()
{
  using F = WeightFormat;
  static const std::vector<LogCheck> k{
      // ---- vLLM V1 ----
      {"vllm-0.10.1.1-qwen2-7b-a100-80gb-tp1-gmu025", "qwen2.5-7b", F::bf16, weights | pool | pool_tokens, a100_80},
      {"vllm-0.10.1.1-qwen2-7b-a100-80gb-tp1-gmu05", "qwen2.5-7b", F::bf16, pool | pool_tokens, a100_80},
      {"vllm-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu025", "qwen2.5-7b", F::bf16, weights | pool | pool_tokens, a100_80},
      {"vllm-0.10.1.1-qwen2-7b-2xa100-80gb-tp2-gmu05", "qwen2.5-7b", F::bf16, pool | pool_tokens, a100_80},
      {"vllm-0.10.1.1-qwen2-7b-2xa100-40gb-tp2-gmu05-ray", "qwen2.5-7b", F::bf16, pool | pool_tokens, a100_40},
      {"vllm-0.10.1.1-gpt-oss-120b-4xa100-80gb-tp4-ray", "gpt-oss-120b", F::mxfp4, pool, a100_80},
      {"vllm-0.11.0-qwq-32b-a800-2k", "qwen2.5-32b", F::bf16, weights | pool | pool_tokens, a800, true},
      {"vllm-0.11.0-gpt-oss-20b-a800-2k", "gpt-oss-20b", F::mxfp4, pool, a800, true},
      {"vllm-0.16.0-llama3-70b-awq-2xl40s-tp2", "llama-3-70b", F::awq, weights | pool | pool_tokens, l40s},
      {"vllm-0.19.0-gpt-oss-20b-a100-gmu065-ctx128k", "gpt-oss-20b", F::mxfp4, pool, a100_80},
      {"vllm-0.10.2-qwen3-14b-a100-40gb-ctx32k-lmcache", "qwen3-14b", F::bf16, kv_per_token, a100_40},
      {"vllm-v1-qwen3-235b-a22b-fp8-4xh100-tp4-lmcache", "qwen3-235b-a22b", F::fp8, kv_per_token, h100, true, true},
      // ---- vLLM V0 ----
      {"vllm-0.9.2-v0-qwq-32b-a800-gmu08-2k", "qwen2.5-32b", F::bf16, weights | pool, a800_v0, true, false, 0, true},
      {"vllm-0.9.2-v0-qwen3-30b-a3b-a800-gmu08", "qwen3-30b-a3b", F::bf16, weights | pool | pool_tokens, a800_v0, true, false, 0, true},
      {"vllm-0.9.2-v0-qwen3-30b-a3b-yarn131k-a800-gmu1", "qwen3-30b-a3b", F::bf16, pool | pool_tokens, a800_v0, true, false, 0, true},
      {"vllm-0.9.2-v0-qwen3-30b-a3b-fp8-a800-gmu05", "qwen3-30b-a3b", F::fp8, weights | pool | pool_tokens, a800_v0, true, false, 0, true},
      {"vllm-0.9.0.1-v0-qwen2.5-7b-1m-40gb-gmu1-200k", "qwen2.5-7b", F::bf16, weights | pool | pool_tokens, a100_40, false, false, 0, true},
      {"vllm-0.9.0.1-v0-qwen2.5-coder-0.5b-gptq-40gb-gmu05", "qwen2.5-0.5b", F::gptq, pool | pool_tokens, a100_40, false, false, 0, true},
      {"vllm-0.9.0.1-v0-qwen2.5-coder-14b-40gb-gmu099-32k", "qwen2.5-14b", F::bf16, weights | pool | pool_tokens, a100_40, false, false, 0, true},
      {"vllm-0.9.0.1-v0-deepcoder-14b-fp16-40gb-gmu097", "qwen2.5-14b", F::fp16, weights | pool | pool_tokens, a100_40, false, false, 0, true},
      {"vllm-v0-0.6.x-llama-3.1-8b-rtx3090-ctx20k", "llama-3.1-8b", F::bf16, weights | pool | pool_tokens, rtx3090, false, false, v0_6, true},
      {"vllm-v0-0.6.x-llama-3.1-8b-rtx3090-ctx29k-fails", "llama-3.1-8b", F::bf16, pool | pool_tokens, rtx3090, false, false, v0_6, true},
      {"vllm-v0-dev-2024-12-llama-3-8b-80gb-tp1", "llama-3-8b", F::bf16, weights | pool, h100, true, false, v0_6, true},
      {"vllm-v0-dev-2024-12-llama-3-8b-80gb-tp2", "llama-3-8b", F::bf16, weights, h100, true, false, v0_6, true},
      {"vllm-v0-0.7.x-r1-distill-qwen-14b-2xrtx4090-tp2-gmu098-fails", "qwen2.5-14b", F::bf16, weights | pool_tokens, rtx4090, false, false, v0_7, true},
      // ---- SGLang ----
      {"sglang-qwq-32b-a800-mfs098-ctx4k", "qwen2.5-32b", F::bf16, weights | pool_tokens, a800},
      {"sglang-gpt-oss-20b-a800-mfs098-ctx128k", "gpt-oss-20b", F::mxfp4, pool_tokens, a800},
      {"sglang-qwen3-235b-a22b-fp8-4xh100-tp4-mfs093", "qwen3-235b-a22b", F::fp8, pool_tokens, h100, true, true},
      {"sglang-qwq-32b-4xl4-tp4", "qwen2.5-32b", F::bf16, weights | pool_tokens, l4},
      // ---- llama.cpp ----
      {"llamacpp-b7342-qwen3-coder-30b-a3b-q8_0-a100-40gb-ctx64k-np4", "qwen3-30b-a3b", F::gguf_q8_0, llama_buffers, a100_40},
      {"llamacpp-b5781-vulkan-llama-3.1-8b-q4_0-rtx4080-ctx16k-fa", "llama-3.1-8b", F::gguf_q4_0, llama_kv | llama_model, 15.61},
  };
  return k;
}

const nlohmann::json& cases()
{
  static const nlohmann::json k = [] {
    std::ifstream in(std::string(GPURENT_TEST_DATA) + "/sizing/startup_logs.json");
    return nlohmann::json::parse(in);
  }();
  return k;
}

const nlohmann::json& find_case(std::string_view id)
{
  for (const auto& c : cases()) {
    if (c.at("id").get<std::string>() == id) {
      return c;
    }
  }
  FAIL("no start-up log " << id);
  static const nlohmann::json none;
  return none;
}

std::optional<double> number(const nlohmann::json& obj, const char* key)
{
  if (obj.is_object() && obj.contains(key) && obj.at(key).is_number()) {
    return obj.at(key).get<double>();
  }
  return std::nullopt;
}

Engine engine_of(const nlohmann::json& c)
{
  const auto e = c.at("engine").get<std::string>();
  if (e == "sglang") {
    return Engine::sglang;
  }
  if (e == "llama.cpp") {
    return Engine::llama_cpp;
  }
  return Engine::vllm;
}

JobSpec job_for(const nlohmann::json& c, const LogCheck& chk)
{
  const auto found = find_model(chk.catalogue);
  REQUIRE(found.has_value());
  JobSpec j;
  j.model = *found;
  j.task = Task::serve;
  j.engine = engine_of(c);
  j.weights = chk.format;
  j.gpus = c.at("gpus").is_number() ? c.at("gpus").get<std::uint32_t>() : 1;
  if (j.engine != Engine::llama_cpp && j.gpus > 1) {
    j.shard = Shard::tp;
  }
  const auto& s = c.at("settings");
  j.context = static_cast<std::uint32_t>(number(s, "max_model_len").value_or(j.model.max_context));
  if (const auto util = number(s, "gpu_memory_utilization")) {
    j.gpu_util_permille = static_cast<std::uint32_t>(std::lround(*util * 1000));
    j.gpu_util_given = true;
  }
  if (const auto mfs = number(s, "mem_fraction_static")) {
    j.gpu_util_permille = static_cast<std::uint32_t>(std::lround(*mfs * 1000));
    j.gpu_util_given = true;
  }
  j.max_batched_tokens = static_cast<std::uint32_t>(number(s, "max_num_batched_tokens").value_or(0));
  j.max_seqs = static_cast<std::uint32_t>(number(s, "max_num_seqs").value_or(0));
  if (j.engine == Engine::llama_cpp) {
    const auto n_ctx = static_cast<std::uint32_t>(number(s, "ctx_size").value_or(4096));
    const auto slots = static_cast<std::uint32_t>(number(s, "parallel").value_or(1));
    j.batch = slots;
    j.context = n_ctx / slots;
    j.engine = Engine::llama_cpp;
  }
  const auto kv = s.contains("kv_cache_dtype") && s.at("kv_cache_dtype").is_string() ? s.at("kv_cache_dtype").get<std::string>() : "";
  if (kv == "q8_0") {
    j.kv_cache = KvDtype::q8_0;
  } else if (kv == "fp8") {
    j.kv_cache = KvDtype::fp8;
  }
  j.large_card_defaults = chk.large_card;
  j.nccl_nvls = chk.nvls;
  std::uint32_t release = chk.release;
  if (release == 0 && c.at("engine_version").is_string()) {
    release = parse_engine_release(c.at("engine_version").get<std::string>()).value_or(0);
  }
  j.engine_version = release;
  if (chk.v0 && (j.engine_version == 0 || j.engine_version >= k_vllm_first_v1)) {
    j.engine_version = engine_release(0, 7, 3);  // VLLM_USE_V1=0 on 0.8-0.10 runs the same V0 engine
  }
  return j;
}

struct Row {
  std::string what;
  double measured = 0, estimated = 0, tolerance = 0;
};

std::vector<Row> rows_for(const nlohmann::json& c, const LogCheck& chk)
{
  const JobSpec j = job_for(c, chk);
  const MemoryEstimate e = estimate(j);
  const auto& m = c.at("measured");
  const double gib = static_cast<double>(k_gib), mib = static_cast<double>(k_mib);
  std::vector<Row> out;
  const auto card = static_cast<std::uint64_t>(chk.card_gib * gib);
  const ServePool p = serve_pool(j, e, Bytes{card});
  if ((chk.terms & weights) != 0) {
    out.push_back({"weights", number(m, "weights_gib").value() * gib, static_cast<double>(e.weights.n), 0.03});
  }
  if ((chk.terms & pool) != 0) {
    out.push_back({"pool", number(m, "kv_cache_gib").value() * gib, static_cast<double>(p.kv_pool.n), chk.pool_tol});
  }
  if ((chk.terms & pool_tokens) != 0) {
    double tokens = number(m, "kv_tokens").value_or(0);
    if (tokens == 0) {
      tokens = number(m, "gpu_blocks").value() * 16;
    }
    out.push_back({"pool tokens", tokens, static_cast<double>(p.kv_pool_tokens), chk.pool_tol});
  }
  if ((chk.terms & kv_per_token) != 0) {
    const auto tokens = static_cast<std::uint64_t>(number(m, "kv_tokens").value());
    out.push_back({"kv of its tokens", number(m, "kv_cache_gib").value() * gib, static_cast<double>(kv_cache_bytes(j, tokens, 1).n), 0.02});
  }
  if ((chk.terms & llama_model) != 0) {
    out.push_back({"model buffer", number(m, "model_buffer_mib").value() * mib, static_cast<double>(e.weights.n), 0.03});
  }
  if ((chk.terms & llama_kv) != 0) {
    out.push_back({"KV buffer", number(m, "kv_buffer_mib").value() * mib, static_cast<double>(e.kv_cache.n), 0.02});
  }
  if ((chk.terms & llama_buffers) != 0) {
    out.push_back({"model buffer", number(m, "model_buffer_mib").value() * mib, static_cast<double>(e.weights.n), 0.03});
    out.push_back({"KV buffer", number(m, "kv_buffer_mib").value() * mib, static_cast<double>(e.kv_cache.n), 0.02});
    out.push_back({"compute buffer", number(m, "compute_buffer_mib").value() * mib, static_cast<double>(e.activations.n), 0.10});
  }
  return out;
}

}  // namespace

TEST_CASE("Start-up logs: weights, KV pool and buffers within docs/sizing.md's tolerances", "[sizing][startup_logs]")
{
  const bool print = std::getenv("GPURENT_PRINT_CASES") != nullptr;
  std::size_t checked = 0;
  for (const LogCheck& chk : checks()) {
    const nlohmann::json& c = find_case(chk.id);
    for (const Row& r : rows_for(c, chk)) {
      const double err = (r.estimated - r.measured) / r.measured;
      if (print) {
        const double unit = r.what == "pool tokens" ? 1.0 : static_cast<double>(k_gib);
        const char* name = r.what == "pool tokens" ? " tokens" : " GiB";
        std::cout << chk.id << " | " << r.what << " | measured " << r.measured / unit << name << " | estimated "
                  << r.estimated / unit << name << " | " << err * 100 << "% (tol " << r.tolerance * 100 << "%)\n";
      }
      INFO(chk.id << " " << r.what << ": measured " << r.measured << " B, estimated " << r.estimated << " B, error "
                  << err * 100 << "%");
      CHECK(std::abs(err) <= r.tolerance);
      ++checked;
    }
  }
  CHECK(checked >= 30);
}

TEST_CASE("Start-up logs: every log carries its URL, its lines and its settings", "[sizing][startup_logs]")
{
  REQUIRE(cases().size() >= 30);
  for (const auto& c : cases()) {
    INFO(c.at("id").get<std::string>());
    CHECK(c.at("source_url").get<std::string>().rfind("https://", 0) == 0);
    CHECK_FALSE(c.at("log_lines").empty());
    CHECK(c.at("settings").is_object());
    CHECK(c.at("measured").is_object());
  }
}

TEST_CASE("Engine release: parsed, printed and deciding vLLM's profiling defaults", "[sizing][startup_logs]")
{
  CHECK(parse_engine_release("0.10.1") == engine_release(0, 10, 1));
  CHECK(parse_engine_release("v0.5.5.post3") == engine_release(0, 5, 5));
  CHECK(parse_engine_release("0.9") == engine_release(0, 9, 0));
  CHECK(parse_engine_release("0.10.1.1") == engine_release(0, 10, 1));
  CHECK(parse_engine_release("0.11.0rc2") == engine_release(0, 11, 0));
  CHECK_FALSE(parse_engine_release("").has_value());
  CHECK_FALSE(parse_engine_release("latest").has_value());
  CHECK_FALSE(parse_engine_release("0").has_value());
  CHECK_FALSE(parse_engine_release("0.0").has_value());  // a fuzz finding: it read as 0, "current"
  CHECK_FALSE(parse_engine_release("v0.0.0").has_value());
  CHECK_FALSE(parse_engine_release("123.1").has_value());
  CHECK_FALSE(parse_engine_release("0.1234").has_value());
  CHECK_FALSE(parse_engine_release("0.10 1").has_value());
  CHECK(engine_release_text(engine_release(0, 10, 1)) == "0.10.1");
  // Property: any byte string is either refused or read as a release that prints back to the
  // numbers it started with (what follows them is only a suffix).
  std::uint64_t seed = 0x9e3779b97f4a7c15ULL;
  const std::string alphabet = "0123456789.vVrcpost+-ab \x01\xff";
  for (int n = 0; n < 20000; ++n) {
    std::string s;
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::size_t len = (seed >> 33) % 12;
    for (std::size_t i = 0; i < len; ++i) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      s += alphabet[(seed >> 33) % alphabet.size()];
    }
    const auto r = parse_engine_release(s);
    if (r) {
      const std::string text = engine_release_text(*r);
      INFO(s << " -> " << text);
      CHECK(*r != 0);
      CHECK(parse_engine_release(text) == r);
      const std::string bare = s.front() == 'v' || s.front() == 'V' ? s.substr(1) : s;
      std::uint32_t major = 0;
      for (std::size_t i = 0; i < bare.size() && bare[i] >= '0' && bare[i] <= '9'; ++i) {
        major = major * 10 + static_cast<std::uint32_t>(bare[i] - '0');
      }
      CHECK(*r / 1'000'000 == major);  // the major number is the one typed
    }
  }
  CHECK(engine_release_text(0) == "current");

  JobSpec j;
  j.engine = Engine::vllm;
  j.task = Task::serve;
  j.context = 20000;
  CHECK(vllm_profile_tokens(j) == 2048);
  CHECK(vllm_profile_seqs(j) == 256);
  j.large_card_defaults = true;
  CHECK(vllm_profile_tokens(j) == 8192);
  CHECK(vllm_profile_seqs(j) == 1024);
  j.engine_version = engine_release(0, 6, 4);
  CHECK(vllm_v0(j));
  CHECK(vllm_profile_tokens(j) == 20000);  // no chunked prefill at or below 32k: one whole prompt
  CHECK(vllm_profile_seqs(j) == 256);
  j.context = 40000;
  CHECK(vllm_profile_tokens(j) == 2048);
  j.max_batched_tokens = 4096;
  CHECK(vllm_profile_tokens(j) == 4096);
}

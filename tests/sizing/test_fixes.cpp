// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "sizing/estimate.hpp"
#include "planner/fixes.hpp"
#include "sizing/layout.hpp"
#include "sizing/model_catalog.hpp"
#include "sizing/precision.hpp"

using namespace gpurent;

namespace {

const std::vector<std::string> k_order{
    "reduce-batch", "reduce-context", "mixed-precision", "grad-checkpointing", "quantize-weights",
    "8bit-optimizer", "embeddings-16bit", "activation-offload", "lora", "qlora", "kv-cache-fp8", "kv-cache-q8_0", "fewer-sequences", "cpu-offload",
    "moe-expert-offload", "more-gpus"};

JobSpec job_of(std::string_view name, Task task, Engine engine, WeightFormat w = WeightFormat::bf16)
{
  JobSpec j;
  const auto m = find_model(name);
  REQUIRE(m.has_value());
  j.model = *m;
  j.task = task;
  j.engine = engine;
  j.weights = w;
  return j;
}

std::vector<std::string> ids(const std::vector<Fix>& fixes)
{
  std::vector<std::string> out;
  for (const auto& f : fixes) {
    out.push_back(f.id);
  }
  return out;
}

// Fixes come in the seeds' order, each saves memory, and non-offload savings are recomputed.
void check_fixes(const JobSpec& job, const std::vector<Fix>& fixes, Bytes limit)
{
  REQUIRE_FALSE(fixes.empty());
  std::size_t last = 0;
  for (const Fix& f : fixes) {
    INFO(f.id << ": " << f.description);
    const auto pos = std::find(k_order.begin(), k_order.end(), f.id);
    REQUIRE(pos != k_order.end());
    const auto idx = static_cast<std::size_t>(pos - k_order.begin());
    CHECK(idx >= last);
    last = idx;
    CHECK(f.saves.n > 0);
    CHECK_FALSE(f.flags.empty());
    CHECK_FALSE(f.description.empty());
    if (f.id != "cpu-offload" && f.id != "moe-expert-offload") {
      CHECK(f.saves == estimate(job).total() - estimate(f.modified).total());
      CHECK(f.fits_alone == (estimate(f.modified).total() <= limit));
    } else {
      CHECK(f.fits_alone == (estimate(job).total() - f.saves <= limit));
    }
  }
}

const Fix* find_fix(const std::vector<Fix>& fixes, std::string_view id)
{
  for (const auto& f : fixes) {
    if (f.id == id) {
      return &f;
    }
  }
  return nullptr;
}

}  // namespace

TEST_CASE("Fixes: none when the job fits", "[sizing][fixes]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q4_k_m);
  CHECK(suggest_fixes(j, gib_to_bytes(22)).empty());
}

TEST_CASE("Fixes: vLLM serving a 70B model on one 48 GB card", "[sizing][fixes]")
{
  JobSpec j = job_of("llama-3.1-70b", Task::serve, Engine::vllm);
  j.context = 32768;
  j.batch = 8;
  const Bytes limit = fit_limit_for(j, gib_to_bytes(44.5));
  const auto fixes = suggest_fixes(j, limit);
  check_fixes(j, fixes, limit);
  const auto got = ids(fixes);
  CHECK(got == std::vector<std::string>{"reduce-context", "quantize-weights", "kv-cache-fp8", "fewer-sequences",
                                        "cpu-offload", "more-gpus"});
  const Fix* more = find_fix(fixes, "more-gpus");
  REQUIRE(more != nullptr);
  CHECK(more->fits_alone);
  // A layout vLLM runs: tensor parallel divides the 64 heads and the 8 KV heads, pipeline stages
  // take the rest of the GPUs.
  const JobSpec& m = more->modified;
  const std::uint32_t tp = tp_degree(m);
  CHECK(tp * m.pipeline == m.gpus);
  CHECK(j.model.heads % tp == 0);
  CHECK((j.model.kv_heads % tp == 0 || tp % j.model.kv_heads == 0));
  CHECK(more->flags.at("vllm") == (m.pipeline > 1 ? "--tensor-parallel-size " + std::to_string(tp) +
                                                         " --pipeline-parallel-size " + std::to_string(m.pipeline)
                                                   : "--tensor-parallel-size " + std::to_string(tp)));
  // The smallest count that fits: one fewer does not (on the layout vLLM would use there).
  JobSpec fewer = m;
  fewer.gpus -= 1;
  const auto laid = feasible_layout(fewer);
  REQUIRE(laid.has_value());
  CHECK(estimate(*laid).total() > limit);
  // Only the counts a provider sells are tried.
  const std::vector<std::uint32_t> sold{1, 2, 4, 8};
  const auto sold_fixes = suggest_fixes(j, limit, sold);
  const Fix* sold_more = find_fix(sold_fixes, "more-gpus");
  REQUIRE(sold_more != nullptr);
  CHECK(std::find(sold.begin(), sold.end(), sold_more->modified.gpus) != sold.end());
  CHECK(find_fix(fixes, "kv-cache-fp8")->flags.at("vllm") == "--kv-cache-dtype fp8");
}

TEST_CASE("Fixes: the largest context and batch that fit", "[sizing][fixes]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q8_0);
  j.context = 131072;
  j.batch = 4;
  const Bytes limit = gib_to_bytes(22);
  const auto fixes = suggest_fixes(j, limit);
  check_fixes(j, fixes, limit);
  const Fix* ctx = find_fix(fixes, "reduce-context");
  REQUIRE(ctx != nullptr);
  CHECK(ctx->fits_alone);
  CHECK(ctx->modified.context % 256 == 0);
  JobSpec bigger = ctx->modified;
  bigger.context += 256;
  CHECK(estimate(bigger).total() > limit);
  CHECK(ctx->flags.at("llama.cpp") == "-c " + std::to_string(ctx->modified.context * 4) + " -np 4");
  CHECK(ctx->flags.at("ollama") == "OLLAMA_CONTEXT_LENGTH=" + std::to_string(ctx->modified.context));
  CHECK(ctx->flags.at("vllm") == "--max-model-len " + std::to_string(ctx->modified.context));
  const Fix* kv = find_fix(fixes, "kv-cache-q8_0");
  REQUIRE(kv != nullptr);
  CHECK(kv->flags.at("llama.cpp").find("--cache-type-k q8_0 --cache-type-v q8_0") != std::string::npos);
  CHECK(kv->flags.at("ollama").find("OLLAMA_KV_CACHE_TYPE=q8_0") != std::string::npos);
  const Fix* seqs = find_fix(fixes, "fewer-sequences");
  REQUIRE(seqs != nullptr);
  CHECK(seqs->modified.batch < 4);
  const Fix* q = find_fix(fixes, "quantize-weights");
  REQUIRE(q != nullptr);
  CHECK(is_gguf(q->modified.weights));
  const Fix* off = find_fix(fixes, "cpu-offload");
  REQUIRE(off != nullptr);
  CHECK(off->flags.at("llama.cpp").rfind("-ngl ", 0) == 0);
}

TEST_CASE("Fixes: full fine-tuning an 8B model on one 24 GB card", "[sizing][fixes]")
{
  JobSpec j = job_of("llama-3.1-8b", Task::train, Engine::transformers);
  j.context = 2048;
  j.batch = 8;
  const Bytes limit = gib_to_bytes(22.4);
  const auto fixes = suggest_fixes(j, limit);
  check_fixes(j, fixes, limit);
  CHECK(ids(fixes) == std::vector<std::string>{"reduce-batch", "reduce-context", "grad-checkpointing",
                                               "8bit-optimizer", "activation-offload", "lora", "qlora", "cpu-offload",
                                               "more-gpus"});
  const Fix* batch = find_fix(fixes, "reduce-batch");
  CHECK(batch->modified.batch < 8);
  CHECK(batch->flags.at("transformers").find("gradient_accumulation_steps=") != std::string::npos);
  CHECK(find_fix(fixes, "grad-checkpointing")->flags.at("transformers") == "gradient_checkpointing=True");
  CHECK(find_fix(fixes, "grad-checkpointing")->flags.at("torchtune") == "enable_activation_checkpointing=True");
  CHECK(find_fix(fixes, "8bit-optimizer")->flags.at("transformers") == "optim=\"paged_adamw_8bit\"");
  CHECK(find_fix(fixes, "qlora")->saves > find_fix(fixes, "lora")->saves);
  CHECK(find_fix(fixes, "qlora")->modified.weights == WeightFormat::nf4);
}

TEST_CASE("Fixes: fp32 training gets mixed precision, MoE on llama.cpp gets expert offload", "[sizing][fixes]")
{
  JobSpec j = job_of("qwen2.5-7b", Task::train, Engine::transformers, WeightFormat::fp32);
  j.context = 4096;
  const Bytes limit = gib_to_bytes(40);
  const auto fixes = suggest_fixes(j, limit);
  check_fixes(j, fixes, limit);
  REQUIRE(find_fix(fixes, "mixed-precision") != nullptr);
  CHECK(find_fix(fixes, "mixed-precision")->flags.at("transformers") == "bf16=True");

  JobSpec moe = job_of("qwen3-30b-a3b", Task::infer, Engine::llama_cpp, WeightFormat::gguf_q8_0);
  moe.context = 16384;
  const Bytes small = gib_to_bytes(22);
  const auto mf = suggest_fixes(moe, small);
  check_fixes(moe, mf, small);
  const Fix* ex = find_fix(mf, "moe-expert-offload");
  REQUIRE(ex != nullptr);
  CHECK(ex->fits_alone);
  CHECK(ex->flags.at("llama.cpp").find("cpu-moe") != std::string::npos);
}
